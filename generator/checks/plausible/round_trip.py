"""Physical bounds from the run itself: figures no real run can produce.

- no TTFT or end-to-end latency (p50, from the send or the schedule) below the fastest round
  trip to the endpoint that the runner measured and journaled (`round_trips.min_ms`,
  recomputed from the journal's session lines: epbench.core.round_trips): an answer needs at least
  one round trip; TTFT written in seconds into a millisecond field lands here. The submitter's
  own `client.rtt_ms` bounds nothing, and a result without journaled round trips is not ranked
  (epbench.core.rankable `no-rtt`)
- no point whose window is shorter than its own median end-to-end latency (a request lies
  inside the window it is counted in): a window of 5e-324 s lands here
- imported results carry what their tool reported, and no journaled round trip (so no round-trip
  bound): as their window spans the whole run, the window is held against the largest TTFT or
  end-to-end percentile they carry
- with the journal: `tps_per_user` no higher than the fastest measured inter-token gap allows
  (epbench.generator.checks.plausible.fastest_gap, run by the evidence check)

An epbench result outside a bound is rejected; an imported one is flagged (its numbers come
from another tool, which cannot be re-run here); epbench.generator.checks.plausible.imported
holds the other bounds on imported results.
"""

from __future__ import annotations

from typing import Any

from epbench.core.findings import Finding
from epbench.generator.checks.base import Subject, check, fmt, on_result

BELOW_RTT = check(
    "plausible.below-rtt", "reject",
    "latencies are not below the fastest round trip to the endpoint the runner journaled",
    "latency fields are in milliseconds: re-run, or fix the importer's units",
)
WINDOW = check(
    "plausible.window", "reject",
    "a point's window is not shorter than its median end-to-end latency",
    "window_s is in seconds and spans the point's requests: re-run the point",
)
IMPORTED = check(
    "plausible.imported", "flag",
    "an imported result's figures are within the physical bounds of its run",
    "check the source tool's units; the figure is shown but cannot be trusted",
)
_LATENCIES = ("ttft_ms", "e2e_ms", "ttft_from_scheduled_ms", "e2e_from_scheduled_ms")
_PERCENTILES = ("p50", "p90", "p95", "p99")


def _carried(dist: Any) -> list[tuple[str, float]]:
    """(key, value) of the percentiles a distribution carries, lowest first."""
    if not isinstance(dist, dict):
        return []
    return [(k, dist[k]) for k in _PERCENTILES
            if isinstance(dist.get(k), int | float) and not isinstance(dist.get(k), bool)]


def _lowest(dist: Any) -> tuple[str, float | None]:
    """The first of _carried(dist), or ("p50", None) when it carries none."""
    if isinstance(dist, dict):
        for k in _PERCENTILES:
            value = dist.get(k)
            if isinstance(value, int | float) and not isinstance(value, bool):
                return k, value
    return "p50", None


def check_plausible(result: dict[str, Any], file: str) -> list[Finding]:
    imported = (result.get("source") or {}).get("format", "epbench") != "epbench"
    # only a recomputed figure bounds: round_trips of a result whose journal validation read
    measured = result.get("round_trips") if result.get("evidence") and not imported else None
    rtt = measured.get("min_ms") if isinstance(measured, dict) else None
    out: list[Finding] = []
    for i, point in enumerate(result["points"]):
        where = f"/points/{i}"
        if isinstance(rtt, int | float) and rtt > 0:
            for name in _LATENCIES:
                key, low = _lowest(point.get(name))
                if low is not None and low < rtt:
                    message = (f"{name}.{key} is {fmt(low)} ms, below the {fmt(rtt)} ms round "
                               "trip to the endpoint that the run journaled")
                    out.append((IMPORTED if imported else BELOW_RTT).at(
                        file, f"{where}/{name}/{key}", message))
                    break
        window = point.get("window_s")
        if imported:
            spans = [(f"{name}.{k}", v) for name in ("ttft_ms", "e2e_ms")
                     for k, v in _carried(point.get(name))]
            what, longest = max(spans, key=lambda s: s[1]) if spans else ("", None)
        else:
            what, longest = "e2e_ms.p50", (point.get("e2e_ms") or {}).get("p50")
        if isinstance(longest, int | float) and isinstance(window, int | float) \
                and window * 1000 < longest * (1 - 1e-9):
            message = (f"window_s is {fmt(window)} s, shorter than the point's {what} "
                       f"({fmt(longest)} ms), which lies inside it")
            out.append((IMPORTED if imported else WINDOW).at(file, f"{where}/window_s", message))
    return out


@on_result(50)
def _on_result(s: Subject) -> list[Finding]:
    return check_plausible(s.doc, s.file)
