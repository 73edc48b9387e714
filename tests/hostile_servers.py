"""Hostile HTTP endpoints on loopback, one behaviour per URL prefix (`/<case>/v1/...`).

Each does what a broken or malicious endpoint might: stream forever, trickle one event a
second, send endless headers, a 2 GB JSON or SSE body, HTML with status 200, an unknown status,
or close in the middle of a chunk. Bodies are generated as they are written, so the server
itself stays small; a handler ends when the client goes away.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
from collections.abc import Awaitable, Callable, Iterator

GB2 = 2 * 1024**3
EVENT = b'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n'
SSE_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
)

Writer = asyncio.StreamWriter
Case = Callable[[Writer], Awaitable[None]]


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


async def endless_stream(w: Writer) -> None:
    w.write(SSE_HEAD)
    block = _chunk(EVENT * 1000)
    while True:
        w.write(block)
        await w.drain()


async def one_event_per_second(w: Writer) -> None:
    w.write(SSE_HEAD)
    while True:
        w.write(_chunk(EVENT))
        await w.drain()
        await asyncio.sleep(1.0)


async def endless_headers(w: Writer) -> None:
    w.write(b"HTTP/1.1 200 OK\r\n")
    line = b"x-filler: " + b"a" * 1000 + b"\r\n"
    while True:
        w.write(line * 64)
        await w.drain()


async def _sized_body(w: Writer, content_type: bytes, block: bytes) -> None:
    w.write(
        b"HTTP/1.1 200 OK\r\ncontent-type: " + content_type
        + b"\r\ncontent-length: " + str(GB2).encode() + b"\r\n\r\n"
    )
    sent = 0
    while sent < GB2:
        w.write(block)
        sent += len(block)
        await w.drain()


async def json_2gb(w: Writer) -> None:
    await _sized_body(w, b"application/json", b'{"choices": [' + b" " * 65_522)


async def sse_2gb_no_blank_line(w: Writer) -> None:
    await _sized_body(w, b"text/event-stream", b"data: " + b"y" * 65_529 + b"\n")


async def html_200(w: Writer) -> None:
    page = b"<!doctype html><html><body><h1>Welcome to nginx!</h1></body></html>"
    w.write(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: "
        + str(len(page)).encode() + b"\r\n\r\n" + page
    )
    await w.drain()


async def status_999(w: Writer) -> None:
    w.write(b"HTTP/1.1 999 Whatever\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nno")
    await w.drain()


async def close_mid_chunk(w: Writer) -> None:
    w.write(SSE_HEAD + _chunk(EVENT) + b"100\r\n" + EVENT[:20])
    await w.drain()
    await asyncio.sleep(0.05)
    w.close()


# An API-key-shaped value in an allow-listed header, a cookie, a credential header, the
# server's own ids and limits, and a value a page must escape (tests/hostile/
# test_server_evidence.py).
LEAKED_KEY = "sk-proj-" + "Zq7xW2mN9pLk4TfR8vYb3HcJ6dGs1EaU"
LEAKY_HEADERS = (
    b"x-request-id: " + LEAKED_KEY.encode() + b"\r\n"
    b"set-cookie: __session=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLWhlcmU; "
    b"HttpOnly\r\n"
    b"authorization: Bearer " + LEAKED_KEY.encode() + b"\r\n"
    b"request-id: req_011CSHoEeqs5C35K2UUqR7Fy\r\n"
    b"openai-processing-ms: 42\r\n"
    b"x-ratelimit-remaining-tokens: 9000\r\n"
    b"x-ratelimit-reset-requests: <b>6m0s</b>\r\n"
    b"date: Tue, 01 Dec 2026 21:41:39 GMT\r\n"
)


async def leaky_headers(w: Writer) -> None:
    head = b'data: {"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","choices":[{"index":0,'
    w.write(
        SSE_HEAD.replace(b"\r\n\r\n", b"\r\n" + LEAKY_HEADERS + b"\r\n")
        + _chunk(head + b'"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\n')
        + _chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n"
    )
    await w.drain()


CASES: dict[str, Case] = {
    "endless-stream": endless_stream,
    "one-event-per-second": one_event_per_second,
    "endless-headers": endless_headers,
    "json-2gb": json_2gb,
    "sse-2gb-no-blank-line": sse_2gb_no_blank_line,
    "html-200": html_200,
    "status-999": status_999,
    "close-mid-chunk": close_mid_chunk,
    "leaky-headers": leaky_headers,
}


def deltas(count: int, size: int) -> Case:
    """`count` text deltas in one SSE stream, each event `size` bytes before its blank line,
    then a finish_reason and [DONE]: what an endpoint sends to fill the runner's memory while
    staying under every cap. Served at `/deltas-<count>-<size>/v1/...`."""
    head = b'data: {"choices":[{"index":0,"delta":{"content":"'
    tail = b'"}}]}'
    event = head + b"x" * (size - len(head) - len(tail)) + tail + b"\n\n"
    chunk = _chunk(event)

    async def case(w: Writer) -> None:
        w.write(SSE_HEAD)
        for _ in range(count):
            w.write(chunk)
            await w.drain()
        w.write(_chunk(b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n')
                + _chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n")
        await w.drain()

    return case


def _case(name: str) -> Case | None:
    """A fixed case by name, or a `deltas-<count>-<size>` one."""
    match = re.fullmatch(r"deltas-(\d+)-(\d+)", name)
    return deltas(int(match[1]), int(match[2])) if match else CASES.get(name)


async def _handle(reader: asyncio.StreamReader, writer: Writer) -> None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        await reader.readexactly(length)
        path = head.split(b" ")[1].decode()
        case = _case(path.strip("/").split("/")[0])
        if case is None:
            writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
            await writer.drain()
        else:
            await case(writer)
    except (ConnectionError, asyncio.IncompleteReadError, OSError, asyncio.CancelledError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


@contextlib.contextmanager
def hostile_server() -> Iterator[int]:
    """Serve every case on one loopback port (in a thread); yield the port."""
    loop = asyncio.new_event_loop()
    started = threading.Event()
    holder: dict[str, object] = {}

    async def main() -> None:
        server = await asyncio.start_server(_handle, "127.0.0.1", 0)
        holder["server"] = server
        holder["port"] = server.sockets[0].getsockname()[1]
        started.set()
        async with server:
            await server.serve_forever()

    def run() -> None:
        with contextlib.suppress(asyncio.CancelledError):
            loop.run_until_complete(main())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    started.wait(10)
    try:
        yield int(holder["port"])  # type: ignore[call-overload]
    finally:
        def stop() -> None:
            for task in asyncio.all_tasks(loop):
                task.cancel()

        loop.call_soon_threadsafe(stop)
        thread.join(10)
        loop.close()
