"""Agents at SLO on the endpoint and compare pages: each newest agentic result with load
levels, its levels as a table, and one chart of success and step decision p90 against
concurrent agents (epbench.generator.charts.capacity_chart).

Read from the `latest_agentic` view (`load_levels`, `agents_at_slo`, ...: declared in
epbench.generator.columns), so the figures are the result's own, recomputed from its journal
when it was validated. The chart's data is inlined in the page (`datasets.rows`); site.js embeds
it, and on the compare page keeps the rows of the endpoints the reader picked.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from epbench.generator import charts
from epbench.generator.plain_json import records


def capacity_context(agentic: pd.DataFrame) -> dict[str, Any] | None:
    """The context of `capacity.html.j2` for these agentic rows (None when none has levels)."""
    if agentic.empty or "load_levels" not in agentic.columns:
        return None
    rows = [r for r in records(agentic.sort_values(["endpoint_id", "workload_id", "run_id"]))
            if isinstance(r.get("load_levels"), list) and r["load_levels"]]
    if not rows:
        return None
    points: list[dict[str, Any]] = []
    for row in rows:
        series = f"{row['endpoint_id']} · {row['workload_id']}"
        row["series"] = series
        for level in row["load_levels"]:
            points.append({
                "series": series, "endpoint_id": row["endpoint_id"], "run_id": row["run_id"],
                "agents": level["agents"], "success_rate": level["success_rate"],
                "success_ci_low": level["success_ci_low"],
                "success_ci_high": level["success_ci_high"],
                "decision_ms_p90": level["decision_ms_p90"],
                "slo_ms": row["agents_slo_decision_p90_ms"], "at_slo": bool(level["at_slo"]),
            })
    spec = charts.capacity_chart()
    spec["datasets"] = {charts.DATASET: points}
    return {"results": rows, "chart": spec}
