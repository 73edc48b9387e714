"""The Anthropic Messages and OpenAI Responses stream corpora (tests/streams/anthropic/,
tests/streams/responses/): epbench's client and assembler against what each stream must give,
and against the vendors' own SDK streaming helpers on the same bytes.

Every `NAME.sse` is replayed by a loopback server in pieces of 1..7 bytes (tests/sse_replay.py)
to epbench's `EndpointClient` (in the API's mode) and to the official SDK
(`anthropic.Anthropic().messages.stream(...).get_final_message()`,
`openai.OpenAI().responses.stream(...).get_final_response()`). `NAME.json` holds what epbench
must assemble (`expect`) and whether the SDK agrees (`"sdk": "agrees"`) or where and why the
SDK is wrong (`"sdk": {"differs": [fields], "why": ...}`); the test checks that the SDK really
differs in the named fields and agrees in all the others, so a named exception cannot go stale.
The SSE decoder and translator are also fed each stream split at every byte boundary.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anthropic
import openai
import pytest

from epbench.runner.agentic.assemble import assemble
from epbench.runner.apis import get_api
from epbench.runner.apis.anthropic_messages import STOP_REASONS
from epbench.runner.client import EndpointClient
from epbench.runner.sse import SSEDecoder
from tests.conftest import ROOT
from tests.sse_replay import replay_server

STREAMS = ROOT / "tests" / "streams"
CORPORA = {"anthropic-messages": STREAMS / "anthropic", "openai-responses": STREAMS / "responses"}
CASES = [(api, p.stem) for api, folder in CORPORA.items() for p in sorted(folder.glob("*.sse"))]
FIELDS = ("content", "reasoning", "calls", "finish_reason", "usage")
# max_tokens covers the largest output any stream reports (140, reasoning included): usage past
# the request's limit is usage_implausible (epbench.core.usage_bounds).
BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 256,
        "stream": True}


def _arguments(value: Any) -> Any:
    """Call arguments compared as JSON values when they parse, else as the text that came."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def ours(api: str, port: int, name: str) -> dict[str, Any]:
    async def go() -> Any:
        client = EndpointClient(f"http://127.0.0.1:{port}/{name}/v1", "test-key", None, 10.0, 1,
                                api=api)
        try:
            return await client.chat(dict(BODY), keep_chunks=True)
        finally:
            await client.aclose()

    res = asyncio.run(go())
    if res.error_class is not None:
        return {"error": res.error_class}
    msg = assemble(res.chunks)
    return {
        "content": msg.content,
        "reasoning": msg.reasoning,
        "calls": [{"id": c.id, "name": c.name, "arguments": _arguments(c.arguments)}
                  for c in msg.calls],
        "finish_reason": msg.finish_reason,
        "usage": {"input": res.input_tokens, "output": res.output_tokens,
                  "cache_read": res.cache_read_tokens, "cache_write": res.cache_write_tokens,
                  "reasoning": res.reasoning_tokens},
    }


def sdk_anthropic(port: int, name: str) -> dict[str, Any]:
    client = anthropic.Anthropic(base_url=f"http://127.0.0.1:{port}/{name}", api_key="test-key",
                                 max_retries=0)
    try:
        with client.messages.stream(model="m", max_tokens=256,
                                    messages=[{"role": "user", "content": "hi"}]) as stream:
            msg = stream.get_final_message()
    except Exception as exc:  # the SDK's failure is the observation
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}
    u = msg.usage
    read, write = u.cache_read_input_tokens, u.cache_creation_input_tokens
    details = getattr(u, "output_tokens_details", None)
    return {
        "content": "".join(b.text for b in msg.content if b.type == "text"),
        "reasoning": "".join(b.thinking for b in msg.content if b.type == "thinking"),
        "calls": [{"id": b.id, "name": b.name, "arguments": b.input}
                  for b in msg.content if b.type == "tool_use"],
        "finish_reason": STOP_REASONS.get(msg.stop_reason or "", msg.stop_reason),
        "usage": {"input": u.input_tokens + (read or 0) + (write or 0), "output": u.output_tokens,
                  "cache_read": read, "cache_write": write,
                  "reasoning": details.thinking_tokens if details is not None else None},
    }


