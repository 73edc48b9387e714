"""A real inference server that epbench did not write: llama.cpp, through llama-cpp-python.

`make_tiny_gguf(path)` writes a tiny llama model with seeded random weights (2 layers, 64 wide,
a SentencePiece-style vocabulary with the 256 byte-fallback tokens, a chatml chat template;
about 0.5 MB) with the `gguf` package: nothing is downloaded. `tiny_gguf()` caches it under
~/.cache/epbench-test/ (or $EPBENCH_TEST_CACHE). `llama_server()` starts
`python -m llama_cpp.server` on a free loopback port, waits until `/v1/models` answers, yields
the base URL (ending in /v1) and stops the server.

llama-cpp-python runs from a virtualenv of its own (tests/server_envs.py `LLAMA`), built once
outside the checkout. When it cannot be built or the server does not start, the tests call
`need()`: a skip on a laptop, a failure under CI=true.

The model's greedy output is random but deterministic. Its end-of-text tokens (`</s>`,
`<|im_end|>`) get all-zero output rows, so their logit is 0 while the best random logit is
well above 0: a greedy stream never ends early and always runs to `max_tokens`. The byte
tokens 0x80..0xFF, which alone make incomplete UTF-8 (llama.cpp then sends an empty-content
chunk), get damped output rows, so they occur without taking over whole answers.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from tests.conftest import need
from tests.server_envs import LLAMA, BuildFailed, server_environ

MODEL_NAME = "tiny-llama"
N_EMBD = 64
N_LAYERS = 2
N_HEADS = 4
N_FF = 128
N_CTX_TRAIN = 4096
SEED = 20261129
# Bumped whenever make_tiny_gguf changes what it writes, so the cache never serves a stale file.
FORMAT_VERSION = 2
BYTE_DAMPING = 0.8

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

# gguf token types (llama.cpp's llama_token_type)
_NORMAL, _UNKNOWN, _CONTROL, _BYTE = 1, 2, 3, 6


def _vocabulary() -> tuple[list[str], list[float], list[int]]:
    """Tokens, scores and types: specials, the 256 byte tokens, then printable ASCII pieces."""
    tokens = ["<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"]
    types = [_UNKNOWN, _CONTROL, _CONTROL, _CONTROL, _CONTROL]
    tokens += [f"<0x{b:02X}>" for b in range(256)]
    types += [_BYTE] * 256
    # "▁" is SentencePiece's word-start marker (a space); the rest are single printable chars,
    # so any ASCII text tokenizes one token per character and anything else falls back to bytes.
    pieces = ["▁"] + [chr(c) for c in range(0x21, 0x7F)]
    tokens += pieces
    types += [_NORMAL] * len(pieces)
    scores = [0.0] * len(tokens)
    return tokens, scores, types


def make_tiny_gguf(path: Path) -> Path:
    """Write the tiny random-weights llama model to `path` (atomically) and return `path`."""
    import gguf
    import numpy as np

    tokens, scores, types = _vocabulary()
    n_vocab = len(tokens)
    rng = np.random.default_rng(SEED)

    def weight(rows: int, cols: int) -> np.ndarray:
        return (rng.standard_normal((rows, cols)) / np.sqrt(cols)).astype(np.float32)

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    writer = gguf.GGUFWriter(str(tmp), "llama")
    writer.add_name("epbench tiny random llama")
    writer.add_context_length(N_CTX_TRAIN)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(N_LAYERS)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEADS)
    writer.add_head_count_kv(N_HEADS)
    writer.add_rope_dimension_count(N_EMBD // N_HEADS)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_vocab_size(n_vocab)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_unk_token_id(0)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)
    writer.add_chat_template(CHATML_TEMPLATE)

    embeddings = rng.standard_normal((n_vocab, N_EMBD)).astype(np.float32)
    output = weight(n_vocab, N_EMBD)
    output[[2, 3, 4]] = 0.0  # never end early: see the module docstring
    # Byte tokens 0x80..0xFF only make partial UTF-8 (an empty-content chunk). Damped, they
    # still occur now and then, but a greedy answer does not get stuck on them.
    high_bytes = [5 + b for b in range(0x80, 0x100)]
    output[high_bytes] *= BYTE_DAMPING
    writer.add_tensor("token_embd.weight", embeddings)
    writer.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    writer.add_tensor("output.weight", output)
    for layer in range(N_LAYERS):
        block = f"blk.{layer}"
        writer.add_tensor(f"{block}.attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(f"{block}.{name}.weight", weight(N_EMBD, N_EMBD))
        writer.add_tensor(f"{block}.ffn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        writer.add_tensor(f"{block}.ffn_gate.weight", weight(N_FF, N_EMBD))
        writer.add_tensor(f"{block}.ffn_up.weight", weight(N_FF, N_EMBD))
        writer.add_tensor(f"{block}.ffn_down.weight", weight(N_EMBD, N_FF))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    tmp.replace(path)
    return path


def cache_dir() -> Path:
    """Where generated test models live between runs."""
    configured = os.environ.get("EPBENCH_TEST_CACHE")
    if configured:
        return Path(configured)
    return Path.home() / ".cache" / "epbench-test"


def tiny_gguf() -> Path:
    """The cached tiny model, written on first use."""
    key = hashlib.sha256(
        f"{FORMAT_VERSION}:{SEED}:{N_EMBD}:{N_LAYERS}:{N_HEADS}:{N_FF}:{BYTE_DAMPING}".encode()
    ).hexdigest()[:12]
    path = cache_dir() / f"tiny-llama-{key}.gguf"
    if not path.is_file():
        make_tiny_gguf(path)
    return path


def llama_python() -> Path:
    """The interpreter of llama-cpp-python's own virtualenv (tests/server_envs.py: built once,
    in the background from collection on); `need()` when it cannot be built."""
    try:
        return LLAMA.python()
    except BuildFailed as error:
        need(f"llama-cpp-python[server] could not be built: {error}")
        raise


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def llama_server(
    *,
    chat_format: str = "chatml-function-calling",
    n_ctx: int = 2048,
    model: Path | None = None,
    interrupt_requests: bool = False,
    start_timeout_s: float = 60.0,
) -> Iterator[str]:
    """Run llama-cpp-python's OpenAI-compatible server on loopback; yield ".../v1".

    llama-cpp-python decodes one sequence at a time. With `interrupt_requests=True` (its own
    default) a new request cuts the running stream off mid-body; the default here is False,
    so concurrent requests queue as they do on a real serving engine.

    Calls `need()` (skip locally, fail under CI=true) when llama_cpp is missing or the server
    does not answer `/v1/models` within `start_timeout_s`.
    """
    python = llama_python()
    model_path = model or tiny_gguf()
    port = free_port()
    command = [
        str(python), "-m", "llama_cpp.server",
        "--model", str(model_path),
        "--model_alias", MODEL_NAME,
        "--chat_format", chat_format,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", str(n_ctx),
        "--n_threads", "1",
        "--n_threads_batch", "1",
        "--interrupt_requests", str(interrupt_requests),
    ]
    base_url = f"http://127.0.0.1:{port}/v1"
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                env=server_environ())
        try:
            deadline = time.monotonic() + start_timeout_s
            while True:
                if proc.poll() is not None:
                    log.seek(0)
                    tail = log.read()[-2000:].decode(errors="replace")
                    need(f"llama_cpp.server exited with {proc.returncode}: {tail}")
                try:
                    if httpx.get(f"{base_url}/models", timeout=1.0).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    need(f"llama_cpp.server did not answer /v1/models within {start_timeout_s}s")
                time.sleep(0.1)
            yield base_url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
