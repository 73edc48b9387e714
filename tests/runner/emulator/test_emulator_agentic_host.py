"""Hosting an agentic player: scripts streamed one delta per chunk, assembled when not
streaming, injected faults counted; a missing, silent or failing player means a text answer.

These drive the ASGI app directly (no socket): the player is a stand-in, not the real one.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from epbench.runner.emulator.app import EmulatorApp
from epbench.runner.emulator.script import Script
from epbench.runner.emulator.settings import EmulatorSettings
from epbench.runner.emulator.state import EmulatorState

CALL = [
    {"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                     "function": {"name": "get_weather", "arguments": ""}}]},
    {"tool_calls": [{"index": 0, "function": {"arguments": '{"city": '}}]},
    {"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]},
]
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]


class StandIn:
    def __init__(self, script: Script | None = None, fail: bool = False) -> None:
        self.script, self.fail, self.bodies = script, fail, []

    def play(self, request_body: dict[str, Any]) -> Script | None:
        self.bodies.append(request_body)
        if self.fail:
            raise RuntimeError("player bug")
        return self.script


def call_app(app: EmulatorApp, body: dict[str, Any]) -> tuple[int, bytes]:
    """One POST through the ASGI app; returns (status, whole response body)."""
    sent: list[dict[str, Any]] = []
    incoming = [{"type": "http.request", "body": json.dumps(body).encode(), "more_body": False}]

    async def receive() -> dict[str, Any]:
        if incoming:
            return incoming.pop()
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/v1/chat/completions", "headers": []}
    asyncio.run(app(scope, receive, send))
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


def make_app(player: Any) -> EmulatorApp:
    return EmulatorApp(EmulatorState(EmulatorSettings(seed=1, slots=2), player))


def request(stream: bool) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": TOOLS,
            "stream": stream, "stream_options": {"include_usage": True}, "max_tokens": 50}


def events_of(raw: bytes) -> list[Any]:
    out: list[Any] = []
    for block in raw.decode().split("\n\n"):
        if block.startswith("data: "):
            payload = block[6:]
            out.append(payload if payload == "[DONE]" else json.loads(payload))
    return out


def test_a_script_streams_one_delta_per_chunk_and_its_injections_are_counted():
    script = Script(deltas=CALL, finish_reason="tool_calls", completion_tokens=9,
                    injected={"invalid_json": 1})
    app = make_app(StandIn(script))
    status, raw = call_app(app, request(stream=True))
    events = events_of(raw)
    assert status == 200
    assert events[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert [e["choices"][0]["delta"] for e in events[1:4]] == CALL
    assert events[4]["choices"][0]["finish_reason"] == "tool_calls"
    assert events[5]["usage"]["completion_tokens"] == 9
    assert events[6] == "[DONE]"
    stats = app.state.stats()
    assert stats["agentic"]["invalid_json"] == 1
    record = app.state.records[0]
    assert record.t_first_byte_ns is not None and record.completion_tokens == 9


def test_a_script_without_streaming_comes_back_as_one_assembled_tool_call():
    script = Script(deltas=CALL, finish_reason="tool_calls", injected={"missing_id": 2})
    app = make_app(StandIn(script))
    status, raw = call_app(app, request(stream=False))
    data = json.loads(raw)
    assert status == 200
    choice = data["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["tool_calls"] == [
        {"id": "call_1", "type": "function",
         "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
    ]
    assert data["usage"]["completion_tokens"] == 3  # one token per delta when not given
    assert app.state.stats()["agentic"]["missing_id"] == 2


def test_a_failing_or_silent_player_means_a_text_answer_and_no_tools_means_no_player():
    for player in (StandIn(fail=True), StandIn(script=None), None):
        app = make_app(player)
        status, raw = call_app(app, request(stream=False))
        message = json.loads(raw)["choices"][0]["message"]
        assert status == 200
        assert message["content"] and "tool_calls" not in message
    silent = StandIn(Script(deltas=CALL))
    call_app(make_app(silent), {**request(stream=False), "tools": []})
    assert silent.bodies == []
