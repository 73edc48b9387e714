"""The runner's peak memory against streams of the largest deltas the caps allow.

A loopback server (tests/hostile_servers.py, `deltas-<count>-<size>`) sends `streams`
concurrent answers of `count` text deltas, each event `size` bytes; the client runs in a child
process of its own (one `EndpointClient`, as a run has), whose peak resident memory is its
VmHWM from /proc/self/status (ru_maxrss would carry the forking parent's peak across exec).
Used by tests/hostile/test_stream_memory.py and bench/stream_memory.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from tests.hostile_servers import hostile_server

ROOT = Path(__file__).resolve().parent.parent
MIB = 1024 * 1024

CLIENT = textwrap.dedent(
    """
    import asyncio, json, sys, time
    from epbench.runner.client import EndpointClient

    def peak_rss_mb():
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        raise RuntimeError("no VmHWM in /proc/self/status")

    async def main(url, streams, timeout_s):
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
        client = EndpointClient(url, None, None, timeout_s, streams)
        start = time.perf_counter()
        answers = await asyncio.gather(*(client.chat(body) for _ in range(streams)))
        seconds = time.perf_counter() - start
        await client.aclose()
        print(json.dumps({
            "classes": [res.error_class or "ok" for res in answers],
            "errors": sorted({res.error for res in answers if res.error}),
            "events": [res.content_events for res in answers],
            "seconds": seconds, "peak_mb": peak_rss_mb(),
        }))

    asyncio.run(main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3])))
    """
)


@dataclass(frozen=True)
class Peak:
    """What the child saw: each answer's class and content events, the time, the peak."""

    classes: Counter[str]
    errors: list[str]
    events: list[int]
    seconds: float
    peak_mb: float

    def line(self, label: str) -> str:
        classes = ", ".join(f"{n} {cls}" for cls, n in sorted(self.classes.items()))
        return f"{label}: peak RSS {self.peak_mb:.0f} MB in {self.seconds:.1f} s ({classes})"


def measure(streams: int, count: int, size: int, timeout_s: float = 600.0) -> Peak:
    """Run `streams` concurrent answers of `count` deltas of `size` bytes; the child's peak."""
    return measure_case(f"deltas-{count}-{size}", streams, timeout_s)


def measure_case(case: str, streams: int, timeout_s: float = 600.0) -> Peak:
    """Run `streams` concurrent requests to one hostile server case; the child's peak."""
    with hostile_server() as port:
        url = f"http://127.0.0.1:{port}/{case}/v1"
        done = subprocess.run(
            [sys.executable, "-c", CLIENT, url, str(streams), str(timeout_s)],
            capture_output=True, text=True, timeout=timeout_s + 60,
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    if done.returncode != 0:
        raise RuntimeError(f"the client failed: {done.stderr[-2000:]}")
    out = json.loads(done.stdout.splitlines()[-1])
    return Peak(Counter(out["classes"]), out["errors"], out["events"], out["seconds"],
                out["peak_mb"])
