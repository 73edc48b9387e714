"""A live progress bar per point: requests done/planned, req/s, errors, TTFT p50."""

from __future__ import annotations

import statistics
import sys
import time
from typing import Any


class PointProgress:
    """A tqdm bar on stderr (or nothing when disabled); updated once per finished request."""

    def __init__(self, label: str, planned: int, enabled: bool) -> None:
        self._bar: Any = None
        self._errors = 0
        self._ttfts: list[float] = []
        self._last_post = 0.0
        if enabled:
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
        if self._bar is None:
            return
        if record["class"] != "ok":
            self._errors += 1
        elif record.get("t_first_ns"):
            self._ttfts.append((record["t_first_ns"] - record["t_send_ns"]) / 1e6)
        self._bar.update(1)
        now = time.monotonic()
        if now - self._last_post > 0.5:
            self._last_post = now
            p50 = statistics.median(self._ttfts[-512:]) if self._ttfts else None
            self._bar.set_postfix(
                errors=self._errors, ttft_p50_ms="-" if p50 is None else f"{p50:.1f}", refresh=False
            )

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
