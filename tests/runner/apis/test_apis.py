"""The wire-API seam (runner/apis): each API's request builder on the same chat-shaped
conversation, and its translator on hand-written events, with no server."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from epbench.runner.apis import API_NAMES, get_api
from epbench.runner.apis.anthropic_messages import MessagesTranslator
from epbench.runner.apis.anthropic_messages import build as build_messages
from epbench.runner.apis.anthropic_messages import whole as whole_message
from epbench.runner.apis.openai_responses import ResponsesTranslator
from epbench.runner.apis.openai_responses import build as build_responses
from epbench.runner.apis.openai_responses import whole as whole_response
from epbench.runner.client import ChatResponse, EndpointClient
from tests.conftest import ROOT

CITY = {"type": "object", "properties": {"city": {"type": "string"}}}
TOOL = {"type": "function",
        "function": {"name": "get_weather", "description": "Weather.", "parameters": CITY}}
CONVERSATION = {
    "model": "m",
    "stream": True,
    "max_tokens": 100,
    "temperature": 0.0,
    "tool_choice": "auto",
    "parallel_tool_calls": False,
    "tools": [TOOL],
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris and Oslo?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
            {"id": "c2", "type": "function",
             "function": {"name": "get_weather", "arguments": "{not json"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "{\"temp\": 12}"},
        {"role": "tool", "tool_call_id": "c2", "content": "invalid call"},
        {"role": "assistant", "content": "Paris 12."},
        {"role": "user", "content": "Thanks."},
    ],
}


def test_the_three_apis_are_registered_and_an_unknown_one_is_refused():
    assert API_NAMES == ("openai-chat", "openai-responses", "anthropic-messages")
    assert get_api(None).name == "openai-chat"
    with pytest.raises(ValueError, match="unknown api"):
        get_api("soap")


def test_anthropic_request_has_system_tool_use_blocks_and_one_tool_result_turn():
    body = build_messages(CONVERSATION)
    assert body["system"] == "Be brief."
    assert body["max_tokens"] == 100 and body["stream"] is True and body["temperature"] == 0.0
    assert body["tools"] == [{"name": "get_weather", "description": "Weather.",
                              "input_schema": TOOL["function"]["parameters"]}]
    assert body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "user", "assistant", "user"]  # alternating
    calls = body["messages"][1]["content"]
    assert calls == [
        {"type": "tool_use", "id": "c1", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "c2", "name": "get_weather", "input": {}},  # invalid JSON
    ]
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "c1", "content": "{\"temp\": 12}"},
        {"type": "tool_result", "tool_use_id": "c2", "content": "invalid call"},
    ]
    assert "stream_options" not in body and "parallel_tool_calls" not in body


def test_anthropic_requests_without_max_tokens_get_the_default_the_api_requires():
    body = build_messages({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    assert body["max_tokens"] == 4096 and "system" not in body and "stream" not in body


def test_anthropic_tool_choice_maps_required_none_and_a_named_tool():
    base = {"model": "m", "messages": [{"role": "user", "content": "x"}], "tools": [TOOL]}
    assert build_messages({**base, "tool_choice": "required"})["tool_choice"] == {"type": "any"}
    assert build_messages({**base, "tool_choice": "none"})["tool_choice"] == {"type": "none"}
    named = {"type": "function", "function": {"name": "get_weather"}}
    assert build_messages({**base, "tool_choice": named})["tool_choice"] == {
        "type": "tool", "name": "get_weather"}


def test_responses_request_has_instructions_function_call_items_and_outputs():
    body = build_responses(CONVERSATION)
    assert body["instructions"] == "Be brief." and body["store"] is False
    assert body["max_output_tokens"] == 100 and body["parallel_tool_calls"] is False
    assert body["tools"] == [{"type": "function", "name": "get_weather",
                              "description": "Weather.",
                              "parameters": TOOL["function"]["parameters"], "strict": False}]
    assert body["input"] == [
        {"role": "user", "content": "Weather in Paris and Oslo?"},
        {"type": "function_call", "call_id": "c1", "name": "get_weather",
         "arguments": "{\"city\": \"Paris\"}"},
        {"type": "function_call", "call_id": "c2", "name": "get_weather",
         "arguments": "{not json"},
        {"type": "function_call_output", "call_id": "c1", "output": "{\"temp\": 12}"},
        {"type": "function_call_output", "call_id": "c2", "output": "invalid call"},
        {"role": "assistant", "content": "Paris 12."},
        {"role": "user", "content": "Thanks."},
    ]


def test_anthropic_events_become_neutral_deltas_usage_and_the_end():
    t = MessagesTranslator()
    start = {"type": "message_start", "message": {"usage": {
        "input_tokens": 10, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 50,
        "output_tokens": 1}}}
    assert t.event(start) == [{"usage": {
        "prompt_tokens": 160, "completion_tokens": 1,
        "prompt_tokens_details": {"cached_tokens": 50, "cache_write_tokens": 100}}}]
    assert t.event({"type": "ping"}) == []
    t.event({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking"}})
    assert t.event({"type": "content_block_delta", "index": 0, "delta": {
        "type": "thinking_delta", "thinking": "hm"}})[0]["choices"][0]["delta"] == {
        "reasoning_content": "hm"}
    opened = t.event({"type": "content_block_start", "index": 1, "content_block": {
        "type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}})
    assert opened[0]["choices"][0]["delta"]["tool_calls"] == [
        {"index": 1, "id": "toolu_1", "function": {"name": "f", "arguments": ""}}]
    empty = {"type": "content_block_delta", "index": 1,
             "delta": {"type": "input_json_delta", "partial_json": ""}}
    assert t.event(empty) == []
    assert t.event({"type": "content_block_stop", "index": 1}) == [
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 1, "function": {"arguments": "{}"}}]}, "finish_reason": None}]}]
    end = t.event({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
                   "usage": {"output_tokens": 30, "output_tokens_details": {"thinking_tokens": 9}}})
    assert end[0]["usage"]["completion_tokens"] == 30
    assert end[0]["usage"]["completion_tokens_details"] == {"reasoning_tokens": 9}
    assert end[0]["usage"]["prompt_tokens"] == 160  # message_start's input survives
    assert end[1]["choices"][0]["finish_reason"] == "tool_calls"
    assert t.event({"type": "message_stop"}) == [{"done": True}]
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert t.event(error) == [{"error": {"type": "overloaded_error", "message": "Overloaded"}}]


def test_responses_events_become_neutral_deltas_and_whole_arguments_only_when_no_delta_came():
    t = ResponsesTranslator()
    added = {"type": "response.output_item.added", "output_index": 2, "item": {
        "type": "function_call", "call_id": "call_9", "name": "f", "arguments": ""}}
    assert t.event(added)[0]["choices"][0]["delta"]["tool_calls"][0]["id"] == "call_9"
    piece = {"type": "response.function_call_arguments.delta", "output_index": 2, "delta": "{}"}
    assert t.event(piece)[0]["choices"][0]["delta"]["tool_calls"][0]["function"] == {
        "arguments": "{}"}
    done = {"type": "response.function_call_arguments.done", "output_index": 2,
            "arguments": "{}"}
    assert t.event(done) == []  # already streamed
    fresh = ResponsesTranslator()
    fresh.event(added)
    assert fresh.event(done)[0]["choices"][0]["delta"]["tool_calls"][0]["function"] == {
        "arguments": "{}"}
    summary = {"type": "response.reasoning_summary_text.delta", "delta": "think"}
    assert t.event(summary)[0]["choices"][0]["delta"] == {"reasoning_content": "think"}
    completed = t.event({"type": "response.completed", "response": {"usage": {
        "input_tokens": 100, "input_tokens_details": {"cached_tokens": 64},
        "output_tokens": 50, "output_tokens_details": {"reasoning_tokens": 32}}}})
    assert completed[0] == {"usage": {
        "prompt_tokens": 100, "completion_tokens": 50,
        "prompt_tokens_details": {"cached_tokens": 64},
        "completion_tokens_details": {"reasoning_tokens": 32}}}
    assert completed[1]["choices"][0]["finish_reason"] == "tool_calls"
    assert completed[2] == {"done": True}
    failed = {"type": "response.failed", "response": {"error": {"code": "server_error",
                                                                 "message": "boom"}}}
    assert t.event(failed) == [{"error": {"type": "server_error", "message": "boom"}}]


def test_whole_answers_of_both_apis_become_chat_completion_bodies():
    message = whole_message({"type": "message", "content": [
        {"type": "thinking", "thinking": "t"}, {"type": "text", "text": "a"},
        {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"x": 1}}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 5, "output_tokens": 7}})
    choice = message["choices"][0]
    assert choice["message"]["content"] == "a" and choice["message"]["reasoning_content"] == "t"
    assert choice["message"]["tool_calls"][0]["function"] == {"name": "f",
                                                              "arguments": "{\"x\":1}"}
    assert choice["finish_reason"] == "tool_calls" and message["usage"]["prompt_tokens"] == 5
    response = whole_response({"status": "incomplete", "incomplete_details": {
        "reason": "max_output_tokens"}, "output": [{"type": "message", "content": [
            {"type": "output_text", "text": "cut"}]}], "usage": {"input_tokens": 3,
                                                                "output_tokens": 4}})
    assert response["choices"][0]["message"]["content"] == "cut"
    assert response["choices"][0]["finish_reason"] == "length"


def send(client: EndpointClient, body: dict) -> ChatResponse:
    return asyncio.run(client.chat(body))


def _capture(api: str, reply: bytes, status: int = 200,
             content_type: str = "text/event-stream") -> tuple[list[httpx.Request], EndpointClient]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, content=reply, headers={"content-type": content_type})

    client = EndpointClient("http://test/v1", "sk-secret", {"x-extra": "1"}, 5.0, 1,
                            transport=httpx.MockTransport(handler), api=api)
    return seen, client


def test_anthropic_requests_go_to_messages_with_x_api_key_and_a_version():
    seen, client = _capture("anthropic-messages", b"")
    send(client, {"model": "m", "messages": [{"role": "user", "content": "hi"}],
                       "stream": True})
    request = seen[0]
    assert str(request.url) == "http://test/v1/messages"
    assert request.headers["x-api-key"] == "sk-secret"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in request.headers and request.headers["x-extra"] == "1"
    assert json.loads(request.content)["max_tokens"] == 4096


def test_responses_requests_go_to_responses_with_a_bearer_token():
    seen, client = _capture("openai-responses", b"")
    send(client, {"model": "m", "messages": [{"role": "user", "content": "hi"}],
                       "stream": True})
    assert str(seen[0].url) == "http://test/v1/responses"
    assert seen[0].headers["authorization"] == "Bearer sk-secret"


def test_an_overloaded_529_and_an_overloaded_event_are_the_overloaded_class():
    body = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    _, client = _capture("anthropic-messages", body, status=529,
                         content_type="application/json")
    res = send(client, {"model": "m", "messages": [{"role": "user", "content": "x"}]})
    assert res.error_class == "overloaded" and res.status == 529
    stream = (b'event: message_start\ndata: {"type":"message_start","message":{"usage":'
              b'{"input_tokens":3,"output_tokens":1}}}\n\n'
              b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error",'
              b'"message":"Overloaded"}}\n\n')
    _, client = _capture("anthropic-messages", stream)
    res = send(client, {"model": "m", "messages": [{"role": "user", "content": "x"}],
                             "stream": True})
    assert res.error_class == "overloaded"
    api_error = stream.replace(b"overloaded_error", b"api_error")
    _, client = _capture("anthropic-messages", api_error)
    res = send(client, {"model": "m", "messages": [{"role": "user", "content": "x"}],
                             "stream": True})
    assert res.error_class == "stream_error"


def test_reasoning_first_sets_ttft_and_the_answer_sets_time_to_first_answer():
    stream = (
        b'data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{"reasoning_content":"hm"}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{"content":"A"}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
        b'data: {"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":9,'
        b'"completion_tokens_details":{"reasoning_tokens":8},'
        b'"prompt_tokens_details":{"cached_tokens":2}}}\n\ndata: [DONE]\n\n'
    )

    class Stamped(httpx.AsyncByteStream):
        async def __aiter__(self):  # type: ignore[override]
            for i, event in enumerate(stream.split(b"\n\n")[:-1]):
                piece = type("B", (bytes,), {})(event + b"\n\n")
                piece.t_ns = 1_000 * (i + 1)  # arrival stamps the client reads
                yield piece

    client = EndpointClient("http://test/v1", None, None, 5.0, 1, transport=httpx.MockTransport(
        lambda r: httpx.Response(200, stream=Stamped(),
                                 headers={"content-type": "text/event-stream"})))
    res = send(client, {"model": "m", "messages": [], "stream": True})
    assert res.ok
    assert res.t_first_ns == 2_000 and res.t_first_answer_ns == 3_000
    assert res.reasoning_tokens == 8 and res.cache_read_tokens == 2
    assert res.cache_write_tokens is None and res.output_tokens == 9


def test_there_is_an_endpoint_template_for_each_api_and_each_one_validates():
    from epbench.core.documents import load_document
    from epbench.core.schema import check_schema

    folder = ROOT / "endpoints"
    apis = set()
    for path in sorted(folder.glob("*.yaml.example")):
        doc = load_document(path)
        assert check_schema(doc, "endpoint", str(path)) == [], path
        apis.add(doc["api"])
    assert apis == set(API_NAMES)


def test_settings_the_endpoint_refuses_are_left_out_of_every_request():
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=b"", headers={"content-type": "text/event-stream"})

    client = EndpointClient("http://test/v1", None, None, 5.0, 1, api="openai-responses",
                            transport=httpx.MockTransport(handler), omit=("temperature",))
    send(client, {"model": "m", "messages": [{"role": "user", "content": "x"}],
                  "temperature": 0.0, "top_p": 0.5, "stream": True})
    sent = json.loads(seen[0].content)
    assert "temperature" not in sent and sent["top_p"] == 0.5
