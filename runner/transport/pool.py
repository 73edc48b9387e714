"""The httpx transport: a keep-alive pool of lean connections (`connection.py`).

httpx stays the client API; this replaces only its default transport (httpcore + h11), which
spends most of a streamed request's CPU re-entering Python layers for every network read (we
measured 31.6 ms of client CPU per 128-token streamed request at concurrency 16 with httpcore,
22 ms with httpcore on uvloop; see runner/DESIGN.md).

Scope: HTTP/1.1 (plain or TLS), keep-alive pooling per (scheme, host, port) with a connection
cap (slots), request bodies sent whole, httpx timeouts (connect, read, write, pool) honoured.
Errors are httpx's own exception types, so callers see the same tree as with the default
transport. Plain HTTP on Linux connects through `stamps.py` (kernel receive timestamps).

The body (`_Body`) is read as (arrival ns, bytes) batches, drained into a sink, or iterated
as `StampedBytes`. A connection goes back to the pool only when its reader finished the body
or stopped at the stream's end marker (then it is parked until the body's end arrives); a
reader that gave up (deadline, cap, error) closes it, so an endless body is never left filling
a buffer nobody reads.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Callable
from typing import Any

import httpx

from epbench.runner.bounds import ProtocolViolation, TooLarge
from epbench.runner.transport.connection import (
    BODY_EXTENSION,
    DEFAULT_HEADER_CAP,
    HEADER_CAP_EXTENSION,
    WRITE_EXTENSION,
    Connection,
    StampedBytes,
)
from epbench.runner.transport.stamps import KERNEL_STAMPS, stamped_connection

_clock = time.perf_counter_ns


class _Body(httpx.AsyncByteStream):
    def __init__(
        self,
        pool: LeanTransport,
        key: tuple[str, str, int],
        conn: Connection,
        read_timeout: float | None,
    ) -> None:
        self._pool = pool
        self._key = key
        self._conn = conn
        self._timeout = read_timeout
        self._released = False
        self._at_end = False  # the reader reached the end, or stopped at the stream's end

    async def next_batch(self) -> list[tuple[int, bytes]]:
        """Every (arrival ns, bytes) piece received so far, waiting for one if there is none;
        [] at the end of the body. Raises the connection's error (httpx types)."""
        conn = self._conn
        while True:
            if conn.body:
                batch = list(conn.body)
                conn.body.clear()
                return batch
            if conn.complete:
                self._at_end = True
                return []
            if conn.error is not None:
                raise conn.error
            await conn.wait(self._timeout)

    async def drain(self, sink: Callable[[int, bytes], bool]) -> None:
        """Hand every body piece to `sink(arrival_ns, bytes)` as it arrives, inside the
        protocol's read callback (no task wake-up per read), until the body ends or `sink`
        returns True. Raises the connection's error (httpx types)."""
        conn = self._conn
        while conn.body:
            t, data = conn.body.popleft()
            if sink(t, data):
                self._at_end = True
                return
        conn.sink = sink
        conn.sink_done = False
        try:
            while not (conn.sink_done or conn.complete):
                if conn.error is not None:
                    raise conn.error
                await conn.wait(self._timeout)
            if conn.error is not None:
                raise conn.error
            self._at_end = True
        finally:
            conn.sink = None

    async def __aiter__(self) -> Any:
        while True:
            batch = await self.next_batch()
            if not batch:
                return
            for t, data in batch:
                piece = StampedBytes(data)
                piece.t_ns = t
                yield piece

    async def aclose(self) -> None:
        if not self._released:
            self._released = True
            self._conn.stop_watchdog()
            self._pool._release(self._key, self._conn, self._at_end)


