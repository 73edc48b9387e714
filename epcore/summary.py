"""Journal records in, result figures out: the one place a result's numbers are computed.

`epbench run`, `epbench merge` and `epbench validate` all call `summarize_run` with the run's
spec (epbench.core.runspec) and the journal records, so a merged result of shards equals the
unsharded result of the same records, and a published figure is what its journal says.
Records are ordered by (point, seq) first: the bootstrap resamples by position, and the
order requests happened to finish in must not change a confidence interval.

Sessions: each process that sends (the first run and every `--resume`) journals a
`{"type": "session"}` line before its first request, so a request belongs to the session whose
line precedes it. A point's window is the sum of its per-session windows (first send to last
completion within one session): the time between a kill and its resume is never counted.
Every session after the first is listed in `resumes` (when, and the gap in seconds). A merged
journal (`epbench merge`) puts a `{"type": "shard"}` line before each shard's lines: shards ran
side by side, so a shard's first session is not a resume.
"""

from __future__ import annotations

import statistics
from array import array
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from typing import Any

import numpy as np

from epbench.core.conversation_summary import conversation_block, is_conversation
from epbench.core.journal_columns import smallest_code
from epbench.core.metrics import burst as burst_metrics
from epbench.core.metrics import latency, pareto, throughput
from epbench.core.metrics.errors import OK, count_errors
from epbench.core.metrics.percentiles import summarize, summarize_integers
from epbench.core.round_trips import round_trips
from epbench.core.runspec import PointSpec, RunSpec

_DIGITS = 6
CALIBRATION_TOLERANCE = 0.05  # a point whose median actual/requested is further off is flagged


def dedupe(records: Iterable[Mapping[str, Any]]) -> list[MutableMapping[str, Any]]:
    """Request records (no `type` or `type == "request"`), first record per request_id kept;
    each carries `_session`, the number of session lines seen before it (set on the record
    itself, a dict or a journal_columns.Row: a copy of every record doubled the memory a large
    journal takes)."""
    seen: set[str] = set()
    out: list[MutableMapping[str, Any]] = []
    session = 0
    for record in records:
        if not isinstance(record, MutableMapping):
            record = dict(record)
        kind = record.get("type", "request")
        if kind in ("session", "shard"):
            session += 1
            continue
        if kind != "request":
            continue
        rid = record["request_id"]
        if rid in seen:
            continue
        seen.add(rid)
        record["_session"] = session
        out.append(record)
    return out


