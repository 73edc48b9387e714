"""The HTTP client: one httpx.AsyncClient per run, streaming answers, exact times.

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
timestamp. Failed requests get exactly one class from `epbench.core.metrics.errors`.

Every request is held to its `Bounds` (runner/bounds.py): `timeout_s` is a deadline for the
whole request, the idle timeout bounds silence between reads, and caps bound the header bytes
(transport), one SSE event (decoder), one JSON body, the whole response and the events kept to
assemble an agentic message. One `ByteBudget` per client bounds what all responses in flight
hold at once (unfinished events, payloads waiting to be parsed, kept events, JSON bodies), so
64 responses each under the caps cannot add up past it. Whatever the endpoint sends, the client
keeps only times, counts and (when asked) the capped events, never the stream itself.

What the server says about itself is kept for the journal: the answer's own id and the
allow-listed response headers (epcore/server_evidence.py; never a cookie or a credential).

The endpoint's wire API (`epbench.runner.apis`) builds the request body and translates each parsed
event into neutral (chat-chunk-shaped) events (runner/chat_stream.py); the bounds sit below
it, the same for every API.
"""

from __future__ import annotations

import asyncio
import json
import time
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from epbench.core.metrics.errors import class_for_status
from epbench.core.server_evidence import clean_id, server_headers
from epbench.core.usage_bounds import CLASS as USAGE_IMPLAUSIBLE
from epbench.core.usage_bounds import Streamed, implausible
from epbench.runner.apis import Api, get_api
from epbench.runner.bounds import Bounds, ByteBudget, ProtocolViolation, Share, TooLarge
from epbench.runner.chat_stream import ChatStreamFold, StreamFailed, fold_message
from epbench.runner.endpoint import with_extra_body
from epbench.runner.response import ChatResponse
from epbench.runner.sse import EventTooLarge, SSEDecoder
from epbench.runner.transport import (
    BODY_EXTENSION,
    HEADER_CAP_EXTENSION,
    WRITE_EXTENSION,
    LeanTransport,
)

_clock = time.perf_counter_ns
_MAX_ERROR_BODY = 2048

# Our own header, not x-request-id: servers give that one meanings of their own
# (llama-cpp-python answers 400 to any value that is not a UUID).
REQUEST_ID_HEADER = "x-epbench-request-id"


