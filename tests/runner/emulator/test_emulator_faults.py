"""Faults on loopback: each kind is what the client sees, at most one per request, counted."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from tests.emulator_fixture import running_emulator

pytestmark = pytest.mark.integration

KINDS = ("http_5xx", "stall", "drop_mid_stream", "malformed_sse", "stream_error", "empty_choices")
STALL_S = 1.0
"""A stall's silence before the first token: long enough that a clean request (a few ms at the
server) is never seen this late by a client descheduled on a loaded machine (0.4 s was, once,
under `pytest -n 3` on a freshly booted 2-core machine)."""
HTTP = httpx.Client(timeout=30)


def observe(url: str, body: dict[str, Any], request_id: str) -> str | None:
    """What a careful client sees: the fault kind, or None for a clean stream."""
    t_send = time.perf_counter()
    with HTTP.stream("POST", url + "/chat/completions", json=body,
                     headers={"x-epbench-request-id": request_id}) as response:
        if response.status_code == 429:
            return "rate_limit"
        if response.status_code in (500, 503):
            response.read()
            assert response.json()["error"]["type"] == "server_error"
            return "http_5xx"
        assert response.status_code == 200
        events: list[Any] = []
        t_first = None
        try:
            for line in response.iter_lines():
                if not line.startswith("data: "):
                    continue
                payload = line[6:]
                if payload == "[DONE]":
                    events.append(payload)
                    continue
                try:
                    event = json.loads(payload)
                except ValueError:
                    return "malformed_sse"
                if "error" in event:
                    return "stream_error"
                events.append(event)
                choices = event.get("choices") or []
                if t_first is None and choices and choices[0]["delta"].get("content"):
                    t_first = time.perf_counter()
        except httpx.RemoteProtocolError:
            return "drop_mid_stream"
    if events[-1] != "[DONE]":
        return "drop_mid_stream"
    if t_first is None:
        return "empty_choices"
    if t_first - t_send >= STALL_S:
        return "stall"
    return None


FAULTS = {kind: 0.12 for kind in KINDS}
SETTINGS = {"seed": 11, "ttft_ms": 1, "tpot_ms": 1, "prefill_ms_per_1k_tokens": 0, "jitter": 0,
            "faults": {**FAULTS, "stall_s": STALL_S}}


def body(i: int, stream: bool = True) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": f"request number {i}"}], "max_tokens": 6,
            "stream": stream, "stream_options": {"include_usage": True}}


@pytest.fixture(scope="module")
def emu():
    with running_emulator(SETTINGS) as emulator:
        yield emulator


def test_every_fault_kind_is_seen_by_the_client_exactly_as_the_server_counted_it(emu):
    emu.reset()
    seen = {f"r{i}": observe(emu.base_url, body(i), f"r{i}") for i in range(60)}
    records = {r["request_id"]: r for r in emu.requests()}
    stats = emu.stats()
    assert seen == {rid: r["fault"] for rid, r in records.items()}  # at most one, the drawn one
    counts = {kind: sum(1 for v in seen.values() if v == kind) for kind in KINDS}
    assert all(n >= 1 for n in counts.values()), counts  # 60 seeded requests hit every kind
    assert stats["faults"] == {**counts, "rate_limit": 0, "overloaded": 0}
    assert stats["requests"] == 60
    # 6 kinds at 0.12 each: 72% of requests faulted in expectation; 60 seeded draws land near
    assert 30 <= sum(counts.values()) <= 55
    for record in records.values():
        if record["fault"] == "stall":  # stall_s of silence before the first token
            assert record["t_first_byte_ns"] - record["t_recv_ns"] >= STALL_S * 1e9
        elif record["fault"] is None:
            assert record["t_first_byte_ns"] - record["t_recv_ns"] < STALL_S * 1e9
            assert record["completion_tokens"] == 6


def test_faults_on_non_streaming_requests_are_visible_too(emu):
    emu.reset()
    kinds = []
    for i in range(40):
        try:
            response = HTTP.post(emu.base_url + "/chat/completions", json=body(i, stream=False))
        except httpx.RemoteProtocolError:  # the body stops short of its content-length
            kinds.append("drop_mid_stream")
            continue
        if response.status_code != 200:
            kinds.append("http_5xx" if response.status_code in (500, 503) else "?")
            continue
        try:
            data = response.json()
        except ValueError:
            kinds.append("malformed_sse")
            continue
        if "error" in data:
            kinds.append("stream_error")
        elif data["choices"] == []:
            kinds.append("empty_choices")
        else:
            kinds.append(None)
    drawn = [r["fault"] for r in emu.requests()]
    assert [k if k != "stall" else None for k in drawn] == kinds  # a stall only delays
    assert {"drop_mid_stream", "malformed_sse", "stream_error", "empty_choices"} <= set(kinds)


def test_the_token_bucket_answers_429_with_retry_after_and_refills():
    with running_emulator({"faults": {"rate_limit_rpm": 60}, "ttft_ms": 1, "tpot_ms": 1}) as emu:
        # 60 rpm = 1 per second, and the bucket holds one second's worth: 1
        statuses = [HTTP.post(emu.base_url + "/chat/completions", json=body(i, False))
                    for i in range(3)]
        assert [r.status_code for r in statuses] == [200, 429, 429]
        limited = statuses[1]
        assert limited.headers["retry-after"] == "1"  # under 1 s to the next token, rounded up
        assert limited.json()["error"]["type"] == "rate_limit_exceeded"
        time.sleep(1.05)
        assert HTTP.post(emu.base_url + "/chat/completions", json=body(9, False)).status_code == 200
        stats = emu.stats()
        assert stats["faults"]["rate_limit"] == 2
        assert stats["requests"] == 4
        assert [r["status"] for r in emu.requests()] == [200, 429, 429, 200]
