"""Throughput per measurement point.

window_s      = (last measured t_done - first measured t_send) / 1e9   (warm-up excluded;
                at least 1 ns, so an empty point divides by something); a resumed run sums
                this over its sending sessions (epbench.core.summary.window_ns)
system_tps    = output tokens of successful requests completed inside the window / window_s
                (inside: t_done <= the window's end)
tps_per_user  = 1000 / TPOT p90 (ms)          (None when no request had 2+ tokens)
goodput_rps   = successful requests meeting every SLO the workload sets / window_s
                (SLOs: ttft_ms, tpot_ms, e2e_ms; an SLO on TPOT is met by a request too
                short to have a TPOT only if it meets the others)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from epbench.core.metrics.latency import e2e_ms, tpot_ms, ttft_ms


def measurement_window(records: Iterable[Mapping[str, Any]]) -> tuple[int, int] | None:
    """(start_ns, end_ns) of measured records: first send to last completion; None if none."""
    sends = []
    dones = []
    for record in records:
        if record.get("warmup") or not record.get("t_send_ns"):
            continue
        sends.append(record["t_send_ns"])
        dones.append(record.get("t_done_ns") or record["t_send_ns"])
    if not sends:
        return None
    return min(sends), max(dones)


MIN_WINDOW_S = 1e-9


def window_seconds(sending_ns: int) -> float:
    """window_s: nanoseconds of sending (summed over a point's sessions) in seconds, at least
    MIN_WINDOW_S so that rates over an empty window stay finite."""
    return max(sending_ns / 1e9, MIN_WINDOW_S)


def output_tokens_in_window(ok_records: Iterable[Mapping[str, Any]], end_ns: int) -> int:
    """Output tokens of the successful records completed by `end_ns` (the window's end)."""
    return sum(
        r.get("output_tokens") or 0 for r in ok_records if r.get("t_done_ns", 0) <= end_ns
    )


def system_tps(output_tokens_in_window: int, window_s: float) -> float:
    if window_s <= 0:
        return 0.0
    return output_tokens_in_window / window_s


def tps_per_user(tpot_p90_ms: float | None) -> float | None:
    if tpot_p90_ms is None or tpot_p90_ms <= 0:
        return None
    return 1000.0 / tpot_p90_ms


def meets_slo(record: Mapping[str, Any], slo: Mapping[str, float]) -> bool:
    """A successful request that meets every SLO set (unset ones are not checked)."""
    if record.get("class") != "ok":
        return False
    checks = (("ttft_ms", ttft_ms), ("tpot_ms", tpot_ms), ("e2e_ms", e2e_ms))
    for key, formula in checks:
        limit = slo.get(key)
        if limit is None:
            continue
        value = formula(record)
        if value is None:
            if key == "tpot_ms":
                continue
            return False
        if value > limit:
            return False
    return True


def goodput_rps(
    records: Iterable[Mapping[str, Any]], slo: Mapping[str, float], window_s: float
) -> float:
    if window_s <= 0:
        return 0.0
    return sum(1 for record in records if meets_slo(record, slo)) / window_s
