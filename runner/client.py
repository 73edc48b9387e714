"""The HTTP client: one httpx.AsyncClient per run, streaming chat completions, exact times.

Per request it records, with `time.perf_counter_ns()` (CLOCK_MONOTONIC, the clock the emulator
stamps its own events with):

- `t_send_ns`   just before the request is written (the lean transport's stamp; with another
                transport, just before it is handed to httpx);
- `t_first_ns`  arrival of the read carrying the first content-bearing event: a choice whose
                `delta` has non-empty `content`, `reasoning_content` or `reasoning`, or any
                `tool_calls` (role-only and empty chunks do not count);
- `t_first_answer_ns`  the same for the first answer token (`content` or `tool_calls`, not
                reasoning), so reasoning models show both;
- `t_last_ns`   arrival of the read carrying the last content-bearing event (a trailing
                usage-only chunk does not extend it);
- `t_done_ns`   when the response is finished (after `[DONE]`, or the error).

The clock is read once per network read, before any decoding, so parsing cost never shifts a
timestamp. Failed requests get exactly one class from `epcore.metrics.errors`.

The endpoint's wire API (`runner.apis`) builds the request body and translates each parsed
event into neutral (chat-chunk-shaped) events; everything below reads only those.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from epcore.metrics.errors import class_for_status
from runner.apis import OPENAI_CHAT_NAME, Api, Translator, get_api
from runner.sse import SSEDecoder
from runner.transport import BODY_EXTENSION, WRITE_EXTENSION, LeanTransport

_clock = time.perf_counter_ns
_MAX_ERROR_BODY = 2048

# Our own header, not x-request-id: servers give that one meanings of their own
# (llama-cpp-python answers 400 to any value that is not a UUID).
REQUEST_ID_HEADER = "x-epbench-request-id"


@dataclass(slots=True)
class ChatResponse:
    """What one chat-completions request did, with its times and (on failure) its class."""

    status: int | None = None
    t_send_ns: int = 0
    t_first_ns: int | None = None
    t_first_answer_ns: int | None = None
    t_last_ns: int | None = None
    t_done_ns: int = 0
    output_tokens: int | None = None
    input_tokens: int | None = None
    token_source: str | None = None  # "usage" | "chunks" | None (nothing to count)
    reasoning_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    usage: dict[str, Any] | None = None
    error_class: str | None = None
    error: str | None = None
    retry_after_s: float | None = None
    itl_us: list[int] = field(default_factory=list)
    chunks: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    finish_reason: str | None = None
    content_events: int = 0
    done: bool = False

    @property
    def ok(self) -> bool:
        return self.error_class is None


class EndpointClient:
    """Requests against one base URL (ending in /v1) in the endpoint's wire API.

    `transport` is the seam for tests (httpx.MockTransport) and for other transports.
    The API key goes into the API's auth header (`authorization` or `x-api-key`) and nowhere
    else.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        headers: dict[str, str] | None,
        timeout_s: float,
        max_connections: int,
        transport: httpx.AsyncBaseTransport | None = None,
        api: str | None = None,
        omit: tuple[str, ...] = (),
    ) -> None:
        self.api: Api = get_api(api)
        self.omit = frozenset(omit)
        self.url = base_url.rstrip("/") + self.api.path
        base_headers = {
            "content-type": "application/json",
            "accept": "text/event-stream, application/json",
            "accept-encoding": "identity",
        }
        base_headers.update(headers or {})
        base_headers.update(self.api.auth_headers(api_key))
        limits = httpx.Limits(
            max_connections=max_connections,
            max_keepalive_connections=max_connections,
            keepalive_expiry=30.0,
        )
        if transport is None:
            transport = LeanTransport(max_connections)
        self._http = httpx.AsyncClient(
            headers=base_headers,
            timeout=httpx.Timeout(timeout_s),
            limits=limits,
            transport=transport,
            trust_env=False,
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def chat(
        self, body: dict[str, Any], keep_chunks: bool = False, request_id: str | None = None
    ) -> ChatResponse:
        """Send one chat-shaped request in the endpoint's API; never raises for what the
        endpoint does (it is classified)."""
        api = self.api
        if self.omit:
            body = {k: v for k, v in body.items() if k not in self.omit}
        body = api.build(body)
        content = json.dumps(body, separators=(",", ":")).encode()
        extra = {REQUEST_ID_HEADER: request_id} if request_id else None
        res = ChatResponse()
        request = self._http.build_request("POST", self.url, content=content, headers=extra)
        res.t_send_ns = _clock()
        try:
            response = await self._http.send(request, stream=True)
        except httpx.TimeoutException as exc:
            return _fail(res, "timeout", f"no response within the timeout ({type(exc).__name__})")
        except httpx.HTTPError as exc:
            return _fail(res, "connection", f"{type(exc).__name__}: {exc}"[:200])
        res.status = response.status_code
        # The transport's own stamp, taken just before it wrote the request, when it has one.
        res.t_send_ns = response.extensions.get(WRITE_EXTENSION, res.t_send_ns)
        events: list[tuple[int, str]] = []
        streamed = False
        cut = None
        try:
            cls = class_for_status(response.status_code)
            if cls is not None:
                await _read_error(response, res, cls, api)
            elif response.headers.get("content-type", "").startswith("application/json"):
                await _read_json(response, res, keep_chunks, api)
            else:
                streamed = True
                await _read_stream(response, res, events)
        except httpx.TimeoutException:
            _fail(res, "timeout", "the stream stalled past the timeout")
        except httpx.HTTPError as exc:
            # The connection broke after the status line: what arrived before still decides.
            cut = f"{type(exc).__name__}: {exc}"[:200]
        finally:
            await response.aclose()
        t_end = _clock()
        if streamed and res.error_class is None:
            _digest(res, events, keep_chunks, api)
            _finish(res, cut)
            res.t_done_ns = t_end
        elif cut is not None and res.error_class is None:
            _fail(res, "truncated", cut)
        if res.t_done_ns == 0:
            res.t_done_ns = _clock()
        return res


def _fail(res: ChatResponse, cls: str, message: str) -> ChatResponse:
    res.error_class = cls
    res.error = message
    res.t_done_ns = _clock()
    return res


async def _read_error(response: httpx.Response, res: ChatResponse, cls: str, api: Api) -> None:
    data = b""
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) >= _MAX_ERROR_BODY:
            break
    if any(kind.encode() in data for kind in api.overloaded_types):
        cls = "overloaded"  # e.g. Anthropic's 529 (or 500) with an overloaded_error body
    res.retry_after_s = parse_retry_after(response.headers.get("retry-after"))
    text = data[:200].decode("utf-8", "replace").strip()
    _fail(
        res, cls, f"HTTP {response.status_code}: {text}" if text else f"HTTP {response.status_code}"
    )


