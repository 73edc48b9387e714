"""The emulator's HTTP API on loopback: stream format, JSON body, models, stats, log, reset."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from epbench.runner.emulator.tokens import VOCABULARY
from tests.emulator_fixture import running_emulator

pytestmark = pytest.mark.integration

FAST = {"seed": 3, "ttft_ms": 1, "prefill_ms_per_1k_tokens": 0, "tpot_ms": 1, "jitter": 0}


HTTP = httpx.Client(timeout=30)


@pytest.fixture(scope="module")
def emu():
    with running_emulator(FAST) as emulator:
        yield emulator


def chat(content: str = "hello " * 100, max_tokens: int = 5, **extra: Any) -> dict[str, Any]:
    return {"model": "emulated-8b", "messages": [{"role": "user", "content": content}],
            "max_tokens": max_tokens, **extra}


def stream_events(url: str, body: dict[str, Any], request_id: str | None = None) -> list[Any]:
    """The decoded `data:` payloads of one streamed response ([DONE] kept as the string)."""
    headers = {"x-epbench-request-id": request_id} if request_id else {}
    events: list[Any] = []
    with HTTP.stream("POST", url + "/chat/completions", json=body, headers=headers,
                      timeout=30) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        for line in response.iter_lines():
            if line.startswith("data: "):
                payload = line[len("data: "):]
                events.append(payload if payload == "[DONE]" else json.loads(payload))
    return events


def test_a_stream_is_role_chunk_then_one_chunk_per_token_then_finish_usage_and_done(emu):
    body = chat(stream=True, stream_options={"include_usage": True})
    events = stream_events(emu.base_url, body)
    assert len(events) == 1 + 5 + 1 + 1 + 1
    role, tokens, finish, usage, done = events[0], events[1:6], events[6], events[7], events[8]
    assert role["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert role["object"] == "chat.completion.chunk" and role["model"] == "emulated-8b"
    words = [chunk["choices"][0]["delta"]["content"] for chunk in tokens]
    assert all(word in VOCABULARY for word in words)
    assert all(chunk["choices"][0]["finish_reason"] is None for chunk in tokens)
    assert finish["choices"][0] == {"index": 0, "delta": {}, "logprobs": None,
                                    "finish_reason": "length"}
    # 600 characters / 4 characters per token = 150 prompt tokens
    assert usage["choices"] == []
    assert usage["usage"] == {"prompt_tokens": 150, "completion_tokens": 5, "total_tokens": 155}
    assert done == "[DONE]"
    assert len({event["id"] for event in events[:-1]}) == 1


def test_a_stream_without_include_usage_has_no_usage_chunk(emu):
    events = stream_events(emu.base_url, chat(stream=True, max_tokens=3))
    assert len(events) == 1 + 3 + 1 + 1
    assert all("usage" not in event for event in events[:-1])


def test_a_non_streaming_request_gets_one_completion_body_with_usage(emu):
    response = HTTP.post(emu.base_url + "/chat/completions", json=chat("hi there", 4))
    assert response.status_code == 200
    data = response.json()
    assert data["object"] == "chat.completion"
    choice = data["choices"][0]
    assert choice["finish_reason"] == "length"
    assert choice["message"]["role"] == "assistant"
    assert choice["message"]["content"].count(" ") == 4  # four one-word tokens
    # "hi there" is 8 characters: ceil(8 / 4) = 2 prompt tokens
    assert data["usage"] == {"prompt_tokens": 2, "completion_tokens": 4, "total_tokens": 6}


def test_models_lists_the_configured_model(emu):
    data = HTTP.get(emu.base_url + "/models").json()
    assert [model["id"] for model in data["data"]] == ["emulated-8b"]


def test_unknown_routes_and_bad_bodies_get_json_errors(emu):
    assert HTTP.get(emu.root_url + "/nope").status_code == 404
    bad = HTTP.post(emu.base_url + "/chat/completions", content=b"{not json")
    assert bad.status_code == 400
    assert bad.json()["error"]["type"] == "invalid_request_error"
    empty = HTTP.post(emu.base_url + "/chat/completions", json={"messages": []})
    assert empty.status_code == 400


def test_the_request_log_has_server_times_and_the_client_request_id(emu):
    emu.reset()
    body = chat("x" * 4000, 10, stream=True)
    t_before = time.perf_counter_ns()
    t_client_first = None
    with HTTP.stream("POST", emu.base_url + "/chat/completions", json=body,
                     headers={"x-epbench-request-id": "c1-00042"}) as response:
        for line in response.iter_lines():
            if t_client_first is None and '"content":" ' in line:
                t_client_first = time.perf_counter_ns()
    t_after = time.perf_counter_ns()
    (record,) = emu.requests()
    assert record["request_id"] == "c1-00042"
    assert t_before < record["t_recv_ns"] <= record["t_admit_ns"] < record["t_first_byte_ns"]
    assert record["t_first_byte_ns"] < record["t_last_byte_ns"] < t_after
    # one clock (CLOCK_MONOTONIC) in both processes: the client sees the first token after
    # the server sent it, and soon after (loose bound: this machine is shared)
    assert t_client_first is not None
    assert 0 < t_client_first - record["t_first_byte_ns"] < 250e6
    assert record["status"] == 200 and record["fault"] is None
    assert record["prompt_tokens"] == 1000 and record["completion_tokens"] == 10


def test_stats_count_requests_and_reset_clears_stats_and_log(emu):
    emu.reset()
    for _ in range(3):
        HTTP.post(emu.base_url + "/chat/completions", json=chat(max_tokens=1))
    stats = emu.stats()
    assert stats["requests"] == 3
    assert set(stats["faults"]) == {"rate_limit", "http_5xx", "drop_mid_stream",
                                    "malformed_sse", "stream_error", "empty_choices", "stall",
                                    "overloaded"}
    assert sum(stats["faults"].values()) == 0
    assert "agentic" in stats
    assert len(emu.requests()) == 3
    emu.reset()
    assert emu.stats()["requests"] == 0
    assert emu.requests() == []


def test_a_request_id_is_generated_when_the_client_sends_none(emu):
    emu.reset()
    response = HTTP.post(emu.base_url + "/chat/completions", json=chat(max_tokens=1))
    (record,) = emu.requests()
    assert record["request_id"] == response.headers["x-epbench-request-id"]
    assert record["request_id"].startswith("emu-")


def test_a_request_with_tools_gets_a_well_formed_answer(emu):
    tools = [{"type": "function", "function": {
        "name": "get_weather", "description": "Weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
    body = chat("What is the weather in Paris?", 8, tools=tools, tool_choice="auto",
                stream=True, stream_options={"include_usage": True})
    events = stream_events(emu.base_url, body)
    assert events[-1] == "[DONE]"
    assert events[-2]["usage"]["completion_tokens"] >= 1
    plain = HTTP.post(emu.base_url + "/chat/completions", json={**body, "stream": False})
    assert plain.status_code == 200
    assert plain.json()["choices"][0]["message"]["role"] == "assistant"


def test_same_seed_gives_the_same_words_in_another_process_and_a_retry_gets_fresh_draws(emu):
    body = chat("determinism " * 10, 12)
    emu.reset()
    first = HTTP.post(emu.base_url + "/chat/completions", json=body).json()
    retry = HTTP.post(emu.base_url + "/chat/completions", json=body).json()
    with running_emulator(FAST) as other:
        again = HTTP.post(other.base_url + "/chat/completions", json=body).json()
    text = first["choices"][0]["message"]["content"]
    assert again["choices"][0]["message"]["content"] == text
    assert retry["choices"][0]["message"]["content"] != text
    emu.reset()  # forgets how often each body was seen: the same draws again
    replay = HTTP.post(emu.base_url + "/chat/completions", json=body).json()
    assert replay["choices"][0]["message"]["content"] == text


def test_small_writes_are_not_held_back_by_nagle(emu):
    # A whole request in one write, the answer read to the end: with Nagle on the server's
    # socket the second write (the body after the headers) waits for the client's delayed
    # ACK, about 40 ms on Linux; without it a round trip on loopback takes about a millisecond.
    import socket

    body = json.dumps(chat("nagle", 1)).encode()
    request = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
               b"\r\nContent-Length: %d\r\n\r\n" % len(body)) + body
    times = []
    with socket.create_connection(("127.0.0.1", emu.port)) as sock:
        for _ in range(15):
            t = time.perf_counter()
            sock.sendall(request)
            data = b""
            while not data.endswith(b"}"):  # the JSON body ends the response
                data += sock.recv(65536)
            times.append((time.perf_counter() - t) * 1000)
    assert sorted(times)[len(times) // 2] < 30, times
