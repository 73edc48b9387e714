"""A lean HTTP/1.1 transport for httpx: asyncio protocols and the httptools (llhttp) parser.

httpx stays the client API; this replaces only its default transport (httpcore + h11), which
spends most of a streamed request's CPU re-entering Python layers for every network read (we
measured 31.6 ms of client CPU per 128-token streamed request at concurrency 16 with httpcore,
22 ms with httpcore on uvloop; see runner/DESIGN.md). Here one read costs one
`data_received` callback, one C parse and, when the reader is waiting, one future wake-up.

Each body piece is handed up as a `StampedBytes`: bytes that also carry `t_ns`, the
`perf_counter_ns()` taken in `data_received`, when the read reached the process. The client
uses that stamp rather than the time its task happened to be scheduled, so a busy event loop
does not shift TTFT.

Scope: HTTP/1.1 (plain or TLS), keep-alive pooling per (scheme, host, port) with a connection
cap, request bodies sent whole, httpx timeouts (connect, read, write, pool) honoured. Errors
are httpx's own exception types, so callers see the same tree as with the default transport.

Bounds (runner/bounds.py): the status line and headers may hold at most the request's
`HEADER_CAP_EXTENSION` bytes (`TooLarge` past it); bytes that are not HTTP raise
`ProtocolViolation`. A connection goes back to the pool only when its reader finished the
body or stopped at the stream's end marker; a reader that gave up (deadline, cap, error) closes
it, so an endless body is never left filling a buffer nobody reads.
"""

from __future__ import annotations

import asyncio
import collections
import socket
import ssl
import struct
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import httptools
import httpx

from epbench.runner.bounds import ProtocolViolation, TooLarge

_clock = time.perf_counter_ns


# Response extension holding the body, for callers that read (arrival ns, bytes) batches
# directly instead of through httpx's byte iterators.
BODY_EXTENSION = "epbench.lean_body"
# Response extension: perf_counter_ns() just before the request bytes were written.
WRITE_EXTENSION = "epbench.t_write_ns"
# Request extension: the most bytes the status line and headers may take.
HEADER_CAP_EXTENSION = "epbench.max_header_bytes"
DEFAULT_HEADER_CAP = 64 * 1024
# A connection parked after [DONE] may receive this much of the body's tail, no more.
_PARKED_TAIL_CAP = 1024 * 1024


class StampedBytes(bytes):
    """A body piece and `t_ns`, when its read arrived (perf_counter_ns)."""

    t_ns: int


