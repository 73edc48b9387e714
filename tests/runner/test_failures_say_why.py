"""Failures that say why: the end-of-run summary names each error class with the first
response's text (redacted, shortened), a prompt over the context is named with the limit the
endpoint reported, and a base_url whose path does not exist stops the preflight by name."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from epbench.core.errors import RunError
from epbench.runner.client import EndpointClient
from epbench.runner.failure_text import context_overflow, explain, first_errors
from epbench.runner.preflight import preflight

VLLM_400 = ('HTTP 400: {"object":"error","message":"This model\'s maximum context length is '
            '2048 tokens. However, you requested 2310 tokens (2182 in the messages, 128 in the '
            'completion).","type":"BadRequestError","param":null,"code":400}')
LLAMA_400 = ('HTTP 400: {"error":{"code":400,"message":"the request exceeds the available '
             'context size, try increasing it","type":"exceed_context_size_error",'
             '"n_prompt_tokens":2310,"n_ctx":2048}}')
OLD_LLAMA_400 = ('HTTP 400: {"error":{"code":400,"message":"the request exceeds the available '
                 'context size, try increasing it","type":"invalid_request_error"}}')


@pytest.mark.parametrize("text", [VLLM_400, LLAMA_400])
def test_a_prompt_over_the_context_is_named_with_the_limit_the_endpoint_reported(text: str):
    assert context_overflow(text) == (True, 2048)
    said = explain(text)
    assert said.startswith("prompt over the endpoint's context (limit 2048 tokens")
    assert len(said) < 300


def test_a_context_overflow_without_a_limit_says_the_limit_was_not_given():
    assert context_overflow(OLD_LLAMA_400) == (True, None)
    assert "limit not given" in explain(OLD_LLAMA_400)
    assert context_overflow("HTTP 400: bad request: unknown field 'tools'") == (False, None)


def test_the_first_error_text_of_each_class_is_counted_redacted_and_shortened(tmp_path: Path):
    journal = tmp_path / "events.jsonl"
    lines = [
        {"type": "request", "class": "ok", "error": None},
        {"type": "request", "class": "http_4xx",
         "error": "HTTP 404: no route /chat/completions for key sk-proj-abcdefghijklmnopqrstuvwx"
                  + " padding" * 40},
        {"type": "request", "class": "http_4xx", "error": "HTTP 404: later"},
        {"type": "request", "class": "timeout", "error": "no answer in 120 s"},
    ]
    journal.write_text("".join(json.dumps(line) + "\n" for line in lines))
    found = first_errors(journal)
    assert set(found) == {"http_4xx", "timeout"}
    assert found["http_4xx"]["count"] == 2
    assert found["http_4xx"]["first"].startswith("HTTP 404: no route /chat/completions")
    assert "sk-proj-abcdefghijklmnopqrstuvwx" not in found["http_4xx"]["first"]
    assert len(found["http_4xx"]["first"]) <= 160
    assert found["timeout"] == {"count": 1, "first": "no answer in 120 s"}


def test_the_run_summary_prints_each_error_class_with_its_first_text(tmp_path: Path):
    from epbench.runner.report import render

    summary = {"workload": "w", "endpoint": "e", "result": "r", "problems": [],
               "errors": {"http_4xx": {"count": 34, "first": explain(VLLM_400)}}}
    text = render(summary)
    assert "error http_4xx: 34 requests, the first said: prompt over the endpoint's context " \
           "(limit 2048 tokens" in text


def _preflight(base_url: str, handler) -> None:
    async def go() -> None:
        clients = [EndpointClient(base_url, None, None, t, 1,
                                  transport=httpx.MockTransport(handler)) for t in (4.0, 30.0)]
        try:
            await preflight(clients[0], clients[1], "m", "endpoint test")
        finally:
            for client in clients:
                await client.aclose()

    asyncio.run(go())


def test_a_base_url_without_v1_stops_the_preflight_naming_the_path():
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.startswith("/v1/"):
            return httpx.Response(200, json={"data": [{"id": "m"}]})
        return httpx.Response(404, text="Not Found")

    with pytest.raises(RunError) as caught:
        _preflight("http://endpoint.test", handler)
    text = str(caught.value)
    assert "no such path: http://endpoint.test/chat/completions answered HTTP 404" in text
    assert "/v1" in text
