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

The pages' suite tables follow the reader's include controls, so they are pooled four ways
(`POOLS`): ranked results only (the default, and the figures on the rows); with the
self-reported results that rank once the reader includes them; every result but those
self-reported ones; every result. A pool is pooled by the same formulas from the newest result
per endpoint and workload among the results it admits.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

import pandas as pd

from epbench.core.metrics.wilson import wilson
from epbench.generator import columns

# The columns the suite fills (declared in epbench.generator.columns).
SUITE_COLUMNS = columns.filled_by("agentic", __name__)


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


POOLS = ("ranked", "self", "unranked", "all")


def _reasons(row: Any) -> list[str]:
    value = row.get("unranked_reasons")
    if isinstance(value, str):
        return [r for r in value.split("; ") if r]
    return [str(r) for r in value] if isinstance(value, (list, tuple)) else []


ADMIT_COLUMNS = ("rankable", "tier", "division", "unranked_reasons")


def admits(pool: str, row: Any) -> bool:
    """Whether `pool` pools this agentic row: "ranked" the rankable ones; "self" those too and
    the self-reported ones whose only reason is their tier (epcore.rankable puts it first, and
    lib/provenance.js viewReasons sets it aside the same way); "unranked" every row but a
    self-reported one that is not emulated (the boards hide those until the reader includes
    them); "all" every row."""
    value = row.get("rankable")
    ranked = _plain(value) is not None and value is not pd.NA and bool(value)
    if pool == "ranked":
        return ranked
    self_reported = row.get("tier") == "self-reported"
    if pool == "self":
        return ranked or (self_reported and not _reasons(row)[1:])
    if pool == "unranked":
        return not (self_reported and row.get("division") != "emulated")
    return True


def _newest(admitted: pd.DataFrame) -> pd.DataFrame:
    ordered = admitted.sort_values(["endpoint_id", "workload_id", "date", "run_id"],
                                 ascending=[True, True, False, True], na_position="last")
    return ordered.drop_duplicates(["endpoint_id", "workload_id"], keep="first")


def newest_ranked(agentic: pd.DataFrame) -> pd.DataFrame:
    """The newest ranked result per endpoint and workload (ties: the smaller run id)."""
    if agentic.empty:
        return agentic
    return _newest(agentic[agentic["rankable"].fillna(False).astype(bool)])


def newest_in(agentic: pd.DataFrame, pool: str) -> pd.DataFrame:
    """The newest result per endpoint and workload among those `pool` admits."""
    if agentic.empty:
        return agentic
    # only the columns `admits` reads: every column of every row as a dict took seconds a
    # build at 100,000 results
    columns = [c for c in ADMIT_COLUMNS if c in agentic.columns]
    keep = [admits(pool, row) for row in agentic[columns].to_dict("records")]
    return _newest(agentic[keep])


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
    return _ordered(out)


def _ordered(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows.sort(key=lambda r: (-(r["suite_success_ci_low"] or 0.0),
                             -(r["suite_success_rate"] or 0.0), r["endpoint_id"]))
    return rows


def pool_rows(agentic: pd.DataFrame, pool: str) -> list[dict[str, Any]]:
    """`suite_rows` for one of `POOLS`: "ranked" is suite_rows itself; the others pool their
    own newest results, and each row counts the unranked results it pooled (`unranked`)."""
    if pool == "ranked":
        return [{**row, "unranked": 0} for row in suite_rows(agentic)]
    if agentic.empty:
        return []
    out = []
    for endpoint, group in newest_in(agentic, pool).groupby("endpoint_id", sort=True):
        records = group.to_dict("records")
        first = records[0]
        out.append({"endpoint_id": str(endpoint), "provider": first.get("provider"),
                    "model": first.get("model"),
                    "workloads": sorted(str(r["workload_id"]) for r in records),
                    "unranked": sum(not admits("ranked", r) for r in records),
                    **pooled(records)})
    return _ordered(out)


def pools(agentic: pd.DataFrame) -> list[dict[str, Any]]:
    """The suite tables a page carries: one per distinct pool, each naming every pool it
    serves (`pools`), so a reader's controls pick one and equal pools are written once."""
    out: list[dict[str, Any]] = []
    for pool in POOLS:
        rows = pool_rows(agentic, pool)
        same = next((p for p in out if p["rows"] == rows), None)
        if same is None:
            out.append({"pools": [pool], "rows": rows})
        else:
            same["pools"].append(pool)
    return out
