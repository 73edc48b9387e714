"""Imported results: the physical bounds on the figures they carry, as flags.

An imported result (MLPerf Endpoints, `vllm bench serve`, ...) has no journal to recompute
from, so its figures can only be held against each other. Each bound below is one no real run
can break; a result outside one is flagged (published with the flag, shown on its run page and
in the `flags` column, never ranked), not rejected: the numbers come from another tool.

- speed: `tps_per_user` no higher than 1000 / the smallest inter-token figure the point carries
  (any percentile or mean of `itl_ms` or `tpot_ms`). ITL alone is not a bound: one streamed
  chunk can carry several tokens, so a gap between chunks can be longer than a token's time.
- e2e below TTFT: each request's end-to-end latency includes its TTFT, so no percentile (or
  mean) of `e2e_ms` is below the same one of `ttft_ms` (and likewise from the schedule).
- throughput: `system_tps` no higher than the output tokens over the window; and at a
  concurrency point no more requests completed than the concurrency allows (Little's law:
  completed x mean latency <= concurrency x window, with the mean TTFT, or E2E, as latency).
- timing: every carried time (percentiles and means of the latency distributions) is > 0.
  Non-finite values never reach a result: the safe loader (epbench.core.documents) refuses a file
  carrying one, an importer's input as much as a result.

The window against the latencies is in epbench.generator.checks.plausible.round_trip, which
flags imported results the same way. No round-trip bound applies to them: the only round trips
that bound a latency are the ones epbench's runner measured and journaled
(epbench.core.round_trips), and an imported result has no journal (a `client.rtt_ms` it carries
is the submitter's word).
"""

from __future__ import annotations

from typing import Any

from epbench.core.findings import Finding
from epbench.generator.checks.base import Subject, check, fmt, on_result

SLACK = 1e-9
"""Relative: a bound is broken only beyond rounding in the last digits."""
KEYS = ("p50", "p90", "p95", "p99", "mean")
TIMES = ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms", "ttft_from_scheduled_ms",
         "e2e_from_scheduled_ms")

SPEED = check(
    "plausible.imported-speed", "flag",
    "an imported point's tps_per_user is no higher than 1000 / its smallest ITL or TPOT figure",
    "check the source tool's TPOT units; the figure is shown but cannot be trusted",
)
E2E_BELOW_TTFT = check(
    "plausible.imported-e2e-below-ttft", "flag",
    "an imported point's end-to-end latencies are not below its TTFTs",
    "check the source tool's latency fields and units; the figures cannot be trusted",
)
THROUGHPUT = check(
    "plausible.imported-throughput", "flag",
    "an imported point's throughput is no higher than its tokens, window and concurrency allow",
    "check the source tool's duration and token counts; the figure cannot be trusted",
)
TIMING = check(
    "plausible.imported-timing", "flag",
    "every time an imported result carries is greater than zero",
    "a zero time means the source tool did not measure it: fix the source or leave it out",
)


def figures(dist: Any) -> dict[str, float]:
    """The numbers a distribution carries, by key (null or absent ones left out)."""
    if not isinstance(dist, dict):
        return {}
    return {k: float(dist[k]) for k in KEYS
            if isinstance(dist.get(k), int | float) and not isinstance(dist.get(k), bool)}


def check_imported(result: dict[str, Any], file: str) -> list[Finding]:
    """Flags for the points of an imported result (nothing for an epbench result)."""
    if (result.get("source") or {}).get("format", "epbench") == "epbench":
        return []
    out: list[Finding] = []
    for i, point in enumerate(result.get("points") or []):
        where = f"/points/{i}"
        out += _timing(point, where, file)
        out += _speed(point, where, file)
        out += _e2e_below_ttft(point, where, file)
        out += _throughput(point, where, file)
    return out


def _timing(point: dict[str, Any], where: str, file: str) -> list[Finding]:
    for name in TIMES:
        for key, value in figures(point.get(name)).items():
            if value <= 0:
                return [TIMING.at(file, f"{where}/{name}/{key}",
                                  f"{name}.{key} is {fmt(value)} ms: a measured time is > 0")]
    return []


def _speed(point: dict[str, Any], where: str, file: str) -> list[Finding]:
    speed = point.get("tps_per_user")
    gaps = [(f"{name}.{key}", value) for name in ("itl_ms", "tpot_ms")
            for key, value in figures(point.get(name)).items() if value > 0]
    if not isinstance(speed, int | float) or not gaps:
        return []
    label, fastest = min(gaps, key=lambda item: item[1])
    if speed > 1000 / fastest * (1 + SLACK):
        return [SPEED.at(file, f"{where}/tps_per_user",
                         f"tps_per_user is {fmt(speed)} but the point's fastest inter-token "
                         f"figure ({label} = {fmt(fastest)} ms) allows at most "
                         f"{fmt(1000 / fastest)}")]
    return []


def _e2e_below_ttft(point: dict[str, Any], where: str, file: str) -> list[Finding]:
    for e2e_name, ttft_name in (("e2e_ms", "ttft_ms"),
                                ("e2e_from_scheduled_ms", "ttft_from_scheduled_ms")):
        e2e, ttft = figures(point.get(e2e_name)), figures(point.get(ttft_name))
        for key in KEYS:
            if key in e2e and key in ttft and e2e[key] * (1 + SLACK) < ttft[key]:
                return [E2E_BELOW_TTFT.at(
                    file, f"{where}/{e2e_name}/{key}",
                    f"{e2e_name}.{key} is {fmt(e2e[key])} ms, below {ttft_name}.{key} "
                    f"({fmt(ttft[key])} ms): a request ends after its first token")]
    return []


def _throughput(point: dict[str, Any], where: str, file: str) -> list[Finding]:
    window = point.get("window_s")
    if not isinstance(window, int | float) or window <= 0:
        return []
    tokens = point.get("tokens") or {}
    output = max((v for v in (tokens.get("output"), tokens.get("output_in_window"))
                  if isinstance(v, int)), default=None)
    tps = point.get("system_tps")
    if isinstance(tps, int | float) and output is not None and tps > output / window * (1 + SLACK):
        return [THROUGHPUT.at(file, f"{where}/system_tps",
                              f"system_tps is {fmt(tps)} but {output} output tokens over "
                              f"{fmt(window)} s is {fmt(output / window)}")]
    concurrency = point.get("concurrency")
    completed = (point.get("requests") or {}).get("completed")
    for name in ("e2e_ms", "ttft_ms"):
        mean = figures(point.get(name)).get("mean")
        if isinstance(concurrency, int) and isinstance(completed, int) and mean is not None \
                and completed * mean / 1000 > concurrency * window * (1 + SLACK):
            return [THROUGHPUT.at(
                file, f"{where}/window_s",
                f"{completed} requests with a mean {name} of {fmt(mean)} ms need at least "
                f"{fmt(completed * mean / 1000 / concurrency)} s at concurrency {concurrency}, "
                f"but window_s is {fmt(window)} s")]
    return []


@on_result(60)
def _on_result(s: Subject) -> list[Finding]:
    return check_imported(s.doc, s.file)
