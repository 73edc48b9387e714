"""With the journal: `tps_per_user` no higher than the fastest measured inter-token gap allows
(a gap carrying k tokens allows k tokens in it). epbench.generator.checks.evidence runs it over
the journal's request lines once they are read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from epbench.core.findings import Finding
from epbench.generator.checks.base import check, fmt

FASTEST_GAP = check(
    "plausible.tps-per-user", "reject",
    "tps_per_user is no higher than the fastest inter-token gap in the journal allows",
    "the journal's timestamps cannot give this speed: re-run and submit the run as written",
)


def check_fastest_gap(result: Mapping[str, Any], records: Sequence[Mapping[str, Any]],
                 file: str) -> list[Finding]:
    """tps_per_user of each point against 1000 / the fastest gap (ms) per token it carried.

    Events that arrived in one read have a gap of 0: their tokens came in the gap before
    them, so only the gaps between reads count, each carrying its share of the tokens. A
    request's TPOT (its first-to-last time over its tokens) is then never below its own
    bound, so no run as written can break it. (Skipping a request with a 0 gap, as this did,
    held the point to its slower requests only, and rejected real runs.)"""
    fastest: dict[str, float] = {}
    for r in records:
        gaps = [gap for gap in r.get("itl_us") or () if gap > 0]
        tokens = r.get("output_tokens") or 0
        if r.get("type", "request") != "request" or r.get("class") != "ok" or not gaps:
            continue
        per_gap = max(1.0, (tokens - 1) / len(gaps))
        smallest = min(gaps) / 1000 / per_gap
        if smallest > 0:
            point = str(r.get("point"))
            fastest[point] = min(fastest.get(point, smallest), smallest)
    for i, point in enumerate(result.get("points") or []):
        speed = point.get("tps_per_user")
        gap = fastest.get(str(point.get("id")))
        if isinstance(speed, int | float) and gap and speed > 1000 / gap * (1 + 1e-9):
            return [FASTEST_GAP.at(
                file, f"/points/{i}/tps_per_user",
                f"tps_per_user is {fmt(speed)} but the fastest inter-token gap in the journal "
                f"({fmt(gap)} ms a token) allows at most {fmt(1000 / gap)}",
            )]
    return []