async def _read_json(
    response: httpx.Response, res: ChatResponse, keep_chunks: bool, api: Api
) -> None:
    """A non-streamed answer: first and last content time are when the body finished."""
    data = await response.aread()
    t = _clock()
    try:
        obj = json.loads(data)
    except ValueError:
        _fail(res, "stream_error", "the JSON body is malformed")
        return
    if isinstance(obj, dict):
        obj = api.whole(obj)
    if keep_chunks:
        res.chunks.append((t, obj))
    if not isinstance(obj, dict):
        _fail(res, "stream_error", "the JSON body is not an object")
        return
    if obj.get("error"):
        _fail(res, _error_class(obj, api), f"error in the body: {str(obj['error'])[:150]}")
        return
    res.usage = obj.get("usage") if isinstance(obj.get("usage"), dict) else None
    has_content = False
    for choice in obj.get("choices") or ():
        message = choice.get("message") or {}
        if (
            message.get("content")
            or message.get("reasoning_content")
            or message.get("reasoning")
            or message.get("tool_calls")
        ):
            has_content = True
        if choice.get("finish_reason"):
            res.finish_reason = choice["finish_reason"]
    if has_content:
        res.t_first_ns = res.t_last_ns = t
        res.t_first_answer_ns = t
        res.content_events = 1
    res.done = True
    _finish(res, cut=None)


async def _read_stream(
    response: httpx.Response, res: ChatResponse, events: list[tuple[int, str]]
) -> None:
    """Collect (arrival ns, payload) of every event until [DONE] or the end of the body.

    Nothing is parsed here: the hot loop only splits events and compares with [DONE], and
    `_digest` parses every payload at once afterwards (one json.loads for the whole stream).
    """
    decoder = SSEDecoder()
    feed = decoder.feed
    append = events.append
    body = response.extensions.get(BODY_EXTENSION)
    if body is not None:

        def sink(t: int, data: bytes) -> bool:
            for payload in feed(data):
                if payload == "[DONE]":
                    res.done = True
                    return True
                if payload:
                    append((t, payload))
            return False

        await body.drain(sink)
    else:
        # Other transports: httpx's decoded byte iterator (handles any content-encoding).
        async for data in response.aiter_bytes():
            # The transport's arrival stamp when it has one; else now (before any decoding).
            t = getattr(data, "t_ns", 0) or _clock()
            for payload in feed(data):
                if payload == "[DONE]":
                    res.done = True
                elif payload:
                    append((t, payload))
            if res.done:
                break
    if not res.done:
        for payload in decoder.close():
            if payload == "[DONE]":
                res.done = True
            elif payload:
                append((_clock(), payload))


