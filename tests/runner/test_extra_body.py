"""`request.extra_body` in an endpoint file: vendor options (vLLM's `structured_outputs`,
`chat_template_kwargs`, a provider's routing fields) merged into every request body on all
three APIs, schema-checked, disclosed with the result, and never able to change what epbench
measures with."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from epbench.core.errors import InputError
from epbench.runner.client import EndpointClient
from epbench.runner.endpoint import load_endpoint

EXTRA = {"chat_template_kwargs": {"enable_thinking": False}, "priority": 3}


def endpoint_file(tmp_path: Path, extra: dict[str, Any]) -> Path:
    doc = {"kind": "endpoint", "schema_version": 1, "id": "x", "provider": "p",
           "model": {"name": "m"}, "api": "openai-chat", "base_url": "http://127.0.0.1:9/v1",
           "api_key_env": None, "division": "self-hosted", "region": "local",
           "pricing": {"usd_per_hour": 1.0, "effective_date": "2026-11-01"},
           "request": {"extra_body": extra}}
    path = tmp_path / "x.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def sent_body(api: str, extra: dict[str, Any]) -> dict[str, Any]:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(500, json={"error": {"message": "stop here"}})

    async def main() -> None:
        client = EndpointClient("http://127.0.0.1:9/v1", None, None, 5.0, 1,
                                transport=httpx.MockTransport(handler), api=api,
                                extra_body=extra)
        await client.chat({"model": "m", "messages": [{"role": "user", "content": "hi"}],
                           "max_tokens": 4, "stream": True})
        await client.aclose()

    asyncio.run(main())
    return seen[0]


@pytest.mark.parametrize("api", ["openai-chat", "openai-responses", "anthropic-messages"])
def test_extra_body_reaches_every_api(api: str) -> None:
    body = sent_body(api, EXTRA)
    assert body["chat_template_kwargs"] == {"enable_thinking": False} and body["priority"] == 3
    assert body["model"] == "m" and body["stream"] is True


def test_extra_body_never_overrides_what_the_request_already_sets() -> None:
    body = sent_body("openai-chat", {"model": "other", "max_tokens": 9999, "stream": False})
    assert (body["model"], body["max_tokens"], body["stream"]) == ("m", 4, True)


@pytest.mark.parametrize("field", ["max_tokens", "stream", "ignore_eos", "messages"])
def test_an_endpoint_file_setting_a_measured_field_in_extra_body_is_refused(
    tmp_path: Path, field: str
) -> None:
    with pytest.raises(InputError, match="/request/extra_body"):
        load_endpoint(endpoint_file(tmp_path, {field: 1}))


def test_extra_body_is_loaded_and_disclosed_with_the_endpoint(tmp_path: Path) -> None:
    ep = load_endpoint(endpoint_file(tmp_path, EXTRA))
    assert ep.extra_body == EXTRA
    assert ep.doc["request"]["extra_body"] == EXTRA  # what results copy
