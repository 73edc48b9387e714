"""Progress per point: a tqdm bar on a terminal, plain lines without one, or nothing.

    mode "bar"    a live bar on stderr: requests done/planned, req/s, errors, TTFT p50
    mode "lines"  one line on stderr when a point ends, one per 10% of a point of 50
                  requests or more (at most one per 2 s), and one whenever 5 s have passed
                  without a line, even while no request finishes (logs and CI have no
                  terminal, and silence looks stuck); "interrupted" when Ctrl-C ends it
    mode "off"    nothing (`--no-progress`)

`True`/`False` are accepted for "bar"/"off". Counts include what earlier sessions of a
resumed run finished (`done_before`); an agentic run counts trials, and the requests they
sent apart.
"""

from __future__ import annotations

import asyncio
import collections
import statistics
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any

LONG_POINT = 50
LINE_EVERY_S = 2.0  # a 10% line only when the last line is this old: fast points stay quiet
QUIET_S = 5.0  # without a terminal, never longer than this without a line


def auto_mode(stream: Any = None) -> str:
    """"bar" on a terminal, "lines" without one: the default of `epbench run` and the demo."""
    return "bar" if (stream or sys.stderr).isatty() else "lines"


def progress_mode(value: bool | str) -> str:
    if value is True:
        return "bar"
    if value is False:
        return "off"
    return str(value)


class PointProgress:
    """Updated once per finished request; `close()` when the point ends."""

    def __init__(self, label: str, planned: int, mode: bool | str, done_before: int = 0,
                 unit: str = "requests", requests_before: int = 0) -> None:
        self._bar: Any = None
        self._mode = progress_mode(mode)
        self._label = label
        self._planned = planned
        self._unit = unit
        self._done = done_before
        self._errors = 0
        self._requests = requests_before  # requests the trials sent (unit "trials")
        self._ttfts: collections.deque[float] = collections.deque(maxlen=512)  # bounded
        self._started = self._last_post = time.monotonic()
        self._next_line = 0.1
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        if self._mode == "lines":
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()
        if self._mode == "bar":
            from tqdm import tqdm

            self._bar = tqdm(
                total=planned,
                initial=done_before,
                desc=label,
                unit="trial" if unit == "trials" else "req",
                file=sys.stderr,
                leave=True,
                dynamic_ncols=True,
            )

    def update(self, record: Mapping[str, Any]) -> None:
        """One finished request (or trial: `requests` then says how many it sent)."""
        if self._mode == "off":
            return
        with self._lock:
            self._count(record)
        if self._bar is not None:
            self._bar.update(1)
            now = time.monotonic()
            if now - self._last_post > 0.5:
                self._last_post = now
                p50 = self._p50()
                self._bar.set_postfix(
                    errors=self._errors,
                    ttft_p50_ms="-" if p50 is None else f"{p50:.1f}",
                    refresh=False,
                )
        elif (
            self._planned >= LONG_POINT
            and self._done < self._planned
            and self._done >= self._next_line * self._planned
        ):
            while self._next_line * self._planned <= self._done:
                self._next_line += 0.1
            if time.monotonic() - self._last_post >= LINE_EVERY_S:
                self._line(f"{round(100 * self._done / self._planned)}%")

    def _count(self, record: Mapping[str, Any]) -> None:
        self._done += 1
        self._requests += int(record.get("requests") or 0)
        if record["class"] != "ok":
            self._errors += 1
        elif record.get("t_first_ns") and record.get("t_send_ns"):
            self._ttfts.append((record["t_first_ns"] - record["t_send_ns"]) / 1e6)

    def _tick(self) -> None:
        while not self._stop.wait(0.5):
            if time.monotonic() - self._last_post >= QUIET_S:
                self._line("running")

    def _p50(self) -> float | None:
        return statistics.median(self._ttfts) if self._ttfts else None

    def _line(self, what: str) -> None:
        with self._lock:
            self._last_post = time.monotonic()
            p50 = self._p50()
            ttft = "-" if p50 is None else f"{p50:.1f} ms"
            seconds = self._last_post - self._started
            count = f"{self._done}/{self._planned} {self._unit}"
            if self._unit == "trials":
                count += f" ({self._requests} requests)"
            failed = "ended in an error" if self._unit == "trials" else "failed"
            text = (f"epbench: {self._label}: {what}, {count}, {self._errors} {failed}, "
                    f"ttft p50 {ttft}, {seconds:.1f} s")
        print(text, file=sys.stderr, flush=True)

    def close(self) -> None:
        """The last line: "done", or "interrupted" when Ctrl-C (or a cancel) is ending it."""
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        stopped = isinstance(sys.exc_info()[1], KeyboardInterrupt | asyncio.CancelledError)
        if self._bar is not None:
            self._bar.close()
        elif self._mode == "lines":
            self._line("interrupted" if stopped else "done")
