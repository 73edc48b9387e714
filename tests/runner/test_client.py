"""The endpoint client: what counts as content, token counts, and one class per failure.

Most tests drive the client through httpx.MockTransport (no server); the last ones run the
lean transport against a raw asyncio server on loopback, to see real reads, real keep-alive
and a real connection dropped mid-body.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from epbench.runner.client import ChatResponse, EndpointClient, parse_retry_after
from epbench.runner.transport.stamps import KERNEL_STAMPS
from tests.conftest import need

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
SECRET = "sk-test-secret-value"


def sse(obj: Any) -> bytes:
    text = obj if isinstance(obj, str) else json.dumps(obj)
    return f"data: {text}\n\n".encode()


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    return sse({"choices": [choice]})


USAGE = sse({"choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 3}})
DONE = b"data: [DONE]\n\n"


class Parts(httpx.AsyncByteStream):
    """A body delivered as separate reads, with optional pauses and a cut at the end."""

    def __init__(self, parts: list[bytes | float], cut: bool = False) -> None:
        self.parts = parts
        self.cut = cut

    async def __aiter__(self):  # type: ignore[override]
        for part in self.parts:
            if isinstance(part, float):
                await asyncio.sleep(part)
            else:
                yield part
        if self.cut:
            raise httpx.RemoteProtocolError("peer closed connection without sending complete body")


def run(
    handler: Callable[[httpx.Request], httpx.Response],
    body: dict[str, Any] | None = None,
    keep_chunks: bool = False,
    timeout_s: float = 5.0,
) -> ChatResponse:
    async def go() -> ChatResponse:
        client = EndpointClient(
            "http://endpoint.test/v1",
            SECRET,
            {"x-extra": "1"},
            timeout_s,
            4,
            transport=httpx.MockTransport(handler),
        )
        try:
            return await client.chat(body or BODY, keep_chunks=keep_chunks, request_id="c1-00001")
        finally:
            await client.aclose()

    return asyncio.run(go())


def streaming(
    parts: list[bytes | float],
    cut: bool = False,
    status: int = 200,
    headers: dict[str, str] | None = None,
) -> Callable[[httpx.Request], httpx.Response]:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            status,
            headers={"content-type": "text/event-stream", **(headers or {})},
            stream=Parts(parts, cut),
        )

    return handler


def test_role_only_first_chunk_and_usage_only_last_chunk_do_not_count_as_content():
    res = run(
        streaming(
            [
                chunk({"role": "assistant", "content": ""}),
                0.03,
                chunk({"content": "a"}),
                chunk({"content": "b"}),
                chunk({"content": "c"}, "stop"),
                0.05,
                USAGE,
                DONE,
            ]
        )
    )
    assert res.error_class is None
    assert res.content_events == 3 and len(res.itl_us) == 2
    assert res.output_tokens == 3 and res.token_source == "usage" and res.input_tokens == 11
    assert res.t_first_ns - res.t_send_ns >= 30_000_000  # the role chunk came 30 ms earlier
    assert res.t_done_ns - res.t_last_ns >= 50_000_000  # the usage chunk did not extend E2E
    assert res.finish_reason == "stop"


def test_reasoning_and_tool_call_deltas_are_content():
    res = run(
        streaming(
            [
                chunk({"reasoning_content": "think"}),
                chunk({"reasoning": "more"}),
                chunk(
                    {
                        "tool_calls": [
                            {"index": 0, "id": "x", "function": {"name": "f", "arguments": ""}}
                        ]
                    }
                ),
                chunk({"content": ""}),
                chunk({}, "tool_calls"),
                DONE,
            ]
        )
    )
    assert res.error_class is None and res.content_events == 3


def test_without_usage_the_token_count_falls_back_to_content_events():
    res = run(streaming([chunk({"content": "a"}), chunk({"content": "b"}, "stop"), DONE]))
    assert res.output_tokens == 2 and res.token_source == "chunks"


def test_an_error_event_inside_a_200_stream_is_a_stream_error():
    res = run(streaming([chunk({"content": "a"}), sse({"error": {"message": "boom"}}), DONE]))
    assert res.error_class == "stream_error" and "boom" in (res.error or "")


def test_malformed_data_is_a_stream_error():
    res = run(streaming([chunk({"content": "a"}), b'data: {"choices": [{"del\n\n', DONE]))
    assert res.error_class == "stream_error"


def test_a_stream_cut_before_done_and_finish_reason_is_truncated():
    res = run(streaming([chunk({"content": "a"}), chunk({"content": "b"})], cut=True))
    assert res.error_class == "truncated" and res.status == 200


def test_a_stream_ending_after_finish_reason_without_done_is_complete():
    res = run(streaming([chunk({"content": "a"}), chunk({}, "stop")]))
    assert res.error_class is None and res.output_tokens == 1


def test_a_finished_stream_without_content_is_empty():
    res = run(streaming([sse({"choices": []}), sse({"choices": []}), DONE]))
    assert res.error_class == "empty"


def test_429_is_rate_limited_with_its_retry_after():
    res = run(streaming([b'{"error": "slow down"}'], status=429, headers={"retry-after": "2"}))
    assert res.error_class == "rate_limited" and res.retry_after_s == 2.0 and res.status == 429


@pytest.mark.parametrize(
    ("status", "cls"), [(500, "http_5xx"), (503, "http_5xx"), (404, "http_4xx")]
)
def test_error_statuses_get_their_class(status, cls):
    assert run(streaming([b"nope"], status=status)).error_class == cls


def test_no_response_at_all_is_a_connection_error():
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    res = run(refuse)
    assert res.error_class == "connection" and res.status is None


def test_a_read_timeout_is_a_timeout():
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out")

    assert run(slow).error_class == "timeout"


def test_requests_ask_for_usage_and_carry_the_key_and_request_id_in_headers_only():
    seen: dict[str, Any] = {}

    def handler(request: httpx.Request) -> httpx.Response:
        seen["body"] = json.loads(request.content)
        seen["headers"] = request.headers
        return httpx.Response(429, content=b"{}")

    res = run(handler)
    assert seen["body"]["stream_options"] == {"include_usage": True}
    assert seen["headers"]["authorization"] == f"Bearer {SECRET}"
    assert seen["headers"]["x-epbench-request-id"] == "c1-00001"
    assert seen["headers"]["x-extra"] == "1"
    assert SECRET not in repr(res)


def test_a_non_streamed_json_answer_is_one_content_event():
    answer = {
        "choices": [{"message": {"content": "hello"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 4, "completion_tokens": 2},
    }

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=answer)

    res = run(handler, body={**BODY, "stream": False}, keep_chunks=True)
    assert res.error_class is None and res.output_tokens == 2
    assert res.t_first_ns == res.t_last_ns and len(res.chunks) == 1


def test_kept_chunks_are_parsed_with_their_arrival_times():
    res = run(
        streaming([chunk({"role": "assistant"}), chunk({"content": "a"}, "stop"), DONE]),
        keep_chunks=True,
    )
    assert [c[1]["choices"][0]["delta"] for c in res.chunks] == [
        {"role": "assistant"},
        {"content": "a"},
    ]
    assert res.chunks[1][0] == res.t_first_ns


def test_retry_after_accepts_seconds_and_http_dates():
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    assert parse_retry_after("soon") is None


# --- the lean transport against a raw server on loopback -------------------------------------


async def raw_server(script: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Any]):
    server = await asyncio.start_server(script, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return head + await reader.readexactly(length)


def chunked(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


def lean_run(
    script, requests: int = 1, timeout_s: float = 5.0
) -> tuple[list[ChatResponse], dict[str, int]]:
    counts = {"connections": 0}

    async def counted(reader, writer):
        counts["connections"] += 1
        await script(reader, writer)

    async def go():
        server, port = await raw_server(counted)
        client = EndpointClient(f"http://127.0.0.1:{port}/v1", None, None, timeout_s, 2)
        try:
            return [await client.chat(BODY) for _ in range(requests)]
        finally:
            await client.aclose()
            server.close()

    return asyncio.run(go()), counts


def test_lean_transport_reads_a_chunked_stream_split_at_odd_places_and_reuses_the_connection():
    stream = (
        chunk({"role": "assistant"})
        + chunk({"content": "é"})
        + chunk({"content": "b"}, "stop")
        + USAGE
        + DONE
    )

    async def script(reader, writer):
        for _ in range(2):
            await read_request(reader)
            writer.write(HEAD)
            pieces = [stream[i : i + 7] for i in range(0, len(stream), 7)]
            for piece in pieces[:-1]:  # HTTP chunks that cut events and UTF-8 apart
                writer.write(chunked(piece))
                await writer.drain()
                await asyncio.sleep(0.001)
            writer.write(chunked(pieces[-1]) + b"0\r\n\r\n")
            await writer.drain()
        writer.close()

    results, counts = lean_run(script, requests=2)
    assert [r.error_class for r in results] == [None, None]
    assert [r.output_tokens for r in results] == [3, 3] and results[0].content_events == 2
    assert counts["connections"] == 1


def test_lean_transport_reports_a_connection_closed_mid_body_as_truncated():
    async def script(reader, writer):
        await read_request(reader)
        writer.write(HEAD + chunked(chunk({"content": "a"})))
        await writer.drain()
        writer.close()

    results, _ = lean_run(script)
    assert results[0].error_class == "truncated"


def test_lean_transport_times_out_a_silent_server():
    async def script(reader, writer):
        await read_request(reader)
        writer.write(HEAD)
        await writer.drain()
        await asyncio.sleep(2.0)
        writer.close()

    results, _ = lean_run(script, timeout_s=0.3)
    assert results[0].error_class == "timeout"
    assert (results[0].t_done_ns - results[0].t_send_ns) / 1e9 < 1.5


def test_lean_transport_reports_a_refused_connection():
    async def go():
        server, port = await raw_server(lambda r, w: None)
        server.close()
        await server.wait_closed()
        client = EndpointClient(f"http://127.0.0.1:{port}/v1", None, None, 2.0, 2)
        try:
            return await client.chat(BODY)
        finally:
            await client.aclose()

    assert asyncio.run(go()).error_class == "connection"


def test_an_event_read_late_is_timed_by_its_arrival_not_by_the_read():
    """The client's loop is deaf for 150 ms while the first token arrives; its time must be
    the packet's arrival (kernel stamp), not the moment the loop got round to reading it."""
    if not KERNEL_STAMPS:
        need("kernel receive timestamps (SO_TIMESTAMPNS: Linux only)")
    import socket
    import threading
    import time

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    sent: dict[str, int] = {}
    received = threading.Event()

    def serve() -> None:
        conn, _ = listener.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn.recv(65536)
        received.set()
        conn.sendall(HEAD + chunked(chunk({"role": "assistant", "content": ""})))
        time.sleep(0.02)
        sent["first"] = time.perf_counter_ns()
        conn.sendall(chunked(chunk({"content": "a"})))
        time.sleep(0.3)  # after the loop is back
        sent["second"] = time.perf_counter_ns()
        conn.sendall(
            chunked(chunk({"content": "b"}, "stop")) + chunked(USAGE + DONE) + b"0\r\n\r\n"
        )
        time.sleep(0.1)
        conn.close()

    thread = threading.Thread(target=serve)
    thread.start()

    async def go() -> ChatResponse:
        client = EndpointClient(f"http://127.0.0.1:{port}/v1", None, None, 5.0, 1)
        loop = asyncio.get_running_loop()

        async def deafen() -> None:  # once the request is in, the loop is deaf for 150 ms
            await loop.run_in_executor(None, received.wait, 5.0)
            time.sleep(0.15)

        blocker = asyncio.create_task(deafen())
        try:
            return await client.chat(BODY)
        finally:
            await blocker

    try:
        res = asyncio.run(go())
    finally:
        thread.join()
        listener.close()
    assert res.error_class is None and res.content_events == 2
    assert 0 <= res.t_first_ns - sent["first"] < 3_000_000
    assert 0 <= res.t_last_ns - sent["second"] < 3_000_000


