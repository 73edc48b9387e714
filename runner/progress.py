"""Progress per point: a tqdm bar on a terminal, plain lines without one, or nothing.

    mode "bar"    a live bar on stderr: requests done/planned, req/s, errors, TTFT p50
    mode "lines"  one line on stderr when a point ends, and one per 10% of a point of 50
                  requests or more, at most one per 2 s (logs and CI have no terminal, and
                  silence looks stuck)
    mode "off"    nothing (`--no-progress`)

`True`/`False` are accepted for "bar"/"off".
"""

from __future__ import annotations

import collections
import statistics
import sys
import time
from typing import Any

LONG_POINT = 50
LINE_EVERY_S = 2.0  # a 10% line only when the last line is this old: fast points stay quiet


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

    def __init__(self, label: str, planned: int, mode: bool | str) -> None:
        self._bar: Any = None
        self._mode = progress_mode(mode)
        self._label = label
        self._planned = planned
        self._done = 0
        self._errors = 0
        self._ttfts: collections.deque[float] = collections.deque(maxlen=512)  # bounded
        self._started = self._last_post = time.monotonic()
        self._next_line = 0.1
        if self._mode == "bar":
            from tqdm import tqdm

            self._bar = tqdm(
                total=planned,
                desc=label,
                unit="req",
                file=sys.stderr,
                leave=True,
                dynamic_ncols=True,
            )

    def update(self, record: dict[str, Any]) -> None:
        if self._mode == "off":
            return
        self._done += 1
        if record["class"] != "ok":
            self._errors += 1
        elif record.get("t_first_ns") and record.get("t_send_ns"):
            self._ttfts.append((record["t_first_ns"] - record["t_send_ns"]) / 1e6)
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
            now = time.monotonic()
            if now - self._last_post >= LINE_EVERY_S:
                self._last_post = now
                self._line(f"{round(100 * self._done / self._planned)}%")

    def _p50(self) -> float | None:
        return statistics.median(self._ttfts) if self._ttfts else None

    def _line(self, what: str) -> None:
        p50 = self._p50()
        ttft = "-" if p50 is None else f"{p50:.1f} ms"
        seconds = time.monotonic() - self._started
        print(
            f"epbench: {self._label}: {what}, {self._done}/{self._planned} requests, "
            f"{self._errors} failed, ttft p50 {ttft}, {seconds:.1f} s",
            file=sys.stderr,
            flush=True,
        )

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        elif self._mode == "lines":
            self._line("done")