def sdk_responses(port: int, name: str) -> dict[str, Any]:
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/{name}/v1", api_key="test-key",
                           max_retries=0)
    try:
        with client.responses.stream(model="m", input="hi") as stream:
            for _ in stream:
                pass
            response = stream.get_final_response()
    except Exception as exc:  # the SDK's failure is the observation
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}
    content, reasoning, calls = [], [], []
    for item in response.output:
        if item.type == "message":
            content += [p.text for p in item.content if p.type == "output_text"]
        elif item.type == "reasoning":
            reasoning += [s.text for s in item.summary]
        elif item.type == "function_call":
            calls.append({"id": item.call_id, "name": item.name,
                          "arguments": _arguments(item.arguments)})
    u = response.usage
    assert u is not None
    return {
        "content": "".join(content),
        "reasoning": "".join(reasoning),
        "calls": calls,
        "finish_reason": "tool_calls" if calls else "stop",
        "usage": {"input": u.input_tokens, "output": u.output_tokens,
                  "cache_read": u.input_tokens_details.cached_tokens, "cache_write": None,
                  "reasoning": u.output_tokens_details.reasoning_tokens},
    }


SDK = {"anthropic-messages": sdk_anthropic, "openai-responses": sdk_responses}


def load(api: str, name: str) -> tuple[bytes, dict[str, Any]]:
    folder = CORPORA[api]
    return (folder / f"{name}.sse").read_bytes(), json.loads(
        (folder / f"{name}.json").read_text("utf-8"))


@pytest.fixture(scope="module")
def ports():
    with replay_server(CORPORA["anthropic-messages"]) as a, \
            replay_server(CORPORA["openai-responses"]) as r:
        yield {"anthropic-messages": a, "openai-responses": r}


def test_each_corpus_holds_at_least_fifteen_streams_each_with_its_expectation():
    for folder in CORPORA.values():
        names = sorted(p.stem for p in folder.glob("*.sse"))
        assert len(names) >= 15, folder
        for name in names:
            assert (folder / f"{name}.json").is_file(), name


@pytest.mark.parametrize(("api", "name"), CASES)
def test_epbench_assembles_each_stream_replayed_in_small_pieces_as_expected(ports, api, name):
    _, spec = load(api, name)
    assert ours(api, ports[api], name) == spec["expect"]


@pytest.mark.parametrize(("api", "name"), CASES)
def test_the_official_sdk_agrees_except_where_the_corpus_names_its_error(ports, api, name):
    _, spec = load(api, name)
    mine = spec["expect"]
    theirs = SDK[api](ports[api], name)
    named = [] if spec["sdk"] == "agrees" else spec["sdk"]["differs"]
    # "error" named: exactly one side fails; else both fail or neither does.
    assert (("error" in mine) != ("error" in theirs)) == ("error" in named), (mine, theirs)
    if "error" in mine or "error" in theirs:
        return
    for field in FIELDS:
        if field in named:
            assert mine[field] != theirs[field], f"{field}: the SDK no longer differs here"
        else:
            assert mine[field] == theirs[field], (field, mine[field], theirs[field])


@pytest.mark.parametrize(("api", "name"), CASES)
def test_a_stream_split_at_any_byte_boundary_translates_like_the_whole(api, name):
    data, _ = load(api, name)

    def neutral(reads: list[bytes]) -> list[dict[str, Any]]:
        """The neutral events, up to the payload that fails (not one JSON value, or out of
        the API's order), which ends the list with what it raised."""
        decoder = SSEDecoder()
        payloads = [p for piece in reads for p in decoder.feed(piece)] + decoder.close()
        translator = get_api(api).translator()
        out: list[dict[str, Any]] = []
        for p in payloads:
            try:
                out += translator.event(json.loads(p))
            except ValueError as exc:
                return [*out, {"raised": type(exc).__name__}]
        return out

    whole = neutral([data])
    assert whole
    for cut in range(1, len(data)):
        assert neutral([data[:cut], data[cut:]]) == whole, cut