class EndpointClient:
    """Requests against one base URL (ending in /v1) in the endpoint's wire API.

    `transport` is the seam for tests (httpx.MockTransport) and for other transports.
    `timeout_s` is each request's total deadline; `bounds` sets the idle timeout and the caps
    (its own `timeout_s` is replaced by this one). The API key goes into the API's auth header
    (`authorization` or `x-api-key`) and nowhere else.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        headers: dict[str, str] | None,
        timeout_s: float,
        max_connections: int,
        transport: httpx.AsyncBaseTransport | None = None,
        bounds: Bounds | None = None,
        api: str | None = None,
        omit: tuple[str, ...] = (),
        budget: ByteBudget | None = None,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        self.api: Api = get_api(api)
        self.omit = frozenset(omit)
        self.extra_body = dict(extra_body or {})  # request.extra_body, merged into every body
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + self.api.path
        self.bounds = Bounds(**{**(bounds or Bounds()).__dict__, "timeout_s": float(timeout_s)})
        self.budget = budget or ByteBudget()
        self._known = (api_key,) if api_key else ()  # never kept from the server's side
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
            timeout=httpx.Timeout(self.bounds.idle_s),
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
        if self.omit:
            body = {k: v for k, v in body.items() if k not in self.omit}
        body = with_extra_body(self.api.build(body), self.extra_body)
        content = json.dumps(body, separators=(",", ":")).encode()
        extra = {REQUEST_ID_HEADER: request_id} if request_id else None
        limit = _max_tokens(body)
        res = ChatResponse()
        request = self._http.build_request(
            "POST",
            self.url,
            content=content,
            headers=extra,
            extensions={HEADER_CAP_EXTENSION: self.bounds.max_header_bytes},
        )
        res.t_send_ns = _clock()
        bounds = self.bounds
        try:
            async with asyncio.timeout(bounds.timeout_s):
                await self._exchange(request, res, keep_chunks)
        except TimeoutError:
            # Silent for its whole idle time when the deadline struck: that is an idle timeout.
            silent_s = (_clock() - (res.t_byte_ns or res.t_send_ns)) / 1e9
            if silent_s >= bounds.idle_s * 0.9:
                _fail(res, "timeout", f"no data for {bounds.idle_s:g} s")
            else:
                _fail(res, "deadline", f"the request ran past its {bounds.timeout_s:g} s deadline")
        if res.t_done_ns == 0:
            res.t_done_ns = _clock()
        if res.error_class is None:
            problem = implausible(_streamed(res), limit, self.api.name)
            if problem is not None:
                res.error_class, res.error = USAGE_IMPLAUSIBLE, problem
        return res

    async def _exchange(self, request: httpx.Request, res: ChatResponse, keep: bool) -> None:
        try:
            response = await self._http.send(request, stream=True)
        except httpx.TimeoutException as exc:
            _fail(res, "timeout", f"no response within the timeout ({type(exc).__name__})")
            return
        except (TooLarge, ProtocolViolation) as exc:
            _fail(res, _bound_class(exc), str(exc)[:200])
            return
        except httpx.HTTPError as exc:
            _fail(res, "connection", f"{type(exc).__name__}: {exc}"[:200])
            return
        res.t_byte_ns = _clock()
        res.status = response.status_code
        res.server_headers = server_headers(response.headers.raw, self._known)
        # The transport's own stamp, taken just before it wrote the request, when it has one.
        res.t_send_ns = response.extensions.get(WRITE_EXTENSION, res.t_send_ns)
        streamed = False
        cut = None
        api = self.api
        fold = ChatStreamFold(res, keep, self.bounds.max_message_bytes, api)
        share = self.budget.share()
        try:
            cls = class_for_status(response.status_code)
            kind = _body_kind(response.headers.get("content-type", ""))
            if cls is not None:
                await _read_error(response, res, cls, api)
            elif kind == "json":
                await _read_json(response, res, keep, self.bounds.max_json_bytes, api, share)
            elif kind == "sse":
                streamed = True
                await _read_stream(response, res, fold, self.bounds, share)
            else:
                await _read_error(response, res, "protocol", api)
        except StreamFailed as exc:
            _fail(res, exc.cls, exc.message)
        except EventTooLarge as exc:
            _fail(res, "too_large", str(exc))
        except (TooLarge, ProtocolViolation) as exc:
            _fail(res, _bound_class(exc), str(exc)[:200])
        except httpx.TimeoutException:
            _fail(res, "timeout", f"the stream was silent for {self.bounds.idle_s:g} s")
        except httpx.HTTPError as exc:
            # The connection broke after the status line: what arrived before still decides.
            cut = f"{type(exc).__name__}: {exc}"[:200]
        finally:
            await response.aclose()
            share.release()
        if res.response_id is not None and clean_id(res.response_id, self._known) is None:
            res.response_id = None
        t_end = _clock()
        if streamed and res.error_class is None:
            _finish(res, cut)
            res.t_done_ns = t_end
        elif cut is not None and res.error_class is None:
            _fail(res, "truncated", cut)

    async def get_json(self, path: str) -> tuple[int | None, Any, str | None]:
        """GET base_url + path within the deadline: (status, parsed JSON or None, error text).

        For the preflight (`/models`); the body is capped at `max_json_bytes`."""
        try:
            async with asyncio.timeout(self.bounds.timeout_s):
                response = await self._http.send(
                    self._http.build_request("GET", self.base_url + path), stream=True
                )
                try:
                    data = await _read_capped(response, self.bounds.max_json_bytes)
                finally:
                    await response.aclose()
        except TimeoutError:
            return None, None, f"no answer within {self.bounds.timeout_s:g} s"
        except httpx.HTTPError as exc:
            return None, None, f"{type(exc).__name__}: {exc}"[:200]
        try:
            return response.status_code, json.loads(data), None
        except ValueError:
            return response.status_code, None, data[:200].decode("utf-8", "replace")


def _max_tokens(body: dict[str, Any]) -> int | None:
    """The output limit a built request body asks for, in any of the three APIs."""
    for key in ("max_tokens", "max_completion_tokens", "max_output_tokens"):
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _streamed(res: ChatResponse) -> Streamed:
    return Streamed(res.input_tokens, res.output_tokens, res.reasoning_tokens,
                    res.cache_read_tokens, res.cache_write_tokens, res.content_bytes,
                    res.tool_calls)


def _bound_class(exc: Exception) -> str:
    return "too_large" if isinstance(exc, TooLarge) else "protocol"


def _body_kind(content_type: str) -> str:
    """"sse", "json" or "other" from a Content-Type (a missing one is taken as SSE)."""
    value = content_type.split(";")[0].strip().lower()
    if value == "text/event-stream" or not value:
        return "sse"
    if value == "application/json" or value.endswith("+json"):
        return "json"
    return "other"


def _fail(res: ChatResponse, cls: str, message: str) -> ChatResponse:
    res.error_class = cls
    res.error = message
    res.t_done_ns = _clock()
    return res


async def _read_capped(response: httpx.Response, cap: int, share: Share | None = None) -> bytes:
    parts: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > cap:
            raise TooLarge(f"the JSON body is over {cap} bytes")
        if share is not None:
            share.hold(size)
        parts.append(chunk)
    return b"".join(parts)


async def _read_error(response: httpx.Response, res: ChatResponse, cls: str, api: Api) -> None:
    data = b""
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) >= _MAX_ERROR_BODY:
            break
    if cls != "protocol" and any(kind.encode() in data for kind in api.overloaded_types):
        cls = "overloaded"  # e.g. Anthropic's 529 (or 500) with an overloaded_error body
    res.retry_after_s = parse_retry_after(response.headers.get("retry-after"))
    text = data[:200].decode("utf-8", "replace").strip()
    status = f"HTTP {response.status_code}"
    if cls == "protocol":
        kind = response.headers.get("content-type", "")[:60]
        status += f" with content-type {kind!r}, neither SSE nor JSON"
    _fail(res, cls, f"{status}: {text}" if text else status)


async def _read_json(
    response: httpx.Response, res: ChatResponse, keep_chunks: bool, cap: int, api: Api,
    share: Share,
) -> None:
    """A non-streamed answer: first and last content time are when the body finished."""
    data = await _read_capped(response, cap, share)
    t = res.t_byte_ns = _clock()
    try:
        obj = json.loads(data)
    except ValueError:
        _fail(res, "protocol", "the JSON body is malformed")
        return
    fold_message(res, obj, t, keep_chunks, api)
    _finish(res, cut=None)


async def _read_stream(
    response: httpx.Response, res: ChatResponse, fold: ChatStreamFold, bounds: Bounds,
    share: Share,
) -> None:
    """Feed every read to the SSE decoder and the fold until [DONE] or the end of the body.

    With the lean transport this runs inside the protocol's read callback (no task wake-up
    per read); a cap, the client's byte budget or a failed stream raises out of it and ends
    the request. After each read the response's share holds what it keeps until the next:
    the unfinished event and the kept events (each payload is parsed as it arrives)."""
    decoder = SSEDecoder(bounds.max_event_bytes)
    feed = decoder.feed
    event = fold.event
    cap = bounds.max_response_bytes

    def sink(t: int, data: bytes) -> bool:
        res.t_byte_ns = t
        res.body_bytes += len(data)
        if res.body_bytes > cap:
            raise TooLarge(f"the response is over {cap} bytes")
        end = any(event(t, payload) for payload in feed(data))
        held = decoder.pending_bytes + fold.kept_bytes
        if held != share.held:
            share.hold(held)
        return end

    body = response.extensions.get(BODY_EXTENSION)
    if body is not None:
        await body.drain(sink)
    else:
        # Other transports: httpx's decoded byte iterator (handles any content-encoding).
        async for data in response.aiter_bytes():
            # The transport's arrival stamp when it has one; else now (before any decoding).
            if sink(getattr(data, "t_ns", 0) or _clock(), data):
                break
    if not res.done:
        for payload in decoder.close():
            if event(_clock(), payload):
                break


def _finish(res: ChatResponse, cut: str | None) -> None:
    """Decide a finished (or cut) 200 answer's class and its token count."""
    if res.error_class is not None:
        return
    usage = res.usage
    if isinstance(usage, dict):
        if _count(usage.get("prompt_tokens")) is not None:
            res.input_tokens = usage["prompt_tokens"]
            res.input_source = "usage"
        if _count(usage.get("completion_tokens")) is not None:
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
    elif res.finish_reason is None:
        # [DONE] alone does not finish an answer: llama-cpp-python sends it when another
        # request cuts a stream short, and no chunk says why the answer stopped.
        _fail(res, "truncated", "[DONE] came but no chunk carried a finish_reason")
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
