"""An endpoint cannot exhaust the runner's memory with answers that stay under every cap.

Each event may hold 4 MiB (`max_event_bytes`), each JSON body 32 MiB, each response 256 MiB:
64 responses in flight under those caps could hold gigabytes. The runner parses a big payload
as it arrives (the fold's batch flushes by bytes as well as by count) and one byte budget per
client covers every response in flight (runner/bounds.py `ByteBudget`). The client runs in a
child process; its peak resident memory (VmHWM) is printed.

The 64 streams send 8 of the largest events each (2 GiB in all): the peak comes from what the
responses hold at once, which 8 events show as well as the 63 the response cap allows, in a
fraction of the time (bench/stream_memory.py runs any count).
"""

from __future__ import annotations

import asyncio

import pytest

from epbench.runner.apis import get_api
from epbench.runner.bounds import ByteBudget
from epbench.runner.chat_stream import ChatStreamFold
from epbench.runner.client import EndpointClient
from epbench.runner.response import ChatResponse
from tests.hostile_servers import hostile_server
from tests.stream_memory import MIB, measure, measure_case

pytestmark = pytest.mark.integration
PEAK_MB = 1000
LARGEST_EVENT = 4 * MIB - 16  # the event's bytes before its blank line, under max_event_bytes


def test_64_streams_of_the_largest_deltas_stay_under_1_gb():
    peak = measure(64, 8, LARGEST_EVENT)
    print(peak.line("64 streams x 8 deltas of 4 MiB"))
    assert peak.classes == {"ok": 64}, peak.errors
    assert peak.events == [8] * 64
    assert peak.peak_mb < PEAK_MB


def test_64_json_bodies_at_their_cap_stay_under_1_gb_and_end_too_large():
    peak = measure_case("json-2gb", 64)
    print(peak.line("64 JSON bodies of 2 GB"))
    assert peak.classes == {"too_large": 64}, peak.errors
    assert peak.peak_mb < PEAK_MB


def test_one_answer_of_65_deltas_of_3_9_mb_stays_near_its_largest_event():
    # 779 MB before the batch flushed by bytes: every payload waited for the end
    peak = measure(1, 65, 3_900_000)
    print(peak.line("1 stream x 65 deltas of 3.9 MB"))
    assert peak.classes == {"ok": 1}
    assert peak.peak_mb < 200


def test_a_response_past_the_clients_budget_fails_too_large_and_gives_its_bytes_back():
    async def main(port: int) -> tuple[list[ChatResponse], ByteBudget]:
        budget = ByteBudget(6 * MIB)  # one unfinished 4 MiB event fits, two do not
        client = EndpointClient(
            f"http://127.0.0.1:{port}/deltas-3-{LARGEST_EVENT}/v1", None, None, 60.0, 4,
            budget=budget,
        )
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
        try:
            answers = await asyncio.gather(*(client.chat(body) for _ in range(4)))
        finally:
            await client.aclose()
        return list(answers), budget

    with hostile_server() as port:
        answers, budget = asyncio.run(main(port))
    classes = [res.error_class or "ok" for res in answers]
    assert "too_large" in classes, classes
    failed = [res.error for res in answers if res.error_class == "too_large"]
    assert all("memory budget" in (error or "") for error in failed), failed
    assert budget.held == 0


def test_big_payloads_are_parsed_as_they_arrive_and_none_wait():
    res = ChatResponse()
    fold = ChatStreamFold(res, False, 16 * MIB, get_api(None))
    payload = '{"choices":[{"index":0,"delta":{"content":"' + "x" * 40_000 + '"}}]}'
    for t in range(1, 4):
        fold.event(t, payload)
    assert res.content_events == 3
    assert not hasattr(fold, "pending")
