"""How much load the endpoint emulator can serve on one core, and what the harness benchmark
costs it.

    python bench/emulator_capacity.py [--seconds 5] [--streams 32] [--tokens 64]

Two measurements, each against a fresh emulator child process (one process, one thread: one
core at most), driven by a lean raw-socket asyncio client in this process:

1. capacity: no sleeps in the model (ttft_ms = tpot_ms = 0), `--streams` keep-alive
   connections streaming `--tokens`-token completions back to back. The emulator's own CPU
   seconds (utime + stime from /proc/<pid>/stat) over the window give its capacity on one core:
   tokens per CPU-second and requests per CPU-second. (Wall-clock rates are printed too, but on
   a shared machine the client competes for the same cores, so CPU accounting is the figure.)
2. harness load: the harness benchmark's shape (16 streams, 64 tokens, 5 ms per token); the
   emulator's CPU share of one core over the window must stay well below 1 for the emulator
   not to be the bottleneck.

With `--compare`, the capacity run is repeated for the server alternatives (asyncio event loop
instead of uvloop; h11 instead of httptools) so that DESIGN.md's table can be re-measured.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from epbench.documents import load_document  # noqa: E402
from epbench.paths import shipped_endpoints_dir  # noqa: E402
from workloads.emulator import start_emulator  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, in seconds."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def endpoint(block: dict[str, Any]) -> dict[str, Any]:
    document: dict[str, Any] = load_document(shipped_endpoints_dir() / "emulator.yaml")
    document["emulator"] = {**document["emulator"], **block}
    return document


def request_bytes(i: int, tokens: int) -> bytes:
    body = json.dumps({"model": "emulated-8b", "stream": True, "max_tokens": tokens,
                       "messages": [{"role": "user", "content": f"capacity probe {i} " * 8}]})
    head = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n")
    return head.encode() + body.encode()


async def stream_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      payload: bytes) -> int:
    """Send one request, read its chunked SSE body to the end; returns content chunks seen."""
    writer.write(payload)
    head = await reader.readuntil(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(head.split(b"\r\n", 1)[0].decode())
    events = 0
    while True:
        size = int((await reader.readuntil(b"\r\n"))[:-2], 16)
        if size == 0:
            await reader.readexactly(2)
            break
        chunk = await reader.readexactly(size + 2)
        events += chunk.count(b"data: ")
    return events - 3  # the role chunk, the finish chunk and [DONE] carry no token


async def drive(port: int, streams: int, tokens: int, seconds: float, pid: int
                ) -> dict[str, float]:
    stop_at = 0.0
    counted = {"requests": 0, "tokens": 0}

    async def worker(w: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        i = 0
        while time.monotonic() < stop_at:
            got = await stream_once(reader, writer, request_bytes(w * 1_000_000 + i, tokens))
            if got != tokens:
                raise RuntimeError(f"expected {tokens} tokens, got {got}")
            i += 1
            if started:
                counted["requests"] += 1
                counted["tokens"] += got
        writer.close()

    started = False
    stop_at = time.monotonic() + 1.0 + seconds
    tasks = [asyncio.create_task(worker(w)) for w in range(streams)]
    await asyncio.sleep(1.0)  # warm-up: connections open, caches warm
    started = True
    cpu0, t0 = cpu_seconds(pid), time.monotonic()
    await asyncio.gather(*tasks)
    cpu1, t1 = cpu_seconds(pid), time.monotonic()
    wall, cpu = t1 - t0, max(cpu1 - cpu0, 1e-9)
    return {"wall_s": wall, "server_cpu_s": cpu, **counted,
            "tokens_per_s": counted["tokens"] / wall, "requests_per_s": counted["requests"] / wall,
            "tokens_per_cpu_s": counted["tokens"] / cpu,
            "requests_per_cpu_s": counted["requests"] / cpu, "cpu_share": cpu / wall}


def run(block: dict[str, Any], streams: int, tokens: int, seconds: float,
        env: dict[str, str] | None = None) -> dict[str, float]:
    saved = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    try:
        with start_emulator(endpoint(block)) as emu:
            return asyncio.run(drive(emu.port, streams, tokens, seconds, emu.pid))
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--streams", type=int, default=32)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--compare", action="store_true",
                        help="also measure asyncio instead of uvloop, h11 instead of httptools")
    args = parser.parse_args()
    flat = {"ttft_ms": 0, "tpot_ms": 0, "prefill_ms_per_1k_tokens": 0, "jitter": 0,
            "slots": 4096}
    variants = [("uvloop+httptools (shipped)", {})]
    if args.compare:
        variants += [("asyncio+httptools", {"EPBENCH_EMULATOR_LOOP": "asyncio"}),
                     ("uvloop+h11", {"EPBENCH_EMULATOR_HTTP": "h11"})]
    capacity = 0.0
    for name, env in variants:
        r = run(flat, args.streams, args.tokens, args.seconds, env)
        capacity = capacity or r["tokens_per_cpu_s"]
        print(f"capacity {name}: {r['tokens_per_cpu_s']:,.0f} streamed tokens per server "
              f"CPU-second, {r['requests_per_cpu_s']:,.0f} requests per CPU-second "
              f"(wall: {r['tokens_per_s']:,.0f} tokens/s, {r['requests_per_s']:,.1f} req/s, "
              f"server CPU share {r['cpu_share']:.2f}, {args.streams} streams x "
              f"{args.tokens} tokens)")
    harness = {"ttft_ms": 0, "tpot_ms": 5, "tpot_growth": 0, "prefill_ms_per_1k_tokens": 0,
               "jitter": 0, "slots": 64}
    r = run(harness, 16, 64, args.seconds)
    print(f"harness load (16 streams x 64 tokens, ITL 5 ms): {r['tokens_per_s']:,.0f} tokens/s, "
          f"{r['requests_per_s']:,.1f} req/s; emulator CPU share of one core {r['cpu_share']:.2f}, "
          f"{r['tokens_per_s'] / capacity:.0%} of its one-core capacity")


if __name__ == "__main__":
    main()
