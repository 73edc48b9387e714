"""What a workload asks of each request, as real agent loops and real endpoints need it: the
tool choice per step (forced where the task needs a call, `auto` after), `strict` per tool on
all three APIs, `ignore_eos` on Responses, and a Responses reply cut by its limit read from
its `status` (vLLM ends it with response.completed, status incomplete)."""

from __future__ import annotations

from typing import Any

from epbench.runner.agentic.capability import probe_body
from epbench.runner.agentic.model import load_workload
from epbench.runner.apis import anthropic_messages, openai_responses

TOOL = {"name": "get_weather", "description": "Weather.", "strict": True,
        "parameters": {"type": "object", "properties": {"city": {"enum": ["Paris"]}}},
        "implementation": {"type": "static", "response": "sunny"}}


def workload(tool: dict[str, Any] = TOOL, **settings: Any) -> Any:
    return load_workload({
        "kind": "agentic-workload", "schema_version": 1, "id": "w", "version": "1.0",
        "description": "d", "category": "single-call", "trials": 1, "settings": settings,
        "tools": [tool], "tasks": [{"id": "t", "conversation": ["hi"],
                                    "checks": {"calls": [{"tool": "get_weather"}]}}],
    })


def test_the_tool_choice_is_forced_on_the_declared_steps_and_auto_after() -> None:
    s = workload(tool_choice="auto", tool_choice_by_step=["required"]).settings
    assert [s.tool_choice_at(step) for step in (1, 2, 3)] == ["required", "auto", "auto"]


def test_the_capability_probe_asks_as_the_first_step_does_and_long_enough() -> None:
    body = probe_body(workload(tool_choice="auto", tool_choice_by_step=["required"]), "m", True)
    assert body["tool_choice"] == "required"
    assert body["max_tokens"] >= 32  # vLLM's first tool-call delta came by token 32


def test_a_strict_tool_is_sent_strict_on_every_api() -> None:
    spec = workload().tools[0].openai_spec()
    assert spec["function"]["strict"] is True
    chat_body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [spec]}
    assert openai_responses.build(chat_body)["tools"][0]["strict"] is True
    assert anthropic_messages.build(chat_body)["tools"][0]["strict"] is True


def test_a_tool_without_strict_is_sent_as_before() -> None:
    doc = {k: v for k, v in TOOL.items() if k != "strict"}
    spec = workload(doc).tools[0].openai_spec()
    assert "strict" not in spec["function"]
    chat_body = {"model": "m", "messages": [], "tools": [spec]}
    assert openai_responses.build(chat_body)["tools"][0]["strict"] is False
    assert "strict" not in anthropic_messages.build(chat_body)["tools"][0]


def test_ignore_eos_reaches_a_responses_endpoint() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4,
            "ignore_eos": True}
    assert openai_responses.build(body)["ignore_eos"] is True


def test_a_responses_reply_completed_with_status_incomplete_finishes_by_length() -> None:
    events = openai_responses.ResponsesTranslator().event({
        "type": "response.completed",
        "response": {"status": "incomplete",
                     "incomplete_details": {"reason": "max_output_tokens"},
                     "usage": {"input_tokens": 5, "output_tokens": 4}}})
    finishes = [e["choices"][0].get("finish_reason") for e in events if "choices" in e]
    assert finishes == ["length"], events
