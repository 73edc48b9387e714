"""One HTTP/1.1 connection as an asyncio protocol, parsed by httptools (llhttp).

One network read costs one `data_received` callback, one C parse and, when the reader is
waiting, one future wake-up. Each body piece is kept with the `perf_counter_ns()` taken in
`data_received` (or the kernel's receive stamp, `stamps.py`), when the read reached the
process; the pool hands it up as a `StampedBytes`, so a busy event loop does not shift TTFT.
A reader either takes the queued pieces (`body`) or sets a `sink` that is called inside the
read callback; a reader with a sink is woken only when there is something to decide.

Bounds (runner/bounds.py): the status line and headers may hold at most the request's
`HEADER_CAP_EXTENSION` bytes (`TooLarge` past it); bytes that are not HTTP raise
`ProtocolViolation`. The idle read timeout is one watchdog timer per response
(`httpx.ReadTimeout`). A connection parked after the stream's end marker drops the body's
tail, up to `_PARKED_TAIL_CAP` bytes, then closes.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Callable

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


class Connection(asyncio.Protocol):
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
