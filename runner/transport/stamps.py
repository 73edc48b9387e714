"""Kernel receive timestamps (Linux, plain HTTP) over a raw non-blocking socket.

With SO_TIMESTAMPNS the kernel stamps each received packet as it enters the network stack.
Reading through recvmsg() gives that stamp with the data, so an arrival is timed even when
this process was waiting for a CPU (on a loaded machine that wait is often milliseconds).
The stamp is CLOCK_REALTIME; only its age is used (now_realtime - stamp), subtracted from
perf_counter_ns() read at the same moment, so clock steps and slewing do not leak in.
Limit: a read returns the stamp of the newest packet it takes, and TCP merges packets that
wait in the receive queue, so events that queued up while the client was not reading share
the newest one's stamp. Kernel stamps remove the client's reading delay, not that merge.

`_StampedSocket` is the minimal asyncio transport that does it (add_reader + recvmsg_into,
buffered writes); it hands each read to `Connection.data_received(data, t_ns)`.
`stamped_connection` opens one (TCP_NODELAY, SO_TIMESTAMPNS) for the pool.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import sys
import threading
import time

import httpx

from epbench.runner.transport.connection import Connection

_clock = time.perf_counter_ns

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
        self, loop: asyncio.AbstractEventLoop, sock: socket.socket, conn: Connection
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


async def stamped_connection(
    loop: asyncio.AbstractEventLoop, host: str, port: int, timeout: float | None
) -> Connection:
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
        conn = Connection(loop)
        _StampedSocket(loop, sock, conn)
        return conn
    reason = last.strerror if last is not None and last.strerror else str(last)
    raise httpx.ConnectError(f"cannot connect to {host}:{port}: {reason}")
