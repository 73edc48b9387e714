"""The Pareto frontier over (tps_per_user, system_tps), a step function.

    q dominates p   when q.tps_per_user >= p.tps_per_user and q.system_tps >= p.system_tps,
                    at least one of them strictly greater
    frontier        = the points no other point dominates, by ascending tps_per_user
                      (system_tps then strictly falls)
    exact ties      : of points at the same (tps_per_user, system_tps), only the first in
                      order is on the frontier
    left out        : points without a tps_per_user (no request had 2 or more tokens)

Between two frontier points, the best system_tps reachable at a given tps_per_user is the
next point to its right, so the frontier is drawn as steps, not as lines between points. This
is the one rule: the runner writes it into results, the validator checks a result's list
against it, the site marks it (over the points the validator kept) on the run page and in the
tables, and site/assets/epbench/lib/reducers.js (walkFrontier) applies it in the browser.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def frontier(points: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """`pareto` rows ({point, tps_per_user, system_tps}) from result points."""
    candidates = [
        (float(p["tps_per_user"]), float(p["system_tps"]), str(p["id"]))
        for p in points
        if p.get("tps_per_user") is not None
    ]
    # Highest tps_per_user first; within equal tps_per_user, highest system_tps first.
    candidates.sort(key=lambda c: (-c[0], -c[1]))
    kept: list[tuple[float, float, str]] = []
    best_tps = float("-inf")
    for user, system, pid in candidates:
        if system > best_tps:
            kept.append((user, system, pid))
            best_tps = system
    kept.reverse()
    return [
        {"point": pid, "tps_per_user": user, "system_tps": system} for user, system, pid in kept
    ]
