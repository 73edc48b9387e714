"""Each endpoint over the agentic suite: one answer to "which endpoint is most reliable at tool
calling", pooled over the workloads it ran rather than one row per workload.

For every endpoint, its newest ranked result per agentic workload (ties by run id) is pooled:

    suite_success_n     = sum of the results' trials (success_n: tasks x trials)
    successes           = sum of round(success_rate x success_n)
    suite_success_rate  = successes / suite_success_n
    suite_success_ci_*  = Wilson 95% interval of successes / suite_success_n
                          (epbench.core.metrics.wilson)
    suite_decision_ms_p50 = median of the results' decision-time medians
    suite_usd_per_successful_task = sum of usd_per_task x success_n / successes
                          (null when any pooled result has no price, or no trial succeeded)
    suite_workloads     = how many workloads were pooled

The figures go on each of the endpoint's agentic rows (the same on every one: the tables stay
one row per result); unranked results are neither pooled nor given them.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

import pandas as pd

from epbench.core.metrics.wilson import wilson

SUITE_COLUMNS = ["suite_workloads", "suite_success_n", "suite_success_rate",
                 "suite_success_ci_low", "suite_success_ci_high", "suite_decision_ms_p50",
                 "suite_usd_per_successful_task"]


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(out) else out


def _plain(value: Any) -> Any:
    """A table cell as pooled() gave it: a missing figure (NaN once in a float column) is None."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def newest_ranked(agentic: pd.DataFrame) -> pd.DataFrame:
    """The newest ranked result per endpoint and workload (ties: the smaller run id)."""
    if agentic.empty:
        return agentic
    ranked = agentic[agentic["rankable"].fillna(False).astype(bool)]
    ordered = ranked.sort_values(["endpoint_id", "workload_id", "date", "run_id"],
                                 ascending=[True, True, False, True], na_position="last")
    return ordered.drop_duplicates(["endpoint_id", "workload_id"], keep="first")


def pooled(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The suite figures of one endpoint's pooled results (see the module's formulas)."""
    n = 0
    successes = 0
    spend: float | None = 0.0
    medians = []
    for row in rows:
        trials = int(_number(row.get("success_n")) or 0)
        rate = _number(row.get("success_rate")) or 0.0
        n += trials
        successes += round(rate * trials)
        per_task = _number(row.get("usd_per_task"))
        spend = None if spend is None or per_task is None else spend + per_task * trials
        median = _number(row.get("decision_ms_p50"))
        if median is not None:
            medians.append(median)
    low, high = wilson(successes, n)
    return {
        "suite_workloads": len({row.get("workload_id") for row in rows}),
        "suite_success_n": n,
        "suite_success_rate": successes / n if n else None,
        "suite_success_ci_low": low if n else None,
        "suite_success_ci_high": high if n else None,
        "suite_decision_ms_p50": statistics.median(medians) if medians else None,
        "suite_usd_per_successful_task": spend / successes if spend is not None and successes
        else None,
    }


def add_suite(agentic: pd.DataFrame) -> None:
    """Fill the suite columns of `agentic` in place: each ranked row gets its endpoint's
    figures; unranked rows get none."""
    for column in SUITE_COLUMNS:
        agentic[column] = None
    if agentic.empty:
        return
    newest = newest_ranked(agentic)
    figures = {endpoint: pooled(group.to_dict("records"))
               for endpoint, group in newest.groupby("endpoint_id", sort=True)}
    ranked = agentic["rankable"].fillna(False).astype(bool)
    for column in SUITE_COLUMNS:
        agentic[column] = [figures[e][column] if keep and e in figures else None
                           for e, keep in zip(agentic["endpoint_id"], ranked, strict=True)]


def suite_rows(agentic: pd.DataFrame) -> list[dict[str, Any]]:
    """One row per endpoint with a ranked agentic result, the most reliable first: by the
    lower end of the success interval, then the success rate, then the endpoint id. The
    figures are the ones `add_suite` pooled onto the rows (each endpoint is pooled once)."""
    if agentic.empty or "suite_success_n" not in agentic.columns:
        return []
    newest = newest_ranked(agentic)
    out = []
    for endpoint, group in newest.groupby("endpoint_id", sort=True):
        first = group.iloc[0]
        out.append({"endpoint_id": str(endpoint), "provider": first.get("provider"),
                    "model": first.get("model"),
                    "workloads": sorted(str(w) for w in group["workload_id"]),
                    **{column: _plain(first[column]) for column in SUITE_COLUMNS}})
    out.sort(key=lambda r: (-(r["suite_success_ci_low"] or 0.0),
                            -(r["suite_success_rate"] or 0.0), r["endpoint_id"]))
    return out
