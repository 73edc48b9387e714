"""A server that epbench did not write for the two native APIs: LiteLLM's proxy, which speaks
Anthropic Messages (`/v1/messages`) and OpenAI Responses (`/v1/responses`) and translates both
to chat completions, in front of llama-cpp-python's server with the tiny random-weights model
of `tests/llama_fixture.py`. Nothing is downloaded: the model is made locally, and LiteLLM
uses its bundled model-cost map (`LITELLM_LOCAL_MODEL_COST_MAP`).

The proxy runs from the `litellm` executable beside the interpreter (the `test` extra installs
`litellm[proxy]`), or the one named by $EPBENCH_LITELLM, or on PATH. Its master key is made per
run and handed to epbench through the variable the endpoint file names, as a real key would
be: `x-api-key` on Messages, `Authorization: Bearer` on Responses.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.conftest import need
from tests.llama_fixture import MODEL_NAME, free_port, llama_server

KEY_ENV = "EPBENCH_TEST_LITELLM_KEY"
# llamafile/ is LiteLLM's provider for a generic OpenAI-compatible chat server: it bridges
# /v1/responses to chat completions (openai/ and hosted_vllm/ call the upstream's own
# /v1/responses, which llama-cpp-python does not have).
PROVIDER = "llamafile"


def litellm_executable() -> str | None:
    explicit = os.environ.get("EPBENCH_LITELLM")
    if explicit:
        return explicit
    beside = Path(sys.executable).parent / "litellm"
    if beside.is_file():
        return str(beside)
    return shutil.which("litellm")


@contextmanager
def litellm_proxy() -> Iterator[tuple[str, str]]:
    """(base URL ending in /v1, master key) of a LiteLLM proxy in front of llama.cpp."""
    executable = litellm_executable()
    if executable is None:
        need("LiteLLM's proxy is not installed: pip install 'litellm[proxy]' (the test extra)")
    assert executable is not None
    with llama_server() as llama_url, tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "litellm.yaml"
        config.write_text(
            "model_list:\n"
            f"  - model_name: {MODEL_NAME}\n"
            "    litellm_params:\n"
            f"      model: {PROVIDER}/{MODEL_NAME}\n"
            f"      api_base: {llama_url}\n"
            "      api_key: none\n"
            "router_settings: {disable_cooldowns: true}\n"
            "litellm_settings: {num_retries: 0, drop_params: true}\n",
            encoding="utf-8",
        )
        key = "sk-" + secrets.token_hex(24)
        port = free_port()
        env = {**os.environ, "LITELLM_MASTER_KEY": key, "LITELLM_LOCAL_MODEL_COST_MAP": "True",
               "LITELLM_LOG": "ERROR", "NO_PROXY": "*"}
        log = Path(folder) / "litellm.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [executable, "--config", str(config), "--host", "127.0.0.1", "--port", str(port),
                 "--num_workers", "1"],
                env=env, stdout=out, stderr=subprocess.STDOUT, cwd=folder,
            )
            try:
                base = f"http://127.0.0.1:{port}"
                deadline = time.monotonic() + 180
                while time.monotonic() < deadline:
                    if proc.poll() is not None:
                        need(f"LiteLLM's proxy exited at start: {log.read_text()[-400:]}")
                    try:
                        if httpx.get(base + "/health/liveliness", timeout=2).status_code == 200:
                            break
                    except httpx.HTTPError:
                        pass
                    time.sleep(0.5)
                else:
                    need("LiteLLM's proxy did not answer within 180 s")
                yield base + "/v1", key
            finally:
                proc.terminate()
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)