def test_a_kept_alive_connection_the_server_closed_while_idle_is_replaced_not_failed():
    stream = chunk({"content": "a"}, "stop") + DONE

    async def script(reader, writer):
        await read_request(reader)
        writer.write(HEAD + chunked(stream) + b"0\r\n\r\n")
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.close()  # the server drops the idle keep-alive connection

    async def go():
        server, port = await raw_server(script)
        client = EndpointClient(f"http://127.0.0.1:{port}/v1", None, None, 5.0, 1)
        try:
            first = await client.chat(BODY)
            await asyncio.sleep(0.2)  # now the pooled connection is closed at the far end
            return first, await client.chat(BODY)
        finally:
            await client.aclose()
            server.close()

    first, second = asyncio.run(go())
    assert first.error_class is None and second.error_class is None, second.error


# --- bounds: whatever the transport, a cap or the deadline ends the request in its class -----


def test_a_json_body_over_its_cap_is_too_large():
    from epbench.runner.bounds import Bounds

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "application/json"},
                              stream=Parts([b"[" + b" " * 4096] * 4))

    async def go() -> ChatResponse:
        client = EndpointClient("http://endpoint.test/v1", None, None, 5.0, 1,
                                transport=httpx.MockTransport(handler),
                                bounds=Bounds(max_json_bytes=8192))
        try:
            return await client.chat({**BODY, "stream": False})
        finally:
            await client.aclose()

    res = asyncio.run(go())
    assert res.error_class == "too_large" and "8192" in (res.error or "")


