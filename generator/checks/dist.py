"""Latency distributions are well-formed: ordered percentiles, positive times, honest counts.

- p50 <= p90 <= p95 <= p99
- a distribution with n > 0 has every percentile; with n == 0, none
- times that cannot be zero (TTFT, E2E, decision, task wall) are > 0
- a TPOT of 0 is a stream that arrived in one burst (a real server does this when its API
  process is starved: vLLM on a busy machine): flagged and kept, since what a server did is
  evidence, and named as the reason per-token figures (tps_per_user) are missing
- the `insufficient` list agrees with n: p90 with n < 64, p99 with n < 662
"""

from __future__ import annotations

from functools import lru_cache
from itertools import pairwise
from typing import Any

from epbench.core.findings import Finding
from epbench.core.metrics.percentiles import MIN_SAMPLES, insufficient
from epbench.generator.checks.base import Subject, check, fmt, on_point, on_result

P90_MIN_SAMPLES = MIN_SAMPLES["p90"]
P99_MIN_SAMPLES = MIN_SAMPLES["p99"]
_KEYS = ("p50", "p90", "p95", "p99")
# Inter-token gaps of a burst are 0: a TPOT of 0 is flagged (BURST), not rejected.
BURST_TIMES = frozenset({"tpot_ms"})
POSITIVE_TIMES = frozenset({
    "ttft_ms", "tpot_ms", "e2e_ms", "ttft_from_scheduled_ms", "e2e_from_scheduled_ms",
    "decision_ms", "first_tool_delta_ms", "task_wall_ms",
})

ORDER = check(
    "dist.order", "reject-point", "percentiles are ordered p50 <= p90 <= p95 <= p99",
    "percentiles must not decrease: recompute them from the journal",
)
PRESENCE = check(
    "dist.presence", "reject-point",
    "a distribution with samples has all percentiles; one without samples has none",
    "write null percentiles when n is 0, and numbers when n > 0",
)
POSITIVE = check(
    "dist.positive", "reject-point", "latencies that cannot be zero are greater than zero",
    "a zero latency means the clock was not read: re-run the point",
)
BURST = check(
    "dist.burst-stream", "flag",
    "a TPOT of 0: the stream arrived in one burst, so per-token timing was not measured",
    "nothing to fix in the result: the server sent its tokens at once (a starved API process, "
    "a buffering proxy); tps_per_user is left out where TPOT p90 is 0",
)
SUFFICIENCY = check(
    "dist.sufficiency", "reject-point",
    f"`insufficient` lists p90 exactly when n < {P90_MIN_SAMPLES} and p99 when n < "
    f"{P99_MIN_SAMPLES}",
    f"list p90 in `insufficient` when n < {P90_MIN_SAMPLES} and p99 when n < {P99_MIN_SAMPLES}",
)

UNSTATED = check(
    "dist.sufficiency-unstated", "flag",
    "a thinly sampled distribution says so in `insufficient`",
    "add `insufficient` with the percentiles that have too few samples",
)


def expected_insufficient(n: int) -> set[str]:
    """Which percentiles are too thinly sampled to publish without a warning."""
    return set(insufficient(n))


def _clean(dist: dict[str, Any], name: str, n: int, values: list[Any]) -> bool:
    """True only when check_dist (partial_ok False) finds nothing: the common case of every
    percentile present, in order, positive where it must be, and `insufficient` as stated
    (tested in one pass; anything else goes through the checks one by one)."""
    if n <= 0 or None in values:
        return False
    p50, p90, p95, p99 = values
    if not (p50 <= p90 <= p95 <= p99):
        return False
    if name in POSITIVE_TIMES and not p50 > 0:  # the smallest of the ordered four
        return False
    expected = _expected(n)
    if "insufficient" in dist:
        stated = dist["insufficient"]
        return set(stated) == expected
    return not expected


@lru_cache(maxsize=1024)
def _expected(n: int) -> frozenset[str]:
    """expected_insufficient(n), with no work for the usual n past every threshold."""
    if n >= _MOST_NEEDED:
        return _NONE
    return frozenset(expected_insufficient(n))


_NONE: frozenset[str] = frozenset()
_MOST_NEEDED = max(MIN_SAMPLES.values())


def check_dist(dist: dict[str, Any], name: str, where: str, file: str,
               partial_ok: bool = False) -> list[Finding]:
    """Findings for one distribution object named `name` at pointer `where`.

    partial_ok: imported results may lack percentiles their source tool did not report, and a
    zero time in one is flagged (epbench.generator.checks.plausible.imported), not dropped: the
    point stays."""
    n = dist["n"]
    values = [dist.get(k) for k in _KEYS]
    if not partial_ok and _clean(dist, name, n, values):
        return []
    out: list[Finding] = []
    if n > 0 and not partial_ok and any(v is None for v in values):
        missing = ", ".join(k for k, v in zip(_KEYS, values, strict=True) if v is None)
        out.append(PRESENCE.at(file, where, f"{name} has n = {n} but no {missing}"))
    if n == 0 and any(v is not None for v in values):
        out.append(PRESENCE.at(file, where, f"{name} has n = 0 but percentile values"))
    present = [(k, v) for k, v in zip(_KEYS, values, strict=True) if v is not None]
    for (k1, v1), (k2, v2) in pairwise(present):
        if v1 > v2:
            out.append(ORDER.at(
                file, f"{where}/{k2}", f"{name}.{k2} ({fmt(v2)}) is below {name}.{k1} ({fmt(v1)})"
            ))
    if name in POSITIVE_TIMES and n > 0 and not partial_ok:
        zero = [k for k, v in present if v <= 0]
        negative = [k for k, v in present if v < 0]
        if name in BURST_TIMES and zero and not negative:
            lost = " (so tps_per_user cannot be computed)" if "p90" in zero else ""
            out.append(BURST.at(file, f"{where}/{zero[-1]}",
                                f"{name} is 0 up to {zero[-1]}: the stream arrived in one "
                                f"burst{lost}"))
        elif zero:
            out.append(POSITIVE.at(file, f"{where}/{zero[0]}", f"{name}.{zero[0]} is 0"))
    if "insufficient" in dist:
        stated = set(dist["insufficient"])
        expected = expected_insufficient(n)
        if stated != expected:
            out.append(SUFFICIENCY.at(
                file, f"{where}/insufficient",
                f"{name} has n = {n}, so `insufficient` should be {sorted(expected)}, "
                f"not {sorted(stated)}",
            ))
    elif n > 0 and expected_insufficient(n):
        out.append(UNSTATED.at(
            file, where,
            f"{name} has n = {n} but does not list {sorted(expected_insufficient(n))} as "
            "insufficient",
        ))
    return out


POINT_DISTS = ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms", "schedule_delay_ms",
               "ttft_from_scheduled_ms", "e2e_from_scheduled_ms")
AGENTIC_DISTS = ("decision_ms", "first_tool_delta_ms", "tool_ms", "overhead_ms", "task_wall_ms")


@on_point(20)
def _on_point(s: Subject, where: str, point: dict[str, Any]) -> list[Finding]:
    out: list[Finding] = []
    for name in POINT_DISTS:
        if name in point:
            out += check_dist(point[name], name, f"{where}/{name}", s.file, partial_ok=s.imported)
    return out


@on_result(20)
def _on_agentic(s: Subject) -> list[Finding]:
    out: list[Finding] = []
    if "agentic" in s.doc:
        for name in AGENTIC_DISTS:
            out += check_dist(s.doc["agentic"][name], name, f"/agentic/{name}", s.file)
    return out
