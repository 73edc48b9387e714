"""The runner against hostile endpoints: every request ends within its deadline plus one
second, in the documented class, and the client's peak memory stays under 300 MB.

The servers (tests/hostile_servers.py) run in this process; the client runs in a child
process of its own, whose peak resident memory is read from /proc/self/status (VmHWM, the
high-water mark of its own address space since exec). ru_maxrss would not do: Linux carries the
forking parent's peak across fork and exec, so a child of a 450 MB pytest process would report
450 MB before it sent a byte.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import ROOT
from tests.hostile_servers import CASES, hostile_server

pytestmark = pytest.mark.integration
TIMEOUT_S = 5.0
PEAK_MB = 300
EXPECTED = {
    # an endless stream ends at the response cap or at the deadline, whichever comes first
    "endless-stream": {"too_large", "deadline"},
    "one-event-per-second": {"deadline"},
    "endless-headers": {"too_large"},
    "json-2gb": {"too_large"},
    "sse-2gb-no-blank-line": {"too_large"},
    "html-200": {"protocol"},
    "status-999": {"http_other"},
    "close-mid-chunk": {"truncated"},
    "leaky-headers": {None},  # an answer: what it keeps is tests/hostile/test_server_evidence.py
}

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

    async def main(port, cases, timeout_s):
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
        for case in cases:
            client = EndpointClient(
                f"http://127.0.0.1:{port}/{case}/v1", None, None, timeout_s, 1
            )
            start = time.perf_counter()
            res = await client.chat(body)
            seconds = time.perf_counter() - start
            await client.aclose()
            peak_mb = peak_rss_mb()
            print(json.dumps({"case": case, "class": res.error_class, "seconds": seconds,
                              "error": res.error, "peak_mb": peak_mb}), flush=True)
        peak_mb = peak_rss_mb()
        print(json.dumps({"peak_mb": peak_mb}), flush=True)

    asyncio.run(main(int(sys.argv[1]), sys.argv[3:], float(sys.argv[2])))
    """
)


def test_every_hostile_endpoint_ends_in_time_in_its_class_and_within_300_mb():
    assert set(EXPECTED) == set(CASES)
    with hostile_server() as port:
        done = subprocess.run(
            [sys.executable, "-c", CLIENT, str(port), str(TIMEOUT_S), *EXPECTED],
            capture_output=True, text=True, timeout=180,
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    seen = {line["case"]: line for line in lines if "case" in line}
    assert set(seen) == set(EXPECTED)
    for case, classes in EXPECTED.items():
        line = seen[case]
        assert line["class"] in classes, line
        assert line["seconds"] < TIMEOUT_S + 1.0, line
    peak = lines[-1]["peak_mb"]
    print(f"client peak resident memory: {peak:.1f} MB")
    # each line carries the peak so far, so a failure names the case that grew
    assert peak < PEAK_MB, [(line.get("case"), line["peak_mb"]) for line in lines]
