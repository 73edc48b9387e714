"""Every emulator fault switched on: each request lands in exactly one class, matching the
emulator's own count of what it injected (GET /emulator/stats)."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from epbench.core.documents import load_document
from epbench.core.metrics.errors import ERROR_CLASSES
from epbench.runner.bounds import Bounds
from epbench.runner.client import EndpointClient
from epbench.runner.emulator.faults import FAULT_CLASSES
from epbench.runner.emulator.process import start_emulator
from tests.conftest import ROOT

pytestmark = pytest.mark.integration

FAULTS = {
    "rate_limit_rpm": 3000,  # a 50-per-second bucket: bursts of 8 at once overflow it
    "http_5xx": 0.1,
    "drop_mid_stream": 0.1,
    "malformed_sse": 0.1,
    "stream_error": 0.1,
    "empty_choices": 0.1,
    "stall": 0.1,
    "stall_s": 1.5,
    "overloaded": 0.1,  # on chat completions: a 529 at the door
}


def test_every_request_is_in_exactly_one_class_and_the_counts_match_the_emulator(tmp_path):
    doc = load_document(ROOT / "endpoints" / "emulator.yaml")
    doc["emulator"].update(slots=16, ttft_ms=2, prefill_ms_per_1k_tokens=1, tpot_ms=1, jitter=0.0)
    doc["emulator"]["faults"] = FAULTS
    requests = 160

    async def go(base_url: str) -> list[str | None]:
        client = EndpointClient(
            base_url, None, None, timeout_s=5.0, max_connections=16,
            bounds=Bounds(idle_timeout_s=0.5),  # a stall is silence: the idle timeout ends it
        )
        body = {"model": "emulated-8b", "max_tokens": 8, "stream": True, "ignore_eos": True}
        results: list[str | None] = []
        pending = iter(range(requests))

        async def worker() -> None:  # 16 at a time on 16 connections: no pool waits
            for i in pending:
                message = {"role": "user", "content": f"request {i} hello"}
                res = await client.chat({**body, "messages": [message]}, request_id=f"f-{i:04d}")
                results.append(res.error_class)

        try:
            await asyncio.gather(*(worker() for _ in range(16)))
        finally:
            await client.aclose()
        return results

    with start_emulator(doc) as emu:
        classes = asyncio.run(go(emu.base_url))
        stats = emu.stats()
    seen = Counter(c or "ok" for c in classes)
    expected = Counter()
    for kind, n in stats["faults"].items():
        expected[FAULT_CLASSES[kind]] += n
    assert stats["requests"] == requests == sum(seen.values())
    assert set(seen) - {"ok"} <= set(ERROR_CLASSES)
    for cls in ERROR_CLASSES:
        assert seen[cls] == expected[cls], (cls, dict(seen), stats["faults"])
    assert seen["ok"] == requests - sum(stats["faults"].values())
    # every fault kind actually happened, so the test covers each mapping
    assert all(stats["faults"][kind] > 0 for kind in FAULT_CLASSES), stats["faults"]
