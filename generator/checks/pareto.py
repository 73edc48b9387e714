"""The Pareto frontier a result states agrees with its points.

The frontier is epbench.core.metrics.pareto.frontier (its docstring holds the one dominance rule);
the stated one may name any of several points that share an exact position.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from epbench.core.findings import Finding
from epbench.core.metrics.pareto import frontier
from epbench.generator.checks.base import Subject, check, close, fmt, on_result

PARETO = check(
    "pareto.consistent", "reject",
    "the stated Pareto frontier is exactly the non-dominated points, with their values",
    "recompute the frontier from the points (the non-dominated ones over tps_per_user and "
    "system_tps), ascending tps_per_user",
)


def check_pareto(result: dict[str, Any], file: str, skip: set[int] | None = None) -> list[Finding]:
    """Compare /pareto with the frontier of the points (points in `skip` are ignored)."""
    out: list[Finding] = []
    kept = [p for i, p in enumerate(result["points"]) if not (skip and i in skip)]
    by_id = {point["id"]: point for point in kept}
    measured = [(p["id"], p["tps_per_user"], p["system_tps"])
                for p in kept if p.get("tps_per_user") is not None]
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
    expected = [row["point"] for row in frontier(kept)]
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


@on_result(40)
def _on_result(s: Subject) -> list[Finding]:
    return check_pareto(s.doc, s.file)
