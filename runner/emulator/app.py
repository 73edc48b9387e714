"""The emulator's ASGI application: routes, request bodies, and the life of one request.

A raw ASGI callable (no web framework): the per-chunk path is the ASGI `send` of the server
and nothing else. Routes:

    POST /v1/chat/completions   stream true or false
    POST /v1/messages           Anthropic Messages, stream true or false
    POST /v1/responses          OpenAI Responses, stream true or false
    GET  /v1/models
    GET  /emulator/stats        {"requests", "faults": {kind: n}, "agentic": {kind: n}, ...}
    GET  /emulator/requests     one record per request (server-side perf_counter_ns times)
    POST /emulator/reset        clears counters and records
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from typing import Any

from epbench.runner.emulator.batching import DecodeClock
from epbench.runner.emulator.completion import (
    SSE_HEADERS,
    BadRequest,
    complete,
    parse_body,
    plan,
    reject,
    stream,
)
from epbench.runner.emulator.frames import ChunkFrames
from epbench.runner.emulator.native import CHAT, MESSAGES, ROUTES, NativeError, error_body, to_chat
from epbench.runner.emulator.native_frames import MessagesFrames, ResponsesFrames, Tally
from epbench.runner.emulator.state import EmulatorState, RequestRecord

MAX_BODY_BYTES = 16 * 1024 * 1024
Scope = dict[str, Any]


class EmulatorApp:
    """ASGI 3 application over one EmulatorState."""

    def __init__(self, state: EmulatorState) -> None:
        self.state = state

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        method, path = scope["method"], scope["path"]
        api = ROUTES.get(path)
        if api is not None:
            if method != "POST":
                await _json(send, 405, error_body(api, 405, "Use POST.", "invalid_request_error"))
                return
            await self.chat(scope, receive, send, api)
        elif path in ("/v1/models", "/models") and method == "GET":
            await _json(send, 200, self._models())
        elif path == "/emulator/stats" and method == "GET":
            await _json(send, 200, json.dumps(self.state.stats()).encode())
        elif path == "/emulator/requests" and method == "GET":
            await _json(send, 200, json.dumps(self.state.records_json()).encode())
        elif path == "/emulator/reset" and method == "POST":
            self.state.reset()
            await _json(send, 200, b'{"reset":true}')
        else:
            await _json(send, 404, error_body(CHAT, 404, f"No route {method} {path}.",
                                              "not_found"))

    def _models(self) -> bytes:
        model = {"id": self.state.settings.model_name, "object": "model", "created": 0,
                 "owned_by": "epbench-emulator"}
        return json.dumps({"object": "list", "data": [model]}).encode()

    async def chat(self, scope: Scope, receive: Any, send: Any, api: str = CHAT) -> None:
        """One request in any of the three APIs: record it, plan it (on its chat twin), reject
        it or generate it in the API's own events."""
        state = self.state
        t_recv = time.perf_counter_ns()
        request_id = (_header(scope, b"x-epbench-request-id") or _header(scope, b"x-request-id")
                      or state.next_request_id())
        record = RequestRecord(request_id=request_id, t_recv_ns=t_recv)
        state.requests += 1
        headers = [(b"x-epbench-request-id", request_id.encode())]
        try:
            raw = await _read_body(receive)
            if raw is None:
                record.disconnected = True
                return
            body = parse_body(raw, api)
            if api != CHAT:
                body = to_chat(api, body)
                parse_body(json.dumps(body).encode())  # the twin must be a good chat request
        except (BadRequest, NativeError) as exc:
            record.status = 400
            await _json(send, 400, error_body(api, 400, str(exc), "invalid_request_error"),
                        headers)
            state.records.append(record)
            return
        p = plan(state, raw, body, api)
        record.stream, record.prompt_tokens, record.fault = p.stream, p.prompt_tokens, p.fault
        record.cached_tokens = p.tally.cache_read if p.tally is not None else 0
        state.records.append(record)
        if p.fault is not None:
            state.faults[p.fault] += 1
        if p.fault in ("rate_limit", "http_5xx") or (p.fault == "overloaded" and api == CHAT):
            await reject(send, record, p, headers)
            return
        prefix = {CHAT: "chatcmpl-", MESSAGES: "msg_"}.get(api, "resp_")
        completion_id = prefix + secrets.token_hex(12)
        created = int(time.time())
        clock = DecodeClock(state.settings, p.rng, state.pool)
        watcher = _DisconnectWatcher(receive)
        try:
            if p.stream:
                record.status = 200
                await send({"type": "http.response.start", "status": 200,
                            "headers": [*SSE_HEADERS, *headers]})
            await state.pool.acquire()
            record.t_admit_ns = time.perf_counter_ns()
            try:
                if p.stream:
                    frames = _frames(p, completion_id, created, state.settings.model_name)
                    await stream(state, send, record, p, frames, clock)
                else:
                    await complete(state, send, record, p, completion_id, created, clock,
                                   headers)
            finally:
                state.pool.release()
                record.model_prefill_ns = clock.prefill_ns
                record.model_decode_ns = clock.decode_ns
                record.model_steps = clock.steps
        except asyncio.CancelledError:
            if not watcher.fired:
                raise
            record.disconnected = True
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
        finally:
            watcher.stop()


def _frames(p: Any, answer_id: str, created: int, model: str) -> Any:
    """The SSE encoder of the plan's API."""
    tally = p.tally or Tally(p.prompt_tokens, 0)
    tally = Tally(tally.prompt, 0, p.reasoning, tally.cache_read, tally.cache_write,
                  tally.cache_reported)
    if p.api == MESSAGES:
        return MessagesFrames(answer_id, model, tally)
    if p.api == CHAT:
        return ChunkFrames(answer_id, created, model, tally)
    return ResponsesFrames(answer_id, created, model, tally)


class _DisconnectWatcher:
    """Cancels the request's task when the client goes away, so its slot is freed at once."""

    def __init__(self, receive: Any) -> None:
        self.fired = False
        self._stopped = False
        self._owner = asyncio.current_task()
        self._task = asyncio.get_running_loop().create_task(self._watch(receive))

    async def _watch(self, receive: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
        if self._owner is not None and not self._stopped:
            self.fired = True
            self._owner.cancel()

    def stop(self) -> None:
        self._stopped = True
        if not self._task.done():
            self._task.cancel()


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            text: str = value.decode("latin-1")[:200]
            return text
    return None


async def _read_body(receive: Any) -> bytes | None:
    """The whole request body, or None if the client went away first."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        part = message.get("body", b"")
        size += len(part)
        if size > MAX_BODY_BYTES:
            raise BadRequest(f"the request body is over {MAX_BODY_BYTES} bytes")
        parts.append(part)
        if not message.get("more_body", False):
            return b"".join(parts)


async def _json(send: Any, status: int, body: bytes, headers: list[Any] | None = None) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


async def _lifespan(receive: Any, send: Any) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