class LeanTransport(httpx.AsyncBaseTransport):
    """httpx transport over asyncio protocols; `max_connections` per transport."""

    def __init__(
        self, max_connections: int = 100, ssl_context: ssl.SSLContext | None = None
    ) -> None:
        self._idle: dict[tuple[str, str, int], list[Connection]] = {}
        self._slots = asyncio.Semaphore(max_connections) if max_connections else None
        self._ssl = ssl_context
        self._open: set[Connection] = set()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        timeouts = request.extensions.get("timeout", {})
        url = request.url
        scheme = url.scheme
        host = url.host
        port = url.port or (443 if scheme == "https" else 80)
        key = (scheme, host, port)
        await self._acquire_slot(timeouts.get("pool"))
        content = await request.aread()
        head = [f"{request.method} {url.raw_path.decode('ascii')} HTTP/1.1\r\n".encode()]
        for name, value in request.headers.raw:
            head.append(name + b": " + value + b"\r\n")
        head.append(b"\r\n")
        data = b"".join(head) + content
        read_timeout = timeouts.get("read")
        header_cap = int(request.extensions.get(HEADER_CAP_EXTENSION, DEFAULT_HEADER_CAP))
        conn: Connection | None = None
        try:
            for tries_left in (1, 0):
                conn, reused = await self._connection(key, timeouts.get("connect"))
                conn._reset()
                conn.header_cap = header_cap
                conn._t = _clock()
                assert conn.transport is not None
                t_write = _clock()
                conn.transport.write(data)
                try:
                    while not conn.headers_done:
                        if conn.error is not None:
                            raise conn.error
                        await conn.wait(read_timeout)
                    break
                except httpx.RemoteProtocolError:
                    # A kept-alive connection the server closed while it sat idle: not one
                    # byte came back, so the request was never answered; send it once more
                    # on a new connection (as httpcore does).
                    stale = reused and conn.closed and conn.head_bytes == 0 and not isinstance(
                        conn.error, ProtocolViolation | TooLarge
                    )
                    if not (stale and tries_left):
                        raise
                    self._open.discard(conn)
        except BaseException:
            if conn is not None:
                conn._close()
                self._open.discard(conn)
            self._release_slot()
            raise
        assert conn is not None
        body = _Body(self, key, conn, read_timeout)
        return httpx.Response(
            conn.status,
            headers=conn.headers,
            stream=body,
            extensions={
                "http_version": b"HTTP/1.1",
                BODY_EXTENSION: body,
                WRITE_EXTENSION: t_write,
            },
        )

    async def _acquire_slot(self, timeout: float | None) -> None:
        if self._slots is None:
            return
        if not self._slots.locked():
            # a free slot is taken at once: wait_for would yield to the event loop first, and
            # under load that left fewer requests in flight than the concurrency asked
            await self._slots.acquire()
            return
        try:
            await asyncio.wait_for(self._slots.acquire(), timeout)
        except TimeoutError:
            raise httpx.PoolTimeout("no free connection within the pool timeout") from None

    def _release_slot(self) -> None:
        if self._slots is not None:
            self._slots.release()

    async def _connection(
        self, key: tuple[str, str, int], timeout: float | None
    ) -> tuple[Connection, bool]:
        """(a connection, whether it was kept alive from an earlier request)."""
        idle = self._idle.get(key)
        while idle:
            conn = idle.pop()
            if not conn.closed:
                return conn, True
        return await self._new_connection(key, timeout), False

    async def _new_connection(
        self, key: tuple[str, str, int], timeout: float | None
    ) -> Connection:
        scheme, host, port = key
        loop = asyncio.get_running_loop()
        if scheme == "http" and KERNEL_STAMPS:
            conn = await stamped_connection(loop, host, port, timeout)
            self._open.add(conn)
            return conn
        context = None
        if scheme == "https":
            context = self._ssl or ssl.create_default_context()
        try:
            _, protocol = await asyncio.wait_for(
                loop.create_connection(
                    lambda: Connection(loop),
                    host,
                    port,
                    ssl=context,
                    server_hostname=host if context else None,
                ),
                timeout,
            )
        except TimeoutError:
            raise httpx.ConnectTimeout(f"connecting to {host}:{port} timed out") from None
        except OSError as exc:
            raise httpx.ConnectError(
                f"cannot connect to {host}:{port}: {exc.strerror or exc}"
            ) from None
        self._open.add(protocol)
        return protocol

    def _release(self, key: tuple[str, str, int], conn: Connection, at_end: bool) -> None:
        if not at_end:
            # The reader gave up before the end (deadline, a cap, an error): never reuse.
            conn._close()
            self._open.discard(conn)
        elif conn.complete and conn.reusable and not conn.closed and conn.error is None:
            self._idle.setdefault(key, []).append(conn)
        elif not conn.complete and not conn.closed and conn.error is None:
            # The reader stopped at [DONE]; the body's last bytes are still on their way.
            conn.parked = lambda: self._park(key, conn)
        else:
            conn._close()
            self._open.discard(conn)
        self._release_slot()

    def _park(self, key: tuple[str, str, int], conn: Connection) -> None:
        if not conn.closed:
            self._idle.setdefault(key, []).append(conn)

    async def aclose(self) -> None:
        for conn in list(self._open):
            conn._close()
        self._open.clear()
        self._idle.clear()