def _parse_all(events: list[tuple[int, str]]) -> tuple[list[Any], int | None]:
    """(parsed payloads, index of the first malformed one or None)."""
    if not events:
        return [], None
    try:
        parsed = json.loads("[" + ",".join(p for _, p in events) + "]")
        if isinstance(parsed, list) and len(parsed) == len(events):
            return parsed, None
    except ValueError:
        pass
    out = []
    for i, (_, payload) in enumerate(events):
        try:
            out.append(json.loads(payload))
        except ValueError:
            return out, i
    return out, None  # a payload holding two values ("1,2") parses alone: fine


def _digest(
    res: ChatResponse, events: list[tuple[int, str]], keep_chunks: bool, api: Api
) -> None:
    """Parse the stream's events; set times, ITL, usage, finish_reason or a stream_error."""
    parsed, bad = _parse_all(events)
    translator: Translator | None = None if api.name == OPENAI_CHAT_NAME else api.translator()
    itl = res.itl_us
    last = 0
    for (t, payload), raw in zip(events, parsed, strict=False):
        try:
            neutral = [raw] if translator is None else translator.event(raw)
            for obj in neutral:
                bearing = _content_bearing(obj, res)
                if bearing is None:
                    msg = f"error event: {str(obj.get('error'))[:150]}"
                    _fail(res, _error_class(obj, api), msg)
                    return
                if keep_chunks:
                    res.chunks.append((t, obj))
                if bearing:
                    if last:
                        # Stamps converted from the kernel's clock can jitter by microseconds
                        # between reads; events of one response never go back in time.
                        t = max(t, last)
                        itl.append((t - last) // 1000)
                    else:
                        res.t_first_ns = t
                    if bearing == 2 and res.t_first_answer_ns is None:
                        res.t_first_answer_ns = t
                    last = res.t_last_ns = t
                    res.content_events += 1
        except (TypeError, AttributeError, ValueError):
            _fail(res, "stream_error", f"malformed SSE data: {payload[:80]!r}")
            return
    if bad is not None:
        _fail(res, "stream_error", f"malformed SSE data: {events[bad][1][:80]!r}")


def _error_class(obj: Any, api: Api) -> str:
    """`overloaded` for an error event the API uses for "busy", else `stream_error`."""
    error = obj.get("error")
    kind = error.get("type") or error.get("code") if isinstance(error, dict) else None
    return "overloaded" if kind in api.overloaded_types else "stream_error"


def _content_bearing(obj: Any, res: ChatResponse) -> int | None:
    """2 if a neutral event carries answer content (text or tool calls), 1 if reasoning only,
    0 if nothing; None for an error event. Notes usage, finish reason and the end."""
    if obj.get("error"):
        return None
    usage = obj.get("usage")
    if usage:
        res.usage = usage
    if obj.get("done") is True:
        res.done = True
    bearing = 0
    for choice in obj.get("choices") or ():
        delta = choice.get("delta")
        if delta:
            if delta.get("content") or delta.get("tool_calls"):
                bearing = 2
            elif bearing == 0 and (delta.get("reasoning_content") or delta.get("reasoning")):
                bearing = 1
        reason = choice.get("finish_reason")
        if reason:
            res.finish_reason = reason
    return bearing


def _finish(res: ChatResponse, cut: str | None) -> None:
    """Decide a finished (or cut) 200 answer's class and its token count."""
    if res.error_class is not None:
        return
    usage = res.usage
    if isinstance(usage, dict):
        if isinstance(usage.get("prompt_tokens"), int):
            res.input_tokens = usage["prompt_tokens"]
        if isinstance(usage.get("completion_tokens"), int):
            res.output_tokens = usage["completion_tokens"]
            res.token_source = "usage"
        details = usage.get("prompt_tokens_details")
        if isinstance(details, dict):
            res.cache_read_tokens = _count(details.get("cached_tokens"))
            res.cache_write_tokens = _count(details.get("cache_write_tokens"))
        details = usage.get("completion_tokens_details")
        if isinstance(details, dict):
            res.reasoning_tokens = _count(details.get("reasoning_tokens"))
    if res.output_tokens is None and res.content_events:
        res.output_tokens = res.content_events
        res.token_source = "chunks"
    if res.t_last_ns is None and res.t_first_ns is not None:
        res.t_last_ns = res.t_first_ns
    if not res.done and res.finish_reason is None:
        _fail(res, "truncated", cut or "the stream ended before [DONE] and before a finish_reason")
    elif res.content_events == 0:
        _fail(res, "empty", "no content-bearing event")
    else:
        res.t_done_ns = _clock()


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    import datetime as _dt

    now = _dt.datetime.now(when.tzinfo or _dt.UTC)
    return max(0.0, (when - now).total_seconds())
