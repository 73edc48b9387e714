"""The batching model on loopback: a queue beyond the slots, decode slowing with the batch."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from tests.emulator_fixture import running_emulator

pytestmark = pytest.mark.integration

SETTINGS = {"seed": 1, "slots": 4, "ttft_ms": 20, "prefill_ms_per_1k_tokens": 0, "tpot_ms": 10,
            "tpot_growth": 0.5, "jitter": 0}


@pytest.fixture(scope="module")
def emu():
    with running_emulator(SETTINGS) as emulator:
        yield emulator


async def fire(url: str, n: int, max_tokens: int, stagger_s: float = 0.0) -> None:
    """n concurrent streamed requests, each read to the end."""
    body = {"messages": [{"role": "user", "content": "q"}], "max_tokens": max_tokens,
            "stream": True}

    async def one(client: httpx.AsyncClient, i: int) -> None:
        await asyncio.sleep(i * stagger_s)
        request = {**body, "messages": [{"role": "user", "content": f"q{i}"}]}
        async with client.stream("POST", url + "/chat/completions", json=request) as response:
            async for _ in response.aiter_bytes():
                pass

    limits = httpx.Limits(max_connections=n)
    async with httpx.AsyncClient(timeout=30, limits=limits) as client:
        await asyncio.gather(*(one(client, i) for i in range(n)))


def ttft_ms(record: dict) -> float:
    return (record["t_first_byte_ns"] - record["t_recv_ns"]) / 1e6


def step_ms(record: dict) -> float:
    steps = record["completion_tokens"] - 1
    return (record["t_last_byte_ns"] - record["t_first_byte_ns"]) / 1e6 / steps


def test_requests_beyond_the_slots_queue_and_their_ttft_grows_by_whole_generations(emu):
    emu.reset()
    # 8 requests, 4 slots: the first four start at once (20 ms to the first token), then take
    # 29 steps of 10 * (1 + 0.5 * 3) = 25 ms; the other four wait for them (about 745 ms)
    asyncio.run(fire(emu.base_url, 8, 30))
    records = sorted(emu.requests(), key=lambda r: r["t_admit_ns"])
    waits = [(r["t_admit_ns"] - r["t_recv_ns"]) / 1e6 for r in records]
    assert max(waits[4:]) >= 400, waits  # someone waited for a whole first-wave generation
    # FIFO handover: the i-th admitted starts only when i - 3 earlier requests have finished
    finished = sorted(r["t_last_byte_ns"] for r in records)
    for i in range(4, 8):
        assert records[i]["t_admit_ns"] >= finished[i - 4]
    # TTFT = queue wait + 20 ms (no prefill term, no jitter; event-loop timers fire within
    # about a millisecond of their deadline, either side)
    for record, wait in zip(records, waits, strict=True):
        assert wait + 19 <= ttft_ms(record) < wait + 60


def test_decode_slows_down_as_more_sequences_are_active(emu):
    emu.reset()
    asyncio.run(fire(emu.base_url, 1, 21))
    alone = step_ms(emu.requests()[0])
    emu.reset()
    asyncio.run(fire(emu.base_url, 4, 21))
    together = [step_ms(r) for r in emu.requests()]
    assert 9 <= alone <= 13  # tpot_ms = 10 with one sequence
    # four active sequences: 10 * (1 + 0.5 * 3) = 25 ms per step once all four are running
    # (a request that arrives a little late starts its first steps beside fewer sequences)
    assert min(together) >= 17 and 20 <= sum(together) / 4 <= 29, together


def test_a_client_that_goes_away_frees_its_slot_at_once(emu):
    emu.reset()
    body = {"messages": [{"role": "user", "content": "long"}], "max_tokens": 2000,
            "stream": True}

    async def scenario() -> None:
        async with httpx.AsyncClient(timeout=30) as client:
            for _ in range(4):  # fill every slot with a stream of about a minute, then leave
                async with client.stream("POST", emu.base_url + "/chat/completions",
                                         json=body) as response:
                    async for _ in response.aiter_bytes():
                        break
            await asyncio.sleep(0.2)
            response = await client.post(emu.base_url + "/chat/completions", json={
                "messages": [{"role": "user", "content": "next"}], "max_tokens": 2})
            assert response.status_code == 200

    asyncio.run(scenario())
    records = emu.requests()
    assert [r["disconnected"] for r in records] == [True] * 4 + [False]
    last = records[-1]
    assert (last["t_admit_ns"] - last["t_recv_ns"]) / 1e6 < 50  # no wait for a slot
    assert emu.stats()["active"] == 0
