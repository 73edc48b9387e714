"""The emulator's parts without a server: slots, delays, fault draws, tokens, frames, config."""

from __future__ import annotations

import asyncio
import json
import random

import pytest

from epbench.core.errors import InputError
from epbench.runner.emulator import start_emulator
from epbench.runner.emulator.batching import DecodeClock, SlotPool
from epbench.runner.emulator.faults import FaultDrawer, TokenBucket, retry_after_header
from epbench.runner.emulator.frames import ChunkFrames, assemble_message
from epbench.runner.emulator.server import serve
from epbench.runner.emulator.settings import (
    Distribution,
    EmulatorSettings,
    FaultSettings,
    settings_from_endpoint,
)
from epbench.runner.emulator.state import draw_length
from epbench.runner.emulator.tokens import count_prompt_tokens
from tests.emulator_fixture import emulator_endpoint


def test_slots_admit_up_to_their_number_and_queue_the_rest_in_arrival_order():
    async def scenario() -> list[str]:
        pool = SlotPool(2)
        order: list[str] = []

        async def user(name: str, hold: float) -> None:
            await pool.acquire()
            order.append(name)
            await asyncio.sleep(hold)
            pool.release()

        tasks = [asyncio.create_task(user(n, 0.01)) for n in "abcde"]
        await asyncio.sleep(0)
        assert (pool.active, pool.queued) == (2, 3)
        await asyncio.gather(*tasks)
        assert (pool.active, pool.queued) == (0, 0)
        return order

    assert asyncio.run(scenario()) == list("abcde")


def test_a_queued_request_that_is_cancelled_leaves_the_queue_and_holds_no_slot():
    async def scenario() -> tuple[int, int]:
        pool = SlotPool(1)
        await pool.acquire()
        waiter = asyncio.create_task(pool.acquire())
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        pool.release()
        return pool.active, pool.queued

    assert asyncio.run(scenario()) == (0, 0)


def test_prefill_and_decode_delays_follow_the_formulas():
    settings = EmulatorSettings(ttft_ms=25, prefill_ms_per_1k_tokens=40, tpot_ms=6,
                                tpot_growth=0.04)
    pool = SlotPool(32)
    clock = DecodeClock(settings, random.Random(0), pool)
    assert clock.prefill_ms(2000) == pytest.approx(25 + 40 * 2)  # 105 ms
    pool.active = 1
    assert clock.step_ms() == pytest.approx(6.0)
    pool.active = 11
    assert clock.step_ms() == pytest.approx(6 * (1 + 0.04 * 10))  # 8.4 ms


def test_jitter_stays_within_its_relative_bound_and_is_seeded():
    settings = EmulatorSettings(tpot_ms=10, jitter=0.2)
    pool = SlotPool(1)
    pool.active = 1
    steps = [DecodeClock(settings, random.Random(5), pool).step_ms() for _ in range(2)]
    assert steps[0] == steps[1]
    clock = DecodeClock(settings, random.Random(6), pool)
    draws = [clock.step_ms() for _ in range(500)]
    assert 8.0 <= min(draws) < 8.2 and 11.8 < max(draws) <= 12.0


def test_fault_draws_walk_the_cumulative_probabilities_in_a_fixed_order():
    drawer = FaultDrawer(FaultSettings(http_5xx=0.25, stall=0.25, empty_choices=0.5))

    class Fixed(random.Random):
        def __init__(self, u: float) -> None:
            super().__init__(0)
            self.u = u

        def random(self) -> float:
            return self.u

    assert drawer.draw(Fixed(0.10)) == ("http_5xx", 0.0)
    assert drawer.draw(Fixed(0.30)) == ("stall", 0.0)
    assert drawer.draw(Fixed(0.99)) == ("empty_choices", 0.0)
    none = FaultDrawer(FaultSettings(http_5xx=0.25))
    assert none.draw(Fixed(0.25)) == (None, 0.0)


def test_fault_frequencies_match_their_probabilities():
    drawer = FaultDrawer(FaultSettings(http_5xx=0.1, drop_mid_stream=0.2))
    rng = random.Random(1)
    kinds = [drawer.draw(rng)[0] for _ in range(20_000)]
    assert kinds.count("http_5xx") / 20_000 == pytest.approx(0.1, abs=0.01)
    assert kinds.count("drop_mid_stream") / 20_000 == pytest.approx(0.2, abs=0.01)


def test_the_token_bucket_holds_one_seconds_worth_and_says_how_long_to_wait():
    bucket = TokenBucket(rpm=120)  # 2 per second
    assert bucket.capacity == 2
    assert bucket.take() == 0.0 and bucket.take() == 0.0
    wait = bucket.take()
    assert 0.45 < wait <= 0.5
    assert retry_after_header(wait) == 1
    assert retry_after_header(2.01) == 3
    assert TokenBucket(rpm=6).capacity == 1  # at least one request


