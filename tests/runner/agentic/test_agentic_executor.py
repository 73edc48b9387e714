"""The multi-turn executor against a scripted fake client: tags, costs, limits, resume."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from epbench.core.journal_records import has_run_line
from epbench.core.schema import check_schema
from epbench.runner.agentic.executor import agentic_run_line, run_agentic
from epbench.runner.client import ChatResponse
from epbench.runner.context import RunContext
from epbench.runner.workload import LoadedWorkload

CARD = {
    "input_usd_per_mtok": 1.0,
    "output_usd_per_mtok": 2.0,
    "effective_date": "2026-01-01",
    "source_url": "https://example.com/p",
}


def workload(**over: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "kind": "agentic-workload",
        "schema_version": 1,
        "id": "w",
        "version": "1.0",
        "description": "test",
        "category": "single-call",
        "trials": 1,
        "settings": {"stream": True},
        "limits": {
            "max_steps": 6,
            "max_tool_errors": 3,
            "retry": {"max_retries": 2, "backoff_s": 0.0, "honour_retry_after": True},
        },
        "tools": [
            {
                "name": "get_weather",
                "description": "w",
                "parameters": {
                    "type": "object",
                    "required": ["city"],
                    "additionalProperties": False,
                    "properties": {"city": {"type": "string"}},
                },
                "implementation": {"type": "table", "key": "city", "rows": {"Paris": {"t": 18}}},
            }
        ],
        "tasks": [
            {
                "id": "paris",
                "conversation": ["Weather in Paris?"],
                "reference": [
                    {"calls": [{"tool": "get_weather", "arguments": {"city": "Paris"}}]},
                    {"reply": "18 degrees"},
                ],
                "checks": {
                    "calls": [{"tool": "get_weather", "arguments": {"city": "Paris"}}],
                    "reply_contains": ["18"],
                },
            }
        ],
    }
    doc.update(over)
    return doc


def call_chunks(args: str, call_id: str | None = "c1") -> list[tuple[int, dict[str, Any]]]:
    head: dict[str, Any] = {
        "index": 0,
        "type": "function",
        "function": {"name": "get_weather", "arguments": ""},
    }
    if call_id:
        head["id"] = call_id
    return [
        (
            100_000_000,
            {"choices": [{"index": 0, "delta": {"tool_calls": [head]}, "finish_reason": None}]},
        ),
        (
            300_000_000,
            {
                "choices": [
                    {
                        "index": 0,
                        "delta": {"tool_calls": [{"index": 0, "function": {"arguments": args}}]},
                        "finish_reason": None,
                    }
                ]
            },
        ),
        (400_000_000, {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    ]


def reply_chunks(text: str) -> list[tuple[int, dict[str, Any]]]:
    return [
        (
            200_000_000,
            {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": "stop"}]},
        )
    ]


def ok(chunks: list[tuple[int, dict[str, Any]]]) -> ChatResponse:
    # every request takes 0.5 s, uses 100 input and 10 output tokens
    return ChatResponse(
        status=200,
        t_send_ns=0,
        t_done_ns=500_000_000,
        input_tokens=100,
        output_tokens=10,
        token_source="usage",
        chunks=chunks,
    )


def failed(cls: str, status: int | None, retry_after: float | None = None) -> ChatResponse:
    return ChatResponse(
        status=status,
        t_send_ns=0,
        t_done_ns=500_000_000,
        error_class=cls,
        error=f"HTTP {status}",
        retry_after_s=retry_after,
    )


class FakeClient:
    def __init__(self, responses: list[Any]) -> None:
        self.responses = list(responses)
        self.bodies: list[dict[str, Any]] = []

    async def chat(
        self, body: dict[str, Any], keep_chunks: bool = False, request_id: str | None = None
    ) -> ChatResponse:
        self.bodies.append(json.loads(json.dumps(body)))
        item = self.responses.pop(0)
        if isinstance(item, Exception):
            raise item
        return item


class Journal:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []

    def append(self, record: dict[str, Any]) -> None:
        json.dumps(record)  # what the real journal does: it must be JSON
        self.lines.append(record)


def run(
    doc: dict[str, Any],
    client: Any,
    resume: list[dict[str, Any]] | None = None,
    card: dict[str, Any] | None = CARD,
) -> tuple[dict[str, Any], Journal]:
    journal = Journal()
    ctx = RunContext(
        run_id="r",
        run_dir=Path("."),
        endpoint={"model": {"name": "m"}, "pricing": card},
        base_url="http://x/v1",
        client=client,
        journal=journal,
        quick=False,
        seed=0,
        progress=False,
        resume_records=resume or [],
    )
    loaded = LoadedWorkload(path=Path("w.yaml"), doc=doc, sha256="0" * 64, kind=doc["kind"])
    if not has_run_line(ctx.resume_records):  # as the run lifecycle does (runner/lifecycle.py)
        journal.append(agentic_run_line(ctx, loaded))
    section = asyncio.run(run_agentic(ctx, loaded))
    envelope = {"kind": "result", "schema_version": 1}
    assert not [
        f
        for f in check_schema({**envelope, "agentic": section}, "result", "x")
        if "/agentic" in f.pointer
    ]
    return section, journal


def test_every_request_is_tagged_and_priced_by_why_it_was_sent():
    doc = workload()
    doc["tools"][0]["faults"] = [{"on_call": 1, "kind": "unavailable"}]
    client = FakeClient(
        [
            failed("rate_limited", 429, retry_after=0.0),  # step 1: productive, 0 tokens
            ok(call_chunks('{"city": "Paris"')),  # its retry: transport; an invalid call
            ok(call_chunks('{"city": "Paris"}', "c2")),  # repair; the tool answers 503
            ok(call_chunks('{"city": "Paris"}', "c3")),  # recovery
            ok(reply_chunks("It is 18 degrees.")),  # productive
        ]
    )
    section, journal = run(doc, client)
    cost = section["retry_cost"]
    assert {t: (c["requests"], c["tokens"], c["seconds"]) for t, c in cost.items()} == {
        "productive": (2, 110, 1.0),
        "transport": (1, 110, 0.5),
        "repair": (1, 110, 0.5),
        "recovery": (1, 110, 0.5),
    }
    # (100 * 1 + 10 * 2) / 1e6 = 0.00012 USD per request with tokens; the 429 cost nothing
    assert {t: c["usd"] for t, c in cost.items()} == pytest.approx(
        {"productive": 0.00012, "transport": 0.00012, "repair": 0.00012, "recovery": 0.00012}
    )
    assert section["usd_per_task"] == pytest.approx(0.00048)
    assert section["usd_per_successful_task"] == pytest.approx(0.00048)
    assert section["retry_spend_share"] == pytest.approx(0.75)
    assert section["calls"]["invalid_json"] == 1 and section["calls"]["ok"] == 2
    assert section["correct_call_rate"] == pytest.approx(2 / 3)
    assert section["tasks"][0]["outcomes"][0]["result"] == "success"
    tags = [line["tag"] for line in journal.lines if line["type"] == "request"]
    assert tags == ["productive", "transport", "repair", "recovery", "productive"]
    # the invalid call went back as a tool error the model could repair from
    tool_msg = client.bodies[2]["messages"][-1]
    assert tool_msg["role"] == "tool" and '"invalid_call"' in tool_msg["content"]
    assert client.bodies[3]["messages"][-1]["content"].startswith('{"error": {"type": "tool_fault"')


def test_decision_time_runs_from_send_to_the_last_argument_byte():
    section, _ = run(
        workload(), FakeClient([ok(call_chunks('{"city": "Paris"}')), ok(reply_chunks("18"))])
    )
    assert section["decision_ms"]["p50"] == 300.0
    assert section["first_tool_delta_ms"]["p50"] == 100.0
    assert section["task_wall_ms"]["n"] == 1 and section["excess_tokens_over_reference"] == 0.0


def test_a_4xx_is_not_retried_and_counts_against_success():
    section, _ = run(workload(), FakeClient([failed("http_4xx", 400)]))
    outcome = section["tasks"][0]["outcomes"][0]
    assert outcome["result"] == "endpoint_error" and outcome["failed_checks"][0].startswith(
        "endpoint: http_4xx"
    )
    assert section["success_rate"]["n"] == 1 and section["success_rate"]["value"] == 0.0


def test_transport_retries_stop_at_the_limit():
    section, _ = run(workload(), FakeClient([failed("http_5xx", 503)] * 3))
    assert section["retry_cost"]["transport"]["requests"] == 2
    assert section["tasks"][0]["outcomes"][0]["result"] == "endpoint_error"


def test_a_harness_fault_is_listed_with_its_traceback_and_counts_as_a_failed_trial():
    section, _ = run(
        workload(trials=2),
        FakeClient(
            [RuntimeError("boom"), ok(call_chunks('{"city": "Paris"}')), ok(reply_chunks("18"))]
        ),
    )
    [fault] = section["harness_faults"]
    assert (fault["task"], fault["trial"], fault["message"]) == ("paris", 0, "RuntimeError: boom")
    assert fault["traceback"].endswith("RuntimeError") and "trial.py:" in fault["traceback"]
    assert section["tasks"][0]["trials"] == 2 and section["tasks"][0]["successes"] == 1
    assert section["success_rate"]["value"] == 0.5 and section["success_rate"]["n"] == 2
    assert section["pass_hat_k"]["1"] == 0.5


def test_max_tool_errors_stops_a_model_that_never_repairs():
    doc = workload(limits={"max_steps": 10, "max_tool_errors": 1})
    section, _ = run(doc, FakeClient([ok(call_chunks("{")), ok(call_chunks("{", "c2"))]))
    assert section["tasks"][0]["outcomes"][0]["result"] == "max_tool_errors"
    assert section["calls"]["invalid_json"] == 2


def test_a_resumed_run_reads_finished_trials_back_instead_of_sending_them():
    doc = workload(trials=2)
    first, journal = run(
        doc, FakeClient([ok(call_chunks('{"city": "Paris"}')), ok(reply_chunks("18"))] * 2)
    )
    half = [line for line in journal.lines if not (line["type"] == "trial" and line["trial"] == 1)]
    client = FakeClient([ok(call_chunks('{"city": "Paris"}')), ok(reply_chunks("18"))])
    again, journal2 = run(doc, client, resume=half)
    assert client.responses == []  # exactly one trial was run again
    assert [line["trial"] for line in journal2.lines if line["type"] == "trial"] == [1]
    assert again["retry_cost"] == first["retry_cost"] and again["tasks"][0]["successes"] == 2


def test_the_request_carries_tools_and_workload_settings_and_the_next_user_turn():
    doc = workload(
        settings={
            "stream": False,
            "temperature": 0,
            "tool_choice": "auto",
            "parallel_tool_calls": False,
        }
    )
    doc["tasks"][0]["conversation"] = ["Hi", "Weather in Paris?"]
    doc["tasks"][0]["reference"] = [{"reply": "Hello"}, *doc["tasks"][0]["reference"]]
    whole = {
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": "z",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                        }
                    ],
                },
            }
        ]
    }
    client = FakeClient([ok(reply_chunks("Hello")), ok([(0, whole)]), ok(reply_chunks("18"))])
    section, _ = run(doc, client)
    body = client.bodies[1]
    assert (
        body["stream"] is False
        and body["parallel_tool_calls"] is False
        and body["tools"][0]["function"]["name"] == "get_weather"
    )
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert section["tasks"][0]["successes"] == 1


def test_a_call_cut_at_max_tokens_is_truncated_even_when_the_server_says_tool_calls():
    doc = workload(settings={"stream": True, "max_tokens": 10})
    cut = ok(call_chunks('{"city": "Par'))  # 10 output tokens: the whole budget
    section, _ = run(
        doc, FakeClient([cut, ok(call_chunks('{"city": "Paris"}', "c2")), ok(reply_chunks("18"))])
    )
    assert section["calls"]["stream_truncated"] == 1 and section["calls"]["invalid_json"] == 0


def test_an_invalid_call_below_the_token_limit_is_invalid_json_and_turns_carry_empty_content():
    doc = workload(settings={"stream": True, "max_tokens": 50})
    client = FakeClient(
        [
            ok(call_chunks('{"city": "Par')),
            ok(call_chunks('{"city": "Paris"}', "c2")),
            ok(reply_chunks("18")),
        ]
    )
    section, _ = run(doc, client)
    assert section["calls"]["invalid_json"] == 1 and section["calls"]["stream_truncated"] == 0
    assistant = client.bodies[1]["messages"][1]
    assert (
        assistant["content"] == "" and assistant["tool_calls"][0]["function"]["arguments"] == "{}"
    )


def test_validate_recomputes_the_agentic_section_from_the_journal_lines_alone():
    from epbench.generator.checks.evidence import first_difference, recompute

    section, journal = run(
        workload(trials=2),
        FakeClient(
            [RuntimeError("boom"), ok(call_chunks("{")), ok(call_chunks('{"city": "Paris"}')),
             ok(reply_chunks("18"))]
        ),
    )
    lines = json.loads(json.dumps(journal.lines))  # as read back from the file
    result = {"endpoint": {"pricing": CARD}, "agentic": section}
    again = recompute(result, lines)
    assert first_difference(result, again) is None
    tampered = {**result, "agentic": {**section, "success_rate": {
        **section["success_rate"], "value": 1.0}}}
    assert first_difference(tampered, again)[0] == "/agentic/success_rate/value"