class _Connection(asyncio.Protocol):
    """One keep-alive connection; parses one response at a time."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.parked: Callable[[], None] | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.closed = False
        self.reusable = False
        self.header_cap = DEFAULT_HEADER_CAP
        self._reset()

    def _reset(self) -> None:
        self.status = 0
        self.headers: list[tuple[bytes, bytes]] = []
        self.headers_done = False
        self.complete = False
        self.error: BaseException | None = None
        self.body: collections.deque[tuple[int, bytes]] = collections.deque()
        self.waiter: asyncio.Future[None] | None = None
        self._t = _clock()  # last activity: the request write, then each read
        self._timeout: float | None = None
        self._watchdog: asyncio.TimerHandle | None = None
        self.sink: Callable[[int, bytes], bool] | None = None
        self.sink_done = False
        self.head_bytes = 0
        self.tail_bytes = 0  # body bytes that arrived after the reader stopped at [DONE]

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's is not a subclass

    def data_received(self, data: bytes, t_ns: int | None = None) -> None:
        self._t = t_ns or _clock()
        headers_before = self.headers_done
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            if self.error is None:
                self.error = ProtocolViolation(f"malformed HTTP response: {exc}")
            self._close()
        if not headers_before and not self.headers_done and self.error is None:
            self.head_bytes += len(data)
            if self.head_bytes > self.header_cap:
                self.error = TooLarge(
                    f"the status line and headers are over {self.header_cap} bytes"
                )
                self._close()
        # A reader with a sink is woken only when there is something to decide.
        if self.sink is None or self.sink_done or self.complete or self.error is not None:
            self._wake()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if not self.complete and self.error is None:
            if self.headers_done:
                self.error = httpx.RemoteProtocolError("peer closed the connection mid-body")
            else:
                self.error = httpx.RemoteProtocolError(
                    "peer closed the connection without a response"
                )
        self._wake()

    # httptools callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        self.headers_done = True

    def on_body(self, body: bytes) -> None:
        if self.error is not None:
            return
        if self.parked is not None:
            # Nobody reads a parked connection's tail: drop it, and give up on a long one.
            self.tail_bytes += len(body)
            if self.tail_bytes > _PARKED_TAIL_CAP:
                self.parked = None
                self.error = TooLarge("the body went on long after the end of the stream")
                self._close()
            return
        sink = self.sink
        if sink is None or self.sink_done:
            self.body.append((self._t, body))
            return
        try:
            self.sink_done = sink(self._t, body)
        except Exception as exc:  # a bug in the sink must surface in the reader, not the loop
            self.error = exc
            self.sink_done = True

    def on_message_complete(self) -> None:
        self.complete = True
        self.reusable = self.parser.should_keep_alive()
        self.stop_watchdog()
        parked = self.parked
        if parked is not None:
            # Released after [DONE] but before the body's end: now it may be reused.
            self.parked = None
            if self.reusable and self.error is None:
                self.loop.call_soon(parked)

    # helpers
    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    async def wait(self, timeout: float | None) -> None:
        """Until the next read (or close); httpx.ReadTimeout after `timeout` idle seconds.

        One watchdog timer per response, re-armed only when it fires (not once per read):
        a timer per read cost as much as the read itself.
        """
        if timeout is not None and self._watchdog is None:
            self._timeout = timeout
            self._watchdog = self.loop.call_at(self._deadline(), self._check)
        waiter = self.loop.create_future()
        self.waiter = waiter
        try:
            await waiter
        finally:
            self.waiter = None

    def _deadline(self) -> float:
        assert self._timeout is not None
        idle = (_clock() - self._t) / 1e9
        return self.loop.time() + max(0.0, self._timeout - idle)

    def _check(self) -> None:
        assert self._timeout is not None
        if (_clock() - self._t) / 1e9 >= self._timeout:
            self._watchdog = None
            waiter = self.waiter
            if waiter is not None and not waiter.done():
                waiter.set_exception(httpx.ReadTimeout("no data within the read timeout"))
            return
        self._watchdog = self.loop.call_at(self._deadline(), self._check)

    def stop_watchdog(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None


class _Body(httpx.AsyncByteStream):
    def __init__(
        self,
        pool: LeanTransport,
        key: tuple[str, str, int],
        conn: _Connection,
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
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._slots = asyncio.Semaphore(max_connections) if max_connections else None
        self._ssl = ssl_context
        self._open: set[_Connection] = set()

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
        conn: _Connection | None = None
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
    ) -> tuple[_Connection, bool]:
        """(a connection, whether it was kept alive from an earlier request)."""
        idle = self._idle.get(key)
        while idle:
            conn = idle.pop()
            if not conn.closed:
                return conn, True
        return await self._new_connection(key, timeout), False

    async def _new_connection(
        self, key: tuple[str, str, int], timeout: float | None
    ) -> _Connection:
        scheme, host, port = key
        loop = asyncio.get_running_loop()
        if scheme == "http" and KERNEL_STAMPS:
            conn = await _stamped_connection(loop, host, port, timeout)
            self._open.add(conn)
            return conn
        context = None
        if scheme == "https":
            context = self._ssl or ssl.create_default_context()
        try:
            _, protocol = await asyncio.wait_for(
                loop.create_connection(
                    lambda: _Connection(loop),
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

    def _release(self, key: tuple[str, str, int], conn: _Connection, at_end: bool) -> None:
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

    def _park(self, key: tuple[str, str, int], conn: _Connection) -> None:
        if not conn.closed:
            self._idle.setdefault(key, []).append(conn)

    async def aclose(self) -> None:
        for conn in list(self._open):
            conn._close()
        self._open.clear()
        self._idle.clear()


# --- kernel receive timestamps (Linux, plain HTTP) -------------------------------------------
#
# With SO_TIMESTAMPNS the kernel stamps each received packet as it enters the network stack.
# Reading through recvmsg() gives that stamp with the data, so an arrival is timed even when
# this process was waiting for a CPU (on a loaded machine that wait is often milliseconds).
# The stamp is CLOCK_REALTIME; only its age is used (now_realtime - stamp), subtracted from
# perf_counter_ns() read at the same moment, so clock steps and slewing do not leak in.
# Limit: a read returns the stamp of the newest packet it takes, and TCP merges packets that
# wait in the receive queue, so events that queued up while the client was not reading share
# the newest one's stamp. Kernel stamps remove the client's reading delay, not that merge.

_SO_TIMESTAMPNS = 35  # Linux (asm-generic); SCM_TIMESTAMPNS has the same value
KERNEL_STAMPS = sys.platform == "linux"
_READ_SIZE = 262_144
_TIMESPEC = struct.Struct("qq").unpack_from
# One receive buffer per thread, shared by its stamped sockets: they read on their event
# loop's thread, one at a time, and each read copies its bytes out at once (recvmsg_into
# drops the GIL, so threads must not share one). recvmsg(262144) allocates 256 KiB per call
# and shrinks it to the ~200 bytes of a token's event: 11.7 us a read against 1.4 us for
# recvmsg_into this buffer plus the copy (runner/DESIGN.md, the transport's costs).
_buffers = threading.local()


def _read_buffer() -> tuple[bytearray, memoryview]:
    found: tuple[bytearray, memoryview] | None = getattr(_buffers, "pair", None)
    if found is None:
        buffer = bytearray(_READ_SIZE)
        found = _buffers.pair = (buffer, memoryview(buffer))
    return found


def _kernel_to_monotonic(stamp_realtime_ns: int) -> int:
    """A CLOCK_REALTIME packet stamp as perf_counter_ns(): now (monotonic) minus its age.

    Monotonic, realtime, monotonic: if the two monotonic reads are far apart (preempted in
    between), read again, so the age is never overstated (a stamp must not move earlier).
    """
    for _ in range(3):
        before = _clock()
        real = time.time_ns()
        after = _clock()
        if after - before < 20_000:
            break
    age = real - stamp_realtime_ns
    return after - age if age > 0 else after


class _StampedSocket:
    """A minimal transport: non-blocking socket, add_reader + recvmsg, buffered writes."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, sock: socket.socket, conn: _Connection
    ) -> None:
        self.loop = loop
        self.sock = sock
        self.conn = conn
        self.fd = sock.fileno()
        self._buffer, self._view = _read_buffer()
        self._out = b""
        self._closed = False
        conn.connection_made(self)  # type: ignore[arg-type]
        loop.add_reader(self.fd, self._readable)

    def _readable(self) -> None:
        try:
            size, ancillary, _flags, _addr = self.sock.recvmsg_into((self._buffer,), 64)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._lost(exc)
            return
        if not size:
            self._lost(None)
            return
        data = bytes(self._view[:size])
        t_ns = None
        if ancillary:
            payload = ancillary[0][2]
            if len(payload) >= 16:
                sec, nsec = _TIMESPEC(payload)
                t_ns = _kernel_to_monotonic(sec * 1_000_000_000 + nsec)
        self.conn.data_received(data, t_ns)

    def write(self, data: bytes) -> None:
        if self._closed:
            return
        if self._out:
            self._out += data
            return
        try:
            sent = self.sock.send(data)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError as exc:
            self._lost(exc)
            return
        if sent < len(data):
            self._out = data[sent:]
            self.loop.add_writer(self.fd, self._writable)

    def _writable(self) -> None:
        try:
            sent = self.sock.send(self._out)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._lost(exc)
            return
        self._out = self._out[sent:]
        if not self._out:
            self.loop.remove_writer(self.fd)

    def close(self) -> None:
        self._lost(None)

    def _lost(self, exc: Exception | None) -> None:
        if self._closed:
            return
        self._closed = True
        self.loop.remove_reader(self.fd)
        if self._out:
            self.loop.remove_writer(self.fd)
        self.sock.close()
        self.conn.connection_lost(exc)


async def _stamped_connection(
    loop: asyncio.AbstractEventLoop, host: str, port: int, timeout: float | None
) -> _Connection:
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise httpx.ConnectError(f"cannot resolve {host}: {exc}") from None
    last: OSError | None = None
    for family, kind, proto, _name, address in infos:
        sock = socket.socket(family, kind, proto)
        sock.setblocking(False)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
            await asyncio.wait_for(loop.sock_connect(sock, address), timeout)
        except TimeoutError:
            sock.close()
            raise httpx.ConnectTimeout(f"connecting to {host}:{port} timed out") from None
        except OSError as exc:
            sock.close()
            last = exc
            continue
        conn = _Connection(loop)
        _StampedSocket(loop, sock, conn)
        return conn
    reason = last.strerror if last is not None and last.strerror else str(last)
    raise httpx.ConnectError(f"cannot connect to {host}:{port}: {reason}")