def resumes(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each session after the first: when it started and how long nothing was sent before it."""
    out: list[dict[str, Any]] = []
    sessions = 0
    last_ns = 0
    previous_ns = 0
    for record in records:
        kind = record.get("type", "request")
        if kind == "shard":
            sessions = last_ns = previous_ns = 0
        elif kind == "session":
            sessions += 1
            t_ns = int(record.get("t_ns") or 0)
            if sessions > 1:
                since = last_ns or previous_ns
                gap = (t_ns - since) / 1e9 if since and t_ns >= since else 0.0
                out.append({"at": str(record.get("at", ""))[:40], "gap_s": round(gap, 3)})
            previous_ns = t_ns
        elif kind == "request":
            done = record.get("t_done_ns") or record.get("t_send_ns") or 0
            last_ns = max(last_ns, int(done))
    return out


def window_ns(measured: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
    """(sending nanoseconds summed over sessions, the latest completion) of measured records."""
    by_session: dict[int, list[Mapping[str, Any]]] = {}
    for record in measured:
        by_session.setdefault(int(record.get("_session", 0)), []).append(record)
    total = end = 0
    for group in by_session.values():
        span = throughput.measurement_window(group)
        if span is not None:
            total += span[1] - span[0]
            end = max(end, span[1])
    return total, end


def _values(records: Sequence[Mapping[str, Any]], formula: Any) -> list[float]:
    return [v for v in (formula(r) for r in records) if v is not None]


def _gaps_us(records: Sequence[Mapping[str, Any]]) -> np.ndarray:
    """Every inter-token gap of the records (`latency.itl_us`, request by request) as one
    integer array of the smallest type that holds them all (1 to 8 bytes a gap, where a list
    of floats took 32); ValueError when a request's gaps are not integers."""
    count = 0
    codes: set[str] = set()
    for record in records:
        gaps = latency.itl_us(record)
        code = smallest_code(gaps if isinstance(gaps, array | list) else list(gaps))
        if code is None:
            raise ValueError("inter-token gaps that are not integers")
        codes.add(code)
        count += len(gaps)
    out = np.empty(count, dtype=np.result_type(*(_DTYPES[c] for c in codes or "B")))
    at = 0
    for record in records:
        gaps = latency.itl_us(record)
        out[at:at + len(gaps)] = gaps
        at += len(gaps)
    return out


_DTYPES = {"B": np.uint8, "H": np.uint16, "i": np.int32, "q": np.int64}


def summarize_point(
    point: PointSpec, records: Sequence[Mapping[str, Any]], slo: Mapping[str, float], seed: int,
    itl_interval: bool = False,
) -> dict[str, Any]:
    """The result's `point` object from the journal records of one point.

    Inter-token latency has no `ci95`: a request's gaps are not independent draws (they share
    its batch and its moment), so resampling gaps one by one would give an interval far too
    narrow. `itl_interval` recomputes the one that results written before this rule carry.
    """
    records = sorted(records, key=lambda r: r["seq"])
    measured = [r for r in records if not r.get("warmup")]
    ok = [r for r in measured if r["class"] == OK]
    sending_ns, end_ns = window_ns(measured)
    window_s = throughput.window_seconds(sending_ns)
    base = seed * 1000 + point.index * 10
    tpot = summarize(_values(ok, latency.tpot_ms), seed=base + 2)
    out: dict[str, Any] = {"id": point.id}
    if point.concurrency is not None:
        out["concurrency"] = point.concurrency
    else:
        out["rate"] = point.rate
    if point.phase:
        out["phase"] = point.phase
    sources = {r.get("token_source") for r in ok if r.get("token_source")}
    output = sum(r.get("output_tokens") or 0 for r in ok)
    in_window = throughput.output_tokens_in_window(ok, end_ns)
    out.update(
        window_s=round(window_s, _DIGITS),
        requests={
            "issued": len(measured),
            "completed": len(ok),
            "failed": len(measured) - len(ok),
            "warmup": len(records) - len(measured),
        },
        errors=count_errors(measured),
        ttft_ms=summarize(_values(ok, latency.ttft_ms), seed=base + 1),
        tpot_ms=tpot,
        itl_ms=summarize_integers(_gaps_us(ok), 1000,
                                  seed=base + 3 if itl_interval else None),
        e2e_ms=summarize(_values(ok, latency.e2e_ms), seed=base + 4),
    )
    ttfa = _values(ok, latency.ttfa_ms)
    if ttfa:
        out["ttfa_ms"] = summarize(ttfa, seed=base + 8)
    if point.rate is not None:
        out["schedule_delay_ms"] = summarize(
            _values(measured, latency.schedule_delay_ms), seed=base + 5
        )
        out["ttft_from_scheduled_ms"] = summarize(
            _values(ok, latency.ttft_from_scheduled_ms), seed=base + 6
        )
        out["e2e_from_scheduled_ms"] = summarize(
            _values(ok, latency.e2e_from_scheduled_ms), seed=base + 7
        )
    tps_user = throughput.tps_per_user(tpot["p90"])
    measured_input = [r for r in measured if _input_measured(r)]
    tokens: dict[str, Any] = {
        "input": sum(int(r["input_tokens"]) for r in measured_input),
        "output": output,
        "output_in_window": in_window,
        "source": "none" if not sources else sources.pop() if len(sources) == 1 else "mixed",
    }
    # Reported by the endpoint's usage only; absent (not 0) when no request reported them.
    for key, field in (("cached_input", "cache_read_tokens"),
                       ("cache_write", "cache_write_tokens"),
                       ("reasoning", "reasoning_tokens")):
        values = [r[field] for r in measured if isinstance(r.get(field), int)]
        if values:
            tokens[key] = sum(values)
    out.update(
        tokens=tokens,
        system_tps=round(throughput.system_tps(in_window, window_s), _DIGITS),
        tps_per_user=None if tps_user is None else round(tps_user, _DIGITS),
        goodput_rps=round(throughput.goodput_rps(measured, slo, window_s), _DIGITS),
        retries=retry_cost(records),
    )
    if any("input_source" in r for r in measured):  # journals written before it: as then
        out["tokens"]["input_source"] = _input_source(measured, measured_input)
    cache = cache_block(measured_input, journaled=any("cache_read_tokens" in r for r in measured))
    if cache is not None:
        out["cache"] = cache
    conversation = is_conversation(measured)
    # a conversation turn's planned length is its new message: only first turns hold to it
    calibration = input_calibration([r for r in measured_input if r.get("turn") == 0]
                                    if conversation else measured_input)
    if calibration is not None:
        out["input_calibration"] = calibration
    if conversation:
        out["conversation"] = conversation_block(records, base)
    return out


NOT_REPORTED = "not_reported"  # no measured request's usage carried a cached-token count
NO_INPUT = "no_input"  # the requests that reported one had no input tokens


def cache_block(measured_input: Sequence[Mapping[str, Any]],
                journaled: bool = True) -> dict[str, Any] | None:
    """The point's prompt-cache figures over its measured requests with usage input counts:

        hit_rate = sum(cached input tokens) / sum(input tokens), pooled over the requests whose
                   usage reported a cached count (a count of 0 is a report: nothing was read)
        requests, reported   how many requests had input counts, and how many of them
                             reported a cached count
        input, cached        input and cached input tokens of the reporting requests (so
                             points pool exactly: sum(cached) / sum(input))

    When none reported one, `hit_rate` is null and `reason` is "not_reported": the endpoint
    did not say, which is not a hit rate of 0. None for journals written before requests
    journaled `cache_read_tokens` (their results carry no `cache` block)."""
    if not journaled:
        return None
    reported = [r for r in measured_input if isinstance(r.get("cache_read_tokens"), int)]
    prompt = sum(int(r["input_tokens"]) for r in reported)
    cached = sum(min(int(r["cache_read_tokens"]), int(r["input_tokens"])) for r in reported)
    out: dict[str, Any] = {"hit_rate": None, "requests": len(measured_input),
                           "reported": len(reported), "input": prompt, "cached": cached}
    if not reported:
        out["reason"] = NOT_REPORTED
    elif prompt <= 0:
        out["reason"] = NO_INPUT
    else:
        out["hit_rate"] = round(cached / prompt, _DIGITS)
    return out


def _input_measured(record: Mapping[str, Any]) -> bool:
    """The record's input count is the endpoint's own. Journals written before
    `input_source` existed are read as they were summarized then (their count as given)."""
    return record.get("input_source", "usage") == "usage" and isinstance(
        record.get("input_tokens"), int
    )


def _input_source(measured: Sequence[Mapping[str, Any]],
                  usage: Sequence[Mapping[str, Any]]) -> str:
    if not measured:
        return "none"
    if len(usage) == len(measured):
        return "usage"
    return "planned" if not usage else "mixed"


def input_calibration(records: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Requested against actual input tokens over records with both (None when there are
    none): medians, the median ratio, and whether it is off by more than 5%."""
    pairs = [
        (int(r["input_requested"]), int(r["input_tokens"]))
        for r in records
        if isinstance(r.get("input_requested"), int) and r["input_requested"] > 0
    ]
    if not pairs:
        return None
    ratio = statistics.median(actual / requested for requested, actual in pairs)
    return {
        "samples": len(pairs),
        "requested_median": float(statistics.median(p[0] for p in pairs)),
        "actual_median": float(statistics.median(p[1] for p in pairs)),
        "ratio_median": round(ratio, _DIGITS),
        "off": abs(ratio - 1.0) > CALIBRATION_TOLERANCE,
    }


def retry_cost(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Extra attempts, their output tokens and the seconds they (and backoff) took."""
    requests = tokens = 0
    seconds = 0.0
    for r in records:
        requests += max(0, int(r.get("attempts", 1)) - 1)
        tokens += int(r.get("retry_tokens") or 0)
        seconds += float(r.get("retry_s") or 0.0)
    return {"requests": requests, "tokens": tokens, "seconds": round(seconds, _DIGITS)}


def burst_block(
    spec: RunSpec, by_point: Mapping[str, Sequence[Mapping[str, Any]]]
) -> dict[str, Any] | None:
    """The result's `burst` object (phases and recovery seconds), for burst plans."""
    if spec.pattern != "burst" or not spec.burst:
        return None
    offsets = spec.offsets
    phases = []
    samples: list[tuple[float, float]] = []
    base_p99 = None
    spike_end = 0.0
    for point in spec.points:
        records = by_point.get(point.id, [])
        ttfts = []
        for r in records:
            value = latency.ttft_ms(r)
            if value is not None:
                ttfts.append(value)
                samples.append((float(offsets.get(r["request_id"]) or 0.0), value))
        failed = sum(1 for r in records if r["class"] != OK)
        phase = burst_metrics.phase_stats(
            point.phase or point.id,
            point.start_s or 0.0,
            point.end_s or 0.0,
            point.rate or 0.0,
            ttfts,
            len(records),
            failed,
        )
        phases.append(phase)
        if point.phase == "base":
            base_p99 = phase["ttft_p99_ms"]
        if point.phase == "spike":
            spike_end = point.end_s or 0.0
    recovery = burst_metrics.recovery_seconds(
        samples, spike_end, float(spec.burst["end_s"]), base_p99, float(spec.burst["window_s"])
    )
    return {"phases": phases, "recovery_s": recovery}


def summarize_run(
    spec: RunSpec, records: Iterable[Mapping[str, Any]], itl_interval: bool = False
) -> dict[str, Any]:
    """`points`, `pareto`, `retries`, (burst) `burst`, (when resumed) `resumes` and (when the
    sessions journaled them) `round_trips` of a result (`itl_interval`: see summarize_point)."""
    records = list(records)
    by_point: dict[str, list[MutableMapping[str, Any]]] = {}
    for record in dedupe(records):
        by_point.setdefault(record["point"], []).append(record)
    chosen = spec.points
    result_points = [
        summarize_point(p, by_point.get(p.id, []), spec.slo, spec.seed, itl_interval)
        for p in chosen
    ]
    out: dict[str, Any] = {
        "points": result_points,
        "pareto": pareto.frontier(result_points),
        "retries": retry_cost(r for p in chosen for r in by_point.get(p.id, [])),
    }
    block = burst_block(spec, by_point)
    if block is not None:
        out["burst"] = block
    listed = resumes(records)
    if listed:
        out["resumes"] = listed
    measured = round_trips(records)
    if measured is not None:
        out["round_trips"] = measured
    return out


def all_failed(records: Iterable[Mapping[str, Any]]) -> str | None:
    """When requests were sent and not one succeeded: what happened, in one phrase; else None.

    A run like that measured nothing about the endpoint (a dead port gives only `connection`
    errors): `epbench run` exits non-zero on it and `epbench validate` rejects its result."""
    sent = 0
    first: Mapping[str, Any] | None = None
    for record in records:
        if record.get("type", "request") != "request":
            continue
        if record.get("class") == OK:
            return None
        sent += 1
        first = first or record
    if not sent or first is None:
        return None
    detail = str(first.get("error") or "")[:160]
    what = f"{first.get('class')}: {detail}" if detail else str(first.get("class"))
    return f"all {sent} requests failed (first: {what})"
