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

With `--compare`, the capacity run is repeated for the server alternatives (asyncio's event
loop instead of uvloop; h11 instead of httptools) so that DESIGN.md's table can be re-measured;
`--repeat N` interleaves N runs of each and prints the median.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from epbench.core.documents import load_document  # noqa: E402
from epbench.core.metrics.percentiles import percentile  # noqa: E402
from epbench.core.paths import shipped_endpoints_dir  # noqa: E402
from epbench.runner.emulator import start_emulator  # noqa: E402

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


def request_bytes(rid: str, tokens: int) -> bytes:
    body = json.dumps({"model": "emulated-8b", "stream": True, "max_tokens": tokens,
                       "messages": [{"role": "user", "content": f"capacity probe {rid} " * 8}]})
    head = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"x-epbench-request-id: {rid}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n")
    return head.encode() + body.encode()


class StreamClient(asyncio.Protocol):
    """One keep-alive connection, one streamed request at a time; notes the first token's
    arrival (`perf_counter_ns`, the emulator's clock) and the end of the chunked body."""

    def __init__(self, firsts: dict[str, int]) -> None:
        self.firsts = firsts
        self.transport: asyncio.Transport | None = None
        self.rid = ""
        self.tail = b""
        self.done: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def send(self, rid: str, payload: bytes) -> asyncio.Future[None]:
        self.rid, self.tail = rid, b""
        self.done = asyncio.get_running_loop().create_future()
        assert self.transport is not None
        self.transport.write(payload)
        return self.done

    def data_received(self, data: bytes) -> None:
        if self.rid not in self.firsts and b'"content":" ' in data:
            self.firsts[self.rid] = time.perf_counter_ns()
        self.tail = (self.tail + data)[-5:]
        if self.tail == b"0\r\n\r\n" and self.done is not None and not self.done.done():
            self.done.set_result(None)


async def drive(port: int, streams: int, tokens: int, seconds: float, pid: int
                ) -> dict[str, Any]:
    """Closed loop: `streams` connections, requests back to back, `seconds` after a warm-up."""
    loop = asyncio.get_running_loop()
    firsts: dict[str, int] = {}
    counted = {"requests": 0}
    measuring = False
    stop_at = time.monotonic() + 1.0 + seconds

    async def worker(w: int) -> None:
        transport, client = await loop.create_connection(
            lambda: StreamClient(firsts), "127.0.0.1", port)
        i = 0
        while time.monotonic() < stop_at:
            await client.send(f"w{w}-{i}", request_bytes(f"w{w}-{i}", tokens))
            i += 1
            if measuring:
                counted["requests"] += 1
        transport.close()

    tasks = [asyncio.create_task(worker(w)) for w in range(streams)]
    await asyncio.sleep(1.0)  # warm-up: connections open, caches warm
    measuring = True
    cpu0, t0 = cpu_seconds(pid), time.monotonic()
    await asyncio.gather(*tasks)
    cpu1, t1 = cpu_seconds(pid), time.monotonic()
    wall, cpu = t1 - t0, max(cpu1 - cpu0, 1e-9)
    done_tokens = counted["requests"] * tokens
    return {"wall_s": wall, "server_cpu_s": cpu, "requests": counted["requests"],
            "tokens_per_s": done_tokens / wall, "requests_per_s": counted["requests"] / wall,
            "tokens_per_cpu_s": done_tokens / cpu,
            "requests_per_cpu_s": counted["requests"] / cpu, "cpu_share": cpu / wall,
            "firsts": firsts}


def timing_error_ms(firsts: dict[str, int], records: list[dict[str, Any]]) -> list[float]:
    """Client first-token arrival minus the emulator's t_first_byte_ns, per request, sorted."""
    server = {r["request_id"]: r["t_first_byte_ns"] for r in records}
    return sorted((t - server[rid]) / 1e6 for rid, t in firsts.items()
                  if server.get(rid) is not None)


