"""The emulator in a child process, so it never competes with the client's event loop.

    with start_emulator(endpoint_doc) as emu:
        httpx.post(emu.base_url + "/chat/completions", json=...)

The parent validates the endpoint document, starts `python -m epbench.runner.emulator`, and writes
one line of JSON (the document, workload folders, port) to the child's standard input. The
child binds 127.0.0.1 (port 0: a free one), prints `EPBENCH_EMULATOR port=N`, and serves.
The parent keeps the child's standard input open: when it closes (stop(), or the parent dies,
even by SIGKILL) the child shuts down, so no emulator outlives its run.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from epbench.core.errors import InputError, RunError
from epbench.runner.emulator.settings import settings_from_endpoint

HOST = "127.0.0.1"
START_TIMEOUT_S = 20.0
READY_PREFIX = "EPBENCH_EMULATOR "


class EmulatorProcess:
    """A running emulator child: its URLs, its stats, and stop()."""

    def __init__(self, proc: subprocess.Popen[bytes], port: int) -> None:
        self.proc = proc
        self.port = port
        self.root_url = f"http://{HOST}:{port}"
        self.base_url = f"{self.root_url}/v1"
        self._client: Any = None

    def _http(self) -> Any:
        """One httpx client for the helpers below (building one costs tens of milliseconds)."""
        if self._client is None:
            import httpx

            self._client = httpx.Client(base_url=self.root_url, timeout=30.0)
        return self._client

    @property
    def pid(self) -> int:
        return self.proc.pid

    def running(self) -> bool:
        return self.proc.poll() is None

    def _get(self, path: str) -> Any:
        response = self._http().get(path)
        response.raise_for_status()
        return response.json()

    def stats(self) -> dict[str, Any]:
        """GET /emulator/stats."""
        result: dict[str, Any] = self._get("/emulator/stats")
        return result

    def requests(self) -> list[dict[str, Any]]:
        """GET /emulator/requests."""
        result: list[dict[str, Any]] = self._get("/emulator/requests")
        return result

    def reset(self) -> None:
        """POST /emulator/reset."""
        self._http().post("/emulator/reset").raise_for_status()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Close the child's standard input (it shuts down), then terminate or kill if needed."""
        if self._client is not None:
            self._client.close()
            self._client = None
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                self.proc.wait(2.0)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def __enter__(self) -> EmulatorProcess:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def start_emulator(
    endpoint_doc: dict[str, Any], workload_dirs: list[Path] | None = None, port: int = 0
) -> EmulatorProcess:
    """Start the emulator on 127.0.0.1 in a child process and return once it answers.

    InputError when the document is not a valid endpoint with an `emulator:` block;
    RunError when the child does not come up.
    """
    settings_from_endpoint(endpoint_doc, f"endpoint {endpoint_doc.get('id', '?')}")
    import epbench.runner

    root = str(Path(epbench.runner.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    proc = subprocess.Popen(
        [sys.executable, "-m", "epbench.runner.emulator"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=root,
    )
    assert proc.stdin is not None and proc.stdout is not None
    config = {"endpoint": endpoint_doc, "port": port,
              # resolved here: the child runs in the package's folder, not the user's
              "workload_dirs": [str(Path(d).resolve()) for d in workload_dirs]
              if workload_dirs else None}
    proc.stdin.write(json.dumps(config, default=str).encode() + b"\n")
    proc.stdin.flush()
    line = _read_line(proc, START_TIMEOUT_S)
    if line.startswith(READY_PREFIX + "error="):
        _reap(proc)
        raise InputError(line[len(READY_PREFIX + "error="):])
    if not line.startswith(READY_PREFIX + "port="):
        _reap(proc)
        raise RunError(f"the emulator did not start (exit code {proc.poll()}): see its "
                       "messages above")
    emulator = EmulatorProcess(proc, int(line[len(READY_PREFIX + "port="):]))
    _wait_ready(emulator)
    return emulator


def _read_line(proc: subprocess.Popen[bytes], timeout_s: float) -> str:
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    deadline = time.monotonic() + timeout_s
    data = b""
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        part = os.read(fd, 4096)
        if not part:
            break
        data += part
    return data.decode("utf-8", "replace").strip()


def _wait_ready(emulator: EmulatorProcess, timeout_s: float = START_TIMEOUT_S) -> None:
    import httpx

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if emulator._http().get("/v1/models", timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if not emulator.running() or time.monotonic() > deadline:
            emulator.stop()
            raise RunError(f"the emulator on {emulator.root_url} did not answer in {timeout_s} s")
        time.sleep(0.05)


def _reap(proc: subprocess.Popen[bytes]) -> None:
    if proc.stdin is not None:
        proc.stdin.close()
    try:
        proc.wait(5.0)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()
