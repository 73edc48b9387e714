"""The emulator's agentic player, without a server: what it says at each point of a task."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from epbench.core.documents import load_document
from epbench.runner.agentic.assemble import assemble
from epbench.runner.agentic.tools import error_content
from epbench.runner.emulator.agentic_play import AgenticPlayer
from tests.conftest import ROOT

SHIPPED = ROOT / "workloads" / "agentic"


@cache
def docs() -> list[dict[str, Any]]:
    return [load_document(p) for p in sorted(SHIPPED.glob("*.yaml"))]


def body(doc_id: str, task: int, extra: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    doc = next(d for d in docs() if d["id"] == doc_id)
    tools = [
        {"type": "function", "function": {"name": t["name"], "parameters": t["parameters"]}}
        for t in doc["tools"]
    ]
    first = doc["tasks"][task]["conversation"][0]
    return {"tools": tools, "messages": [{"role": "user", "content": first}, *(extra or [])]}


def calls_of(script) -> list[tuple[str | None, str, str]]:
    msg = assemble(
        (i, {"choices": [{"index": 0, "delta": d}]}) for i, d in enumerate(script.deltas)
    )
    return [(c.id, c.name, c.arguments) for c in msg.calls]


def test_a_request_is_matched_to_its_task_and_answered_along_the_reference():
    player = AgenticPlayer(docs(), {}, seed=1)
    script = player.play(body("parallel-stock-quotes", 0))
    got = calls_of(script)
    assert [json.loads(a)["symbol"] for _, _, a in got] == ["AAPL", "MSFT", "NVDA"]
    assert script.finish_reason == "tool_calls" and script.injected == {}
    assert (
        player.play(
            {
                "tools": body("parallel-stock-quotes", 0)["tools"],
                "messages": [{"role": "user", "content": "hi"}],
            }
        )
        is None
    )


def answered(script, results: list[str]) -> list[dict[str, Any]]:
    calls = calls_of(script)
    assistant = {
        "role": "assistant",
        "tool_calls": [
            {"id": cid or f"syn{i}", "type": "function", "function": {"name": n, "arguments": a}}
            for i, (cid, n, a) in enumerate(calls)
        ],
    }
    tools = [
        {"role": "tool", "tool_call_id": cid or f"syn{i}", "content": r}
        for i, ((cid, _, _), r) in enumerate(zip(calls, results, strict=True))
    ]
    return [assistant, *tools]


def test_after_tool_results_it_replies_and_after_an_invalid_call_error_it_replays_only_that_call():
    player = AgenticPlayer(docs(), {}, seed=1)
    first = player.play(body("parallel-stock-quotes", 0))
    done = answered(
        first, ['{"price_usd": 1}', error_content("invalid_call", "bad json"), '{"price_usd": 3}']
    )
    replay = player.play(body("parallel-stock-quotes", 0, done))
    assert [json.loads(a)["symbol"] for _, _, a in calls_of(replay)] == ["MSFT"]
    final = player.play(
        body("parallel-stock-quotes", 0, done + answered(replay, ['{"price_usd": 2}']))
    )
    assert "".join(d["content"] for d in final.deltas).startswith("MSFT is highest")


def test_a_legitimate_tool_error_is_an_answer_but_a_tool_fault_is_retried():
    player = AgenticPlayer(docs(), {}, seed=1)
    first = player.play(body("inventory-fault-recovery", 0))
    fault = answered(first, [error_content("tool_fault", "503")])
    assert calls_of(player.play(body("inventory-fault-recovery", 0, fault)))[0][1] == "check_stock"
    legit = answered(first, [error_content("tool_error", "Unknown SKU")])
    assert player.play(body("inventory-fault-recovery", 0, legit)).finish_reason == "stop"


def test_split_arguments_cut_inside_escapes_and_interleave_parallel_calls_by_index():
    player = AgenticPlayer(docs(), {"split_arguments": True, "interleave_parallel": True}, seed=3)
    script = player.play(body("parallel-stock-quotes", 0))
    indexes = [d["tool_calls"][0]["index"] for d in script.deltas]
    assert indexes[:3] == [0, 1, 2] and len(script.deltas) > 12
    assert [json.loads(a) for _, _, a in calls_of(script)] == [
        {"symbol": "AAPL"},
        {"symbol": "MSFT"},
        {"symbol": "NVDA"},
    ]
    weather = player.play(body("weather-single-call", 2))
    pieces = [d["tool_calls"][0]["function"]["arguments"] for d in weather.deltas[1:]]
    assert "".join(pieces) == '{"city": "S\\u00e3o Paulo"}'
    assert json.loads("".join(pieces)) == {"city": "São Paulo"}


def test_every_injection_is_counted_by_kind_and_breaks_the_call_that_way():
    rates = {"invalid_json": 1.0}
    script = AgenticPlayer(docs(), rates, seed=1).play(body("parallel-stock-quotes", 0))
    assert script.injected == {"invalid_json": 3}
    script = AgenticPlayer(docs(), {"unknown_tool": 1.0}, seed=1).play(
        body("weather-single-call", 0)
    )
    assert script.injected == {"unknown_tool": 1} and calls_of(script)[0][1] == "get_weather_v2"
    script = AgenticPlayer(docs(), {"wrong_arguments": 1.0}, seed=1).play(
        body("weather-single-call", 0)
    )
    assert script.injected == {"wrong_arguments": 1} and json.loads(calls_of(script)[0][2]) == {}
    script = AgenticPlayer(docs(), {"missing_id": 1.0}, seed=1).play(body("weather-single-call", 0))
    assert script.injected == {"missing_id": 1} and calls_of(script)[0][0] is None
    script = AgenticPlayer(docs(), {"skip_call": 1.0}, seed=1).play(body("weather-single-call", 0))
    assert script.injected == {"skip_call": 1} and script.finish_reason == "stop"


def test_a_multi_turn_task_asks_first_and_calls_after_the_second_user_turn():
    player = AgenticPlayer(docs(), {}, seed=1)
    ask = player.play(body("restaurant-clarify", 0))
    assert ask.finish_reason == "stop"
    question = "".join(d["content"] for d in ask.deltas)
    turn2 = [
        {"role": "assistant", "content": question},
        {"role": "user", "content": "Friday 2026-12-04 at 19:30, for 4 people."},
    ]
    booking = calls_of(player.play(body("restaurant-clarify", 0, turn2)))
    assert json.loads(booking[0][2])["party_size"] == 4