def test_prompt_tokens_are_characters_over_four_rounded_up():
    messages = [
        {"role": "system", "content": "abcd"},  # 4
        {"role": "user", "content": [{"type": "text", "text": "efghi"}]},  # 5
        {"role": "assistant", "content": None,
         "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]},  # 3
    ]
    assert count_prompt_tokens(messages) == 3  # ceil(12 / 4)
    assert count_prompt_tokens(messages, chars_per_token=2) == 6
    assert count_prompt_tokens([{"role": "user", "content": ""}]) == 1


def test_output_length_draws_are_clipped_and_rounded():
    rng = random.Random(0)
    fixed = Distribution(kind="fixed", value=37)
    assert draw_length(fixed, rng) == 37
    normal = Distribution(kind="normal", mean=100, stddev=50, low=80, high=120)
    draws = [draw_length(normal, rng) for _ in range(1000)]
    assert min(draws) == 80 and max(draws) == 120
    lognormal = Distribution(kind="lognormal", mean=200, stddev=100)
    mean = sum(draw_length(lognormal, rng) for _ in range(20_000)) / 20_000
    assert mean == pytest.approx(200, rel=0.05)


def test_frames_are_valid_sse_json_and_the_malformed_one_is_not():
    frames = ChunkFrames("chatcmpl-1", 5, 'model "quoted"')
    for frame in (frames.role(), frames.token(3), frames.finish("stop"), frames.usage(7, 2),
                  frames.empty(), frames.delta({"tool_calls": [{"index": 0}]})):
        assert frame.startswith(b"data: ") and frame.endswith(b"\n\n")
        event = json.loads(frame[6:])
        assert event["model"] == 'model "quoted"'
    assert json.loads(frames.usage(7, 2)[6:])["usage"]["total_tokens"] == 9
    with pytest.raises(ValueError):
        json.loads(frames.malformed()[6:])


def test_tool_call_deltas_assemble_by_index_into_one_message():
    deltas = [
        {"tool_calls": [{"index": 1, "id": "b", "type": "function",
                         "function": {"name": "g", "arguments": ""}}]},
        {"tool_calls": [{"index": 0, "id": "a", "type": "function",
                         "function": {"name": "f", "arguments": '{"x"'}}]},
        {"tool_calls": [{"index": 1, "function": {"arguments": "{}"}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]},
    ]
    message = assemble_message(deltas)
    assert message["content"] is None
    assert message["tool_calls"] == [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}},
        {"id": "b", "type": "function", "function": {"name": "g", "arguments": "{}"}},
    ]


def test_an_endpoint_without_an_emulator_block_is_one_clear_input_error():
    document = emulator_endpoint()
    del document["emulator"]
    with pytest.raises(InputError) as caught:
        settings_from_endpoint(document, "endpoints/x.yaml")
    assert "\n" not in str(caught.value)
    assert "endpoints/x.yaml" in str(caught.value) and "emulator:" in str(caught.value)


def test_every_invalid_emulator_setting_is_listed_with_its_pointer_and_no_process_starts():
    document = emulator_endpoint({"slots": 0, "faults": {"http_5xx": 2}})
    with pytest.raises(InputError) as caught:
        start_emulator(document)
    head, *problems = str(caught.value).splitlines()
    assert head == "2 problems:"
    assert len(problems) == 2  # one line each, every problem (issue 24: not only the first)
    assert any("/emulator/faults/http_5xx" in line for line in problems)
    assert any("/emulator/slots" in line for line in problems)


def test_the_listening_socket_is_tcp_with_nodelay_for_accepted_sockets_to_inherit():
    import socket

    from epbench.runner.emulator.server import bind

    sock = bind("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP  # asyncio sets TCP_NODELAY only for this proto
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        sock.close()


def test_serve_rejects_a_missing_or_broken_file_in_one_line(tmp_path):
    with pytest.raises(InputError, match="not found"):
        serve(tmp_path / "nope.yaml", "127.0.0.1", 0, None)
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: endpoint\nid: [unclosed\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        serve(bad, "127.0.0.1", 0, None)
    assert "bad.yaml" in str(caught.value) and "\n" not in str(caught.value)


def test_output_length_is_max_tokens_capped_by_the_distribution_unless_ignore_eos():
    from epbench.runner.emulator.completion import plan
    from epbench.runner.emulator.state import EmulatorState

    capped = EmulatorState(EmulatorSettings(output_tokens=Distribution(kind="fixed", value=40)))
    free = EmulatorState(EmulatorSettings())

    def length(state: EmulatorState, **body: object) -> tuple[int, str]:
        request = {"messages": [{"role": "user", "content": "hi"}], **body}
        p = plan(state, json.dumps(request).encode(), request)
        return p.output_tokens, p.finish_reason

    assert length(free, max_tokens=100) == (100, "length")
    assert length(free) == (256, "stop")  # no max_tokens, no distribution: the default
    assert length(capped, max_tokens=100) == (40, "stop")  # the draw ends it first
    assert length(capped, max_tokens=30) == (30, "length")
    assert length(capped, max_tokens=100, ignore_eos=True) == (100, "length")
    assert length(capped, max_completion_tokens=10) == (10, "length")
    assert length(capped) == (40, "stop")


def test_agentic_workloads_are_loaded_and_everything_else_skipped(tmp_path, capsys):
    from epbench.runner.emulator.agentic import load_workloads

    (tmp_path / "a.yaml").write_text("kind: agentic-workload\nid: a\n", encoding="utf-8")
    (tmp_path / "b.json").write_text('{"kind": "agentic-workload", "id": "b"}', encoding="utf-8")
    (tmp_path / "serving.yaml").write_text("kind: serving-workload\nid: s\n", encoding="utf-8")
    (tmp_path / "README.md").write_text("# not a workload\n", encoding="utf-8")
    (tmp_path / "broken.yaml").write_text("kind: [\n", encoding="utf-8")
    found = load_workloads([tmp_path])
    assert sorted(doc["id"] for doc in found) == ["a", "b"]
    assert "broken.yaml" in capsys.readouterr().err
