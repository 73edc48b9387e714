"""One chat-completions request, from the body to the last byte: plan, queue, stream.

`plan()` decides everything up front from the request's seeded generator (fault, output
length, words or the player's script); `stream()` and `complete()` then play the plan against
the batching model. One content chunk is one decode step and one `send`: chunks are never
batched into one write, so the server's send times are what the client can observe.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from epbench.runner.emulator.agentic import play
from epbench.runner.emulator.batching import DecodeClock
from epbench.runner.emulator.faults import retry_after_header
from epbench.runner.emulator.frames import (
    assemble_message,
    completion_body,
)
from epbench.runner.emulator.native import CHAT, MESSAGES, error_body, native_body
from epbench.runner.emulator.native_frames import Tally
from epbench.runner.emulator.script import Script
from epbench.runner.emulator.settings import DEFAULT_MAX_TOKENS
from epbench.runner.emulator.state import EmulatorState, RequestRecord, draw_length
from epbench.runner.emulator.tokens import VOCABULARY, count_prompt_tokens

Send = Any  # the ASGI send callable
CUT_FAULTS = ("drop_mid_stream", "malformed_sse", "stream_error", "overloaded")
MAX_OUTPUT_TOKENS = 131_072  # a larger max_tokens is served as this many (a context's worth)
Frames = Any  # ChunkFrames, MessagesFrames or ResponsesFrames (the same methods)
SSE_HEADERS = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
JSON_HEADERS = [(b"content-type", b"application/json")]


class BadRequest(ValueError):
    """The body is not a chat-completions request (answered with 400)."""


@dataclass
class Plan:
    """What the emulator will do for one request, drawn before it waits for a slot."""

    stream: bool
    include_usage: bool
    prompt_tokens: int
    output_tokens: int
    finish_reason: str
    fault: str | None
    retry_after_s: float
    status_5xx: int
    cut: int  # content chunks sent before a drop / malformed line / error event
    first_word: int
    script: Script | None
    rng: Any
    api: str = CHAT
    reasoning: int = 0  # reasoning tokens streamed before the answer (no script only)
    tally: Tally | None = None


def parse_body(raw: bytes, api: str = CHAT) -> dict[str, Any]:
    """The JSON object of a request body; for chat, checked to have messages."""
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise BadRequest("the request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    if api != CHAT:
        return body
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("`messages` must be a non-empty list")
    return body


def plan(state: EmulatorState, raw: bytes, body: dict[str, Any], api: str = CHAT) -> Plan:
    """Draw the request's fault, length and words (or script) from its seeded generator.

    `body` is a chat-completions body (a native request's chat twin, `native.to_chat`)."""
    settings = state.settings
    rng = state.request_rng(raw)
    fault, retry_after = state.drawer.draw(rng)
    stream = body.get("stream") is True
    options = body.get("stream_options")
    include_usage = stream and isinstance(options, dict) and options.get("include_usage") is True
    limit = body.get("max_completion_tokens") or body.get("max_tokens")
    limit = limit if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0 else None
    drawn = draw_length(settings.output_tokens, rng) if settings.output_tokens else None
    if limit is not None and (body.get("ignore_eos") is True or drawn is None):
        length = limit
    elif limit is not None and drawn is not None:
        length = min(limit, drawn)
    else:
        length = drawn or DEFAULT_MAX_TOKENS
    length = min(length, MAX_OUTPUT_TOKENS)
    finish = "length" if limit is not None and length >= limit else "stop"
    # a request refused at the door never reaches the "model", so the player is not asked
    at_door = fault in ("rate_limit", "http_5xx") or (fault == "overloaded" and api == CHAT)
    script = None if at_door else play(state.player, body)
    if script is not None and not script.deltas:
        script = None  # nothing to say: answer with text
    if script is not None:
        length = max(1, len(script.deltas))
        finish = script.finish_reason
        if api != CHAT:
            script.deltas = sequential(script.deltas)
    prompt_tokens = count_prompt_tokens(body["messages"], settings.chars_per_token)
    reasoning = settings.reasoning_tokens if script is None else 0
    if reasoning and limit is not None:
        # as the real APIs count it (chat max_completion_tokens, Responses max_output_tokens,
        # Messages max_tokens with thinking): reasoning is part of the output the limit caps
        reasoning = min(reasoning, max(limit - 1, 0))
        length = max(1, min(length, limit - reasoning))
        finish = "length" if length + reasoning >= limit else finish
    return Plan(
        stream=stream,
        include_usage=include_usage,
        prompt_tokens=prompt_tokens,
        output_tokens=length,
        finish_reason=finish,
        fault=fault,
        retry_after_s=retry_after,
        status_5xx=rng.choice((500, 503)),
        cut=rng.randint(1, length),
        first_word=rng.randrange(len(VOCABULARY)),
        script=script,
        rng=rng,
        api=api,
        reasoning=reasoning,
        tally=cache_tally(state, body, prompt_tokens, api),
    )


def sequential(deltas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The deltas with parallel tool calls one after another (stable by call index): the
    native APIs stream one content block or output item at a time."""
    def key(item: tuple[int, dict[str, Any]]) -> tuple[int, int]:
        calls = item[1].get("tool_calls") or []
        first = calls[0].get("index", 0) if calls and isinstance(calls[0], dict) else -1
        return (int(first) if isinstance(first, int) else 0, item[0])

    return [d for _, d in sorted(enumerate(deltas), key=key)]


def cache_tally(state: EmulatorState, body: dict[str, Any], prompt: int, api: str) -> Tally:
    """Prompt-cache figures: with `prompt_cache` on, the prompt's leading blocks found in the
    prefix cache are read from it (their tokens skip prefill) and the rest are written to it
    (a write only Anthropic reports). With it off, chat usage has no cache figures at all."""
    if not state.settings.prompt_cache:
        return Tally(prompt, 0)
    outcome = state.visit_cache(body["messages"], prompt)
    return Tally(prompt, 0, cache_read=outcome.read,
                 cache_write=outcome.written if api == MESSAGES else 0, cache_reported=True)


async def reject(send: Send, record: RequestRecord, p: Plan, headers: list[Any]) -> None:
    """Answer a rate-limited or 5xx request at once, without taking a slot."""
    if p.fault == "rate_limit":
        wait = retry_after_header(p.retry_after_s)
        status, body = 429, error_body(
            p.api, 429, f"Rate limit reached: retry after {wait} s (emulated token bucket).",
            "rate_limit_exceeded", "rate_limit_exceeded",
        )
        headers = [*headers, (b"retry-after", str(wait).encode())]
    elif p.fault == "overloaded":  # chat completions has no overloaded event: 529 at the door
        status, body = 529, error_body(p.api, 529, "Overloaded (emulated).", "overloaded_error")
    else:
        status = p.status_5xx
        message = "The server had an error." if status == 500 else "The server is overloaded."
        body = error_body(p.api, status, f"{message} (emulated)", "server_error", None)
    record.status = status
    await send({"type": "http.response.start", "status": status,
                "headers": [*JSON_HEADERS, *headers]})
    await send({"type": "http.response.body", "body": body})


def _bears_content(delta: dict[str, Any]) -> bool:
    return bool(
        delta.get("content") or delta.get("tool_calls")
        or delta.get("reasoning_content") or delta.get("reasoning")
    )


async def stream(state: EmulatorState, send: Send, record: RequestRecord, p: Plan,
                 frames: Frames, clock: DecodeClock) -> None:
    """Stream the plan as SSE in its API's events: the opening events, reasoning then content
    one per decode step, the end (finish, usage, [DONE] or the API's own end events).

    Called holding a slot, with the 200 headers already sent.
    """
    cached = p.tally.cache_read if p.tally is not None else 0
    clock.start(max(1, p.prompt_tokens - cached))
    await send({"type": "http.response.body", "body": frames.role(), "more_body": True})
    if p.fault == "stall":
        clock.deadline_ns += int(state.settings.faults.stall_s * 1e9)
    await clock.wait()
    if p.fault == "empty_choices":
        for i in range(min(p.output_tokens, 3)):
            if i:
                clock.advance()
                await clock.wait()
            await send({"type": "http.response.body", "body": frames.empty(), "more_body": True})
        await send({"type": "http.response.body", "body": frames.end("stop", 0, p.include_usage)})
        return
    for i in range(p.reasoning):
        if i:
            clock.advance()
            await clock.wait()
        word = VOCABULARY[(p.first_word + i) % len(VOCABULARY)]
        t = time.perf_counter_ns()
        if record.t_first_byte_ns is None:
            record.t_first_byte_ns = t
        record.t_last_byte_ns = t
        await send({"type": "http.response.body", "body": frames.delta({"reasoning_content": word}),
                    "more_body": True})
        record.completion_tokens += 1
    if p.reasoning:
        clock.advance()
        await clock.wait()
    deltas = p.script.deltas if p.script is not None else None
    cut = p.cut if p.fault in CUT_FAULTS else -1
    for i in range(p.output_tokens):
        if i:
            clock.advance()
            await clock.wait()
        if deltas is not None:
            chunk = frames.delta(deltas[i])
            content = _bears_content(deltas[i])
        else:
            chunk = frames.token(p.first_word + i)
            content = True
        t = time.perf_counter_ns()
        if content:
            if record.t_first_byte_ns is None:
                record.t_first_byte_ns = t
            record.t_last_byte_ns = t
        await send({"type": "http.response.body", "body": chunk, "more_body": True})
        record.completion_tokens += 1
        if i + 1 == cut:
            if p.fault == "drop_mid_stream":
                return  # no terminating chunk: the server closes the connection mid-body
            if p.fault == "stream_error":
                await send({"type": "http.response.body",
                            "body": frames.error("Internal error while generating (emulated).")})
                return
            if p.fault == "overloaded":
                kind = "overloaded_error" if p.api == MESSAGES else "server_is_overloaded"
                await send({"type": "http.response.body",
                            "body": frames.error("Overloaded (emulated).", kind)})
                return
            await send({"type": "http.response.body", "body": frames.malformed(),
                        "more_body": True})
    if p.script is not None and p.script.completion_tokens is not None:
        record.completion_tokens = p.script.completion_tokens
    end = frames.end(p.finish_reason, record.completion_tokens, p.include_usage)
    await send({"type": "http.response.body", "body": end})
    if p.script is not None:
        count_injected(state, p.script)


async def complete(state: EmulatorState, send: Send, record: RequestRecord, p: Plan,
                   completion_id: str, created: int, clock: DecodeClock,
                   headers: list[Any]) -> None:
    """Wait out the whole generation, then send one chat.completion body (holding a slot)."""
    cached = p.tally.cache_read if p.tally is not None else 0
    clock.start(max(1, p.prompt_tokens - cached))
    if p.fault == "stall":
        clock.deadline_ns += int(state.settings.faults.stall_s * 1e9)
    await clock.wait()
    for _ in range(p.output_tokens - 1):
        clock.advance()
        await clock.wait()
    if p.script is not None:
        message = assemble_message(p.script.deltas)
        tokens = p.script.completion_tokens or len(p.script.deltas)
    else:
        words = (VOCABULARY[(p.first_word + i) % len(VOCABULARY)] for i in range(p.output_tokens))
        message = {"role": "assistant", "content": "".join(words)}
        tokens = p.output_tokens
    model = state.settings.model_name
    if p.api == CHAT:
        body = completion_body(completion_id, created, model, message, p.finish_reason,
                               p.prompt_tokens, tokens, p.tally)
    else:
        # the native APIs count reasoning in the output (and say how much of it there was)
        tally = p.tally or Tally(p.prompt_tokens, 0)
        tally = Tally(tally.prompt, 0, p.reasoning, tally.cache_read, tally.cache_write,
                      tally.cache_reported)
        body = native_body(p.api, completion_id, created, model, message, p.finish_reason,
                           tally, tokens + (p.reasoning if p.script is None else 0))
    if p.fault == "empty_choices":
        parsed = json.loads(body)
        parsed["choices" if p.api == CHAT else "content" if p.api == MESSAGES else "output"] = []
        body = json.dumps(parsed).encode()
    elif p.fault in ("stream_error", "overloaded"):
        status = 529 if p.fault == "overloaded" else 500
        body = error_body(p.api, status, "Internal error while generating (emulated).",
                          "server_error", "internal_error")
    elif p.fault == "malformed_sse":
        body = body[: len(body) // 2]
    record.status = 200
    whole = p.fault != "drop_mid_stream"
    await send({"type": "http.response.start", "status": 200, "headers": [
        *JSON_HEADERS, *headers, (b"content-length", str(len(body)).encode())]})
    t = time.perf_counter_ns()
    if p.fault not in ("empty_choices", "stream_error", "overloaded"):
        record.t_first_byte_ns = record.t_last_byte_ns = t
        record.completion_tokens = tokens
    if not whole:
        await send({"type": "http.response.body", "body": body[: len(body) // 2],
                    "more_body": True})
        return  # the connection closes short of content-length
    await send({"type": "http.response.body", "body": body})
    if p.script is not None and p.fault not in ("empty_choices", "stream_error", "overloaded",
                                                 "malformed_sse"):
        count_injected(state, p.script)


def count_injected(state: EmulatorState, script: Script) -> None:
    """Add what the player injected to the stats, once the whole script has been sent."""
    for kind, n in script.injected.items():
        state.agentic[kind] = state.agentic.get(kind, 0) + int(n)
