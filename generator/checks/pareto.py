"""The Pareto frontier a result states agrees with its points.

The frontier over (tps_per_user, system_tps) is the set of points no other point beats on
both axes (higher or equal on both, higher on one), sorted by ascending tps_per_user.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from epcore.findings import Finding
from generator.checks.base import check, close, fmt

PARETO = check(
    "pareto.consistent", "reject",
    "the stated Pareto frontier is exactly the non-dominated points, with their values",
    "recompute the frontier from the points (the non-dominated ones over tps_per_user and "
    "system_tps), ascending tps_per_user",
)


def frontier(points: list[tuple[str, float, float]]) -> list[str]:
    """Ids of the non-dominated (id, tps_per_user, system_tps) points, ascending tps_per_user.

    Exact ties keep the first point in order (one point per distinct position)."""
    order = sorted(enumerate(points), key=lambda c: (-c[1][1], -c[1][2], c[0]))
    kept: list[str] = []
    best = float("-inf")
    for _, (pid, _x, y) in order:
        if y > best:
            kept.append(pid)
            best = y
    kept.reverse()
    return kept


def check_pareto(result: dict[str, Any], file: str, skip: set[int] | None = None) -> list[Finding]:
    """Compare /pareto with the frontier of the points (points in `skip` are ignored)."""
    out: list[Finding] = []
    by_id = {}
    measured = []
    for i, point in enumerate(result["points"]):
        if skip and i in skip:
            continue
        by_id[point["id"]] = point
        if point.get("tps_per_user") is not None:
            measured.append((point["id"], point["tps_per_user"], point["system_tps"]))
    stated = result["pareto"]
    for i, entry in enumerate(stated):
        point = by_id.get(entry["point"])
        if point is None:
            out.append(PARETO.at(
                file, f"/pareto/{i}/point", f"the frontier names point {entry['point']!r}, "
                "which is not among the points",
            ))
            continue
        for key in ("tps_per_user", "system_tps"):
            value = point.get(key)
            if value is None or not close(entry[key], value):
                out.append(PARETO.at(
                    file, f"/pareto/{i}/{key}",
                    f"the frontier says {key} {fmt(entry[key])} for point {entry['point']!r}, "
                    f"the point says {fmt(value)}",
                ))
    if out:
        return out
    expected = frontier(measured)
    names = [entry["point"] for entry in stated]
    position = {pid: (x, y) for pid, x, y in measured}
    if {position[n] for n in names if n in position} != {position[n] for n in expected} \
            or len(names) != len(expected):
        out.append(PARETO.at(
            file, "/pareto",
            f"the frontier lists {names} but the non-dominated points are {expected}",
        ))
    elif any(a["tps_per_user"] > b["tps_per_user"] for a, b in pairwise(stated)):
        out.append(PARETO.at(
            file, "/pareto", "the frontier is not sorted by ascending tps_per_user",
        ))
    return out
