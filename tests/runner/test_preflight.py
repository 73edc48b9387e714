"""The preflight: an unreachable endpoint, a refused key or an unknown model stops a run
before its first point, in one line; anything else lets the run measure it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import httpx
import pytest

from epbench.core.errors import RunError
from epbench.runner.client import EndpointClient
from epbench.runner.preflight import preflight

ANSWER = {"choices": [{"message": {"content": "OK"}, "finish_reason": "length"}],
          "usage": {"prompt_tokens": 9, "completion_tokens": 1}}


def check(handler: Callable[[httpx.Request], httpx.Response], model: str = "m") -> None:
    async def go() -> None:
        clients = [
            EndpointClient("http://endpoint.test/v1", "sk-secret-key-value-1234", None, t, 1,
                           transport=httpx.MockTransport(handler))
            for t in (4.0, 30.0)
        ]
        try:
            await preflight(clients[0], clients[1], model, "endpoint test")
        finally:
            for client in clients:
                await client.aclose()

    asyncio.run(go())


def test_an_unreachable_endpoint_is_one_line_naming_it():
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    with pytest.raises(RunError, match=r"endpoint test: cannot reach http://endpoint\.test/v1"):
        check(refuse)


@pytest.mark.parametrize("path", ["/v1/models", "/v1/chat/completions"])
def test_a_refused_key_stops_the_run_and_the_key_is_not_in_the_message(path):
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == path:
            return httpx.Response(401, json={"error": "bad key"})
        if request.url.path == "/v1/models":
            return httpx.Response(404)
        return httpx.Response(200, json=ANSWER)

    with pytest.raises(RunError, match="refused the API key") as caught:
        check(handler)
    assert "sk-secret" not in str(caught.value)


def test_a_model_the_endpoint_does_not_list_is_named_with_what_it_serves():
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"data": [{"id": "alpha"}, {"id": "beta"}]})

    with pytest.raises(RunError, match=r"does not serve model 'm'; it serves: alpha, beta"):
        check(handler)


def test_an_endpoint_without_models_that_answers_or_is_busy_passes():
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        if request.url.path == "/v1/models":
            return httpx.Response(404)
        body = json.loads(request.content)
        assert body["max_tokens"] == 1 and body["stream"] is False
        return httpx.Response(429 if len(seen) > 2 else 200, json=ANSWER)

    check(handler)
    check(handler)  # a 429 is what the run is there to measure, not a reason to stop
    assert seen == ["/v1/models", "/v1/chat/completions"] * 2