def run(block: dict[str, Any], streams: int, tokens: int, seconds: float,
        env: dict[str, str] | None = None) -> dict[str, Any]:
    saved = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    try:
        with start_emulator(endpoint(block)) as emu:
            result = run_loop(drive(emu.port, streams, tokens, seconds, emu.pid))
            result["records"] = emu.requests()
            return result
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run_loop(coroutine: Any) -> Any:
    """The client on uvloop when installed: the lean client should not be the bottleneck."""
    try:
        import uvloop

        return uvloop.run(coroutine)
    except ImportError:  # pragma: no cover
        return asyncio.run(coroutine)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--streams", type=int, default=32)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=1,
                        help="capacity runs per variant, interleaved; the median is printed")
    parser.add_argument("--compare", action="store_true",
                        help="also measure asyncio instead of uvloop, h11 instead of httptools")
    args = parser.parse_args()
    flat = {"ttft_ms": 0, "tpot_ms": 0, "prefill_ms_per_1k_tokens": 0, "jitter": 0,
            "slots": 4096}
    variants: list[tuple[str, dict[str, str]]] = [("shipped (uvloop+httptools)", {})]
    if args.compare:
        variants += [("asyncio+httptools", {"EPBENCH_EMULATOR_LOOP": "asyncio"}),
                     ("uvloop+h11", {"EPBENCH_EMULATOR_HTTP": "h11"})]
    capacity = 0.0
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in variants}
    for _ in range(args.repeat):  # interleaved, so a burst of load elsewhere hits all alike
        for name, env in variants:
            runs[name].append(run(flat, args.streams, args.tokens, args.seconds, env))
    for name, _ in variants:
        r = sorted(runs[name], key=lambda x: x["tokens_per_cpu_s"])[len(runs[name]) // 2]
        capacity = capacity or r["tokens_per_cpu_s"]
        spread = ", ".join(f"{x['tokens_per_cpu_s']:,.0f}" for x in runs[name])
        print(f"capacity {name}: {r['tokens_per_cpu_s']:,.0f} streamed tokens per server "
              f"CPU-second, {r['requests_per_cpu_s']:,.0f} requests per CPU-second "
              f"(wall: {r['tokens_per_s']:,.0f} tokens/s, {r['requests_per_s']:,.1f} req/s, "
              f"server CPU share {r['cpu_share']:.2f}, {args.streams} streams x "
              f"{args.tokens} tokens; median of runs: {spread})")
    harness = {"ttft_ms": 0, "tpot_ms": 5, "tpot_growth": 0, "prefill_ms_per_1k_tokens": 0,
               "jitter": 0, "slots": 64}
    r = run(harness, 16, 64, args.seconds)
    steps = sorted((x["t_last_byte_ns"] - x["t_first_byte_ns"]) / 63e6 for x in r["records"]
                   if x["completion_tokens"] == 64)
    print(f"harness load (16 streams x 64 tokens, ITL 5 ms): {r['tokens_per_s']:,.0f} tokens/s, "
          f"{r['requests_per_s']:,.1f} req/s; emulator CPU share of one core {r['cpu_share']:.2f}, "
          f"{r['tokens_per_s'] / capacity:.0%} of its one-core capacity; server ITL p50 "
          f"{percentile(steps, 50):.2f} ms, p99 {percentile(steps, 99):.2f} ms")
    shipped = {"seed": 7}  # the shipped emulator.yaml as it is
    r = run(shipped, 64, 64, args.seconds)
    errors = timing_error_ms(r["firsts"], r["records"])
    print(f"timing error at concurrency 64 (shipped settings, lean client): "
          f"p50 {percentile(errors, 50):.3f} ms, p99 {percentile(errors, 99):.3f} ms, "
          f"n={len(errors)} (client first-token arrival minus the emulator's t_first_byte_ns)")


if __name__ == "__main__":
    main()