def test_an_event_without_end_and_a_response_over_its_cap_are_too_large():
    from epbench.runner.bounds import Bounds

    def capped(parts: list[bytes | float], **bounds: int) -> ChatResponse:
        async def go() -> ChatResponse:
            client = EndpointClient("http://endpoint.test/v1", None, None, 5.0, 1,
                                    transport=httpx.MockTransport(streaming(parts)),
                                    bounds=Bounds(**bounds))
            try:
                return await client.chat(BODY, keep_chunks="max_message_bytes" in bounds)
            finally:
                await client.aclose()

        return asyncio.run(go())

    endless_event = [b"data: " + b"x" * 1000] * 10
    assert capped(endless_event, max_event_bytes=4096).error_class == "too_large"
    many_events = [chunk({"content": "a"})] * 200
    assert capped(many_events, max_response_bytes=4096).error_class == "too_large"
    assert capped(many_events, max_message_bytes=2048).error_class == "too_large"
    assert capped([*many_events, chunk({}, "length"), DONE]).error_class is None


def test_a_stream_that_keeps_trickling_ends_at_its_deadline_not_its_idle_timeout():
    res = run(streaming([chunk({"content": "a"}), 0.2] * 20), timeout_s=0.5)
    assert res.error_class == "deadline"
    assert (res.t_done_ns - res.t_send_ns) / 1e9 < 1.0


@pytest.mark.parametrize(("status", "cls"), [(999, "http_other"), (302, "http_other")])
def test_statuses_outside_4xx_and_5xx_are_http_other(status, cls):
    assert run(streaming([b"?"], status=status)).error_class == cls


def test_a_200_html_page_is_a_protocol_error():
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/html"}, content=b"<html>")

    res = run(handler)
    assert res.error_class == "protocol" and "text/html" in (res.error or "")


def test_a_stream_cut_by_done_without_any_finish_reason_is_truncated() -> None:
    # llama-cpp-python sends [DONE] when another request cuts a stream short; no chunk says
    # why the answer stopped, so it is not a finished answer.
    res = run(streaming([chunk({"content": "a"}), chunk({"content": "b"}), DONE]))
    assert res.error_class == "truncated"
    assert "finish_reason" in (res.error or "")
