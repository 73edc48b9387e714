"""Capabilities, not failures: does the endpoint stream tool calls the way a workload asks?

Some servers refuse a feature outright rather than answer badly: llama-cpp-python's server
answers a streamed request that offers tools with `tool_choice: auto` with a 200 and an empty
stream (its log says "Automatic streaming tool choice is not supported"). Run as is, every
request of every trial would be filed `truncated` and the workload would measure nothing.

So before the first trial of a streamed workload with tools, one probe request (the
workload's tools and the settings of its first step, a neutral user message, 64 tokens) is
sent streamed and, if it fails with nothing streamed and no finish reason, again unstreamed.
Failing streamed but answering unstreamed is
a capability finding: streamed tool calls are refused, in the endpoint's words. The workload
then runs with the endpoint file's declared fallback (`fallbacks: {streamed_tool_calls:
non-streamed}`), which the result states, or stops with a message saying how to declare one.
An endpoint that fails both ways is not refusing a feature: the trials run and count it.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from epbench.core.agentic_plan import FEATURE, NON_STREAMED, with_fallbacks
from epbench.core.errors import RunError
from epbench.runner.agentic.model import Workload

# Long enough for a whole first tool call: vLLM streams its first tool-call delta only once
# the function name is complete (none within 16 tokens of the tiny test model, 2 by 32).
_PROBE_TOKENS = 64
# How a refusal shows: the request is rejected, or the stream is empty, cut, or not SSE.
REFUSALS = frozenset({"http_4xx", "truncated", "empty", "stream_error", "protocol"})


class CapabilityRefused(RunError):
    """The endpoint refuses a feature the workload needs and declares no fallback."""


def probe_body(workload: Workload, model: str, stream: bool) -> dict[str, Any]:
    s = workload.settings
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "user", "content": "Capability check: reply with OK."}],
        "tools": [t.openai_spec() for t in workload.tools],
        "stream": stream,
        "max_tokens": _PROBE_TOKENS,
    }
    for key in ("temperature", "tool_choice", "parallel_tool_calls"):
        value = s.tool_choice_at(1) if key == "tool_choice" else getattr(s, key)
        if value is not None:
            body[key] = value
    return json.loads(json.dumps(body))


async def streamed_tools_refusal(client: Any, workload: Workload, model: str) -> str | None:
    """None when the endpoint answers the workload's streamed tool requests (or fails them
    the same way unstreamed); else the refusal, in the endpoint's words where it gave any."""
    if not (workload.settings.stream and workload.tools):
        return None
    streamed = await client.chat(probe_body(workload, model, True), keep_chunks=True)
    if streamed.error_class not in REFUSALS or streamed.content_events:
        return None  # answered, or busy or unreachable (which is not a refusal)
    if streamed.finish_reason is not None:
        return None  # the stream ran to its end and said why: an answer, if an empty one
    plain = await client.chat(probe_body(workload, model, False), keep_chunks=True)
    if plain.error_class is not None:
        return None
    return (
        f"a streamed request offering tools (tool_choice {workload.settings.tool_choice!r}) "
        f"failed ({streamed.error_class}: {(streamed.error or '')[:200]}) while the same "
        "request unstreamed was answered"
    )


def apply_fallback(
    workload: Workload, refusal: str, fallbacks: dict[str, str], endpoint_id: str
) -> tuple[Workload, dict[str, str]]:
    """The workload as the declared fallback runs it, and the fallback to record; or
    CapabilityRefused when the endpoint file declares none."""
    if fallbacks.get(FEATURE) != NON_STREAMED:
        raise CapabilityRefused(
            f"endpoint {endpoint_id} refuses streamed tool calls: {refusal}; workload "
            f"{workload.id} stopped. To run it without streaming, declare in the endpoint "
            f"file: fallbacks: {{{FEATURE}: {NON_STREAMED}}}"
        )
    used = {"feature": FEATURE, "fallback": NON_STREAMED, "reason": refusal[:500]}
    return replace(workload, settings=with_fallbacks(workload.settings, [used])), used
