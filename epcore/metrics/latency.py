"""Per-request latencies from journal records (all times perf_counter_ns, CLOCK_MONOTONIC).

    TTFT  = t_first - t_send            (first content-bearing event; role-only/empty chunks
                                          and usage-only chunks never count)
    TTFA  = t_first_answer - t_send     (first answer token: text or a tool call, not
                                          reasoning; equals TTFT for a model that does not
                                          stream reasoning)
    E2E   = t_last - t_send             (last content-bearing event; a trailing usage-only
                                          chunk does not extend it)
    TPOT  = (E2E - TTFT) / (output_tokens - 1)   for requests with 2 or more output tokens
    ITL   = the gaps between successive content-bearing events (itl_us in the journal, us;
            reported in ms: gap / 1000)
    open loop only:
    schedule delay      = t_send - t_scheduled
    TTFT from scheduled = t_first - t_scheduled
    E2E from scheduled  = t_last - t_scheduled

All results are in milliseconds (`itl_us` returns the journaled microseconds). Only successful
(`class == "ok"`) records have latencies; every function returns None for a record where the
formula does not apply.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

NS_PER_MS = 1_000_000


def _ok(record: Mapping[str, Any]) -> bool:
    return record.get("class") == "ok" and record.get("t_first_ns") is not None


def ttft_ms(record: Mapping[str, Any]) -> float | None:
    if not _ok(record):
        return None
    return (record["t_first_ns"] - record["t_send_ns"]) / NS_PER_MS


def ttfa_ms(record: Mapping[str, Any]) -> float | None:
    """Time to the first answer token; None for records written before it was recorded."""
    if not _ok(record) or record.get("t_first_answer_ns") is None:
        return None
    return (record["t_first_answer_ns"] - record["t_send_ns"]) / NS_PER_MS


def e2e_ms(record: Mapping[str, Any]) -> float | None:
    if not _ok(record):
        return None
    return (record["t_last_ns"] - record["t_send_ns"]) / NS_PER_MS


def tpot_ms(record: Mapping[str, Any]) -> float | None:
    tokens = record.get("output_tokens")
    if not _ok(record) or tokens is None or tokens < 2:
        return None
    return (record["t_last_ns"] - record["t_first_ns"]) / NS_PER_MS / (tokens - 1)


def itl_us(record: Mapping[str, Any]) -> Sequence[int]:
    """The request's inter-token gaps in microseconds, as journaled (none unless it is ok):
    epbench.core.summary summarizes a point's gaps as integers, divided by 1000 to ms."""
    if not _ok(record):
        return ()
    return record.get("itl_us") or ()


def schedule_delay_ms(record: Mapping[str, Any]) -> float | None:
    """Applies to every sent request that had a schedule, failed ones included."""
    scheduled = record.get("t_scheduled_ns")
    if scheduled is None or not record.get("t_send_ns"):
        return None
    return (record["t_send_ns"] - scheduled) / NS_PER_MS


def ttft_from_scheduled_ms(record: Mapping[str, Any]) -> float | None:
    scheduled = record.get("t_scheduled_ns")
    if scheduled is None or not _ok(record):
        return None
    return (record["t_first_ns"] - scheduled) / NS_PER_MS


def e2e_from_scheduled_ms(record: Mapping[str, Any]) -> float | None:
    scheduled = record.get("t_scheduled_ns")
    if scheduled is None or not _ok(record):
        return None
    return (record["t_last_ns"] - scheduled) / NS_PER_MS
