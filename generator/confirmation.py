"""Confirmed by an independent run: a self-reported serving result held against the project's
own attested runs of the same endpoint and workload.

`confirmations(runs, points)` looks, for each self-reported serving row of `runs`, for
`attested` rows (the scheduled benchmark's tier) of the same endpoint and workload dated within
14 days of it. The newest such run that *agrees* confirms it; else the newest one that
disagrees is named. Two runs agree when, at every measurement point they have in common (same
point id), system throughput and TTFT p90 each agree: the attested figure lies within the
self-reported one's 95% interval, or the two differ by at most 10% of the attested figure.
Throughput carries no interval in the tables, so for it only the 10% holds; TTFT p90 uses the
self-reported point's bootstrap interval (`ttft_ms_p90_ci_low`/`_high` when the points carry
them). Runs with no point in common say nothing about each other.

The result is two columns of `runs`: `confirmation` ("confirmed", "disagrees" or null) and
`confirmed_by` (the attested run's id). The run page and the board row show them.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pandas as pd

from epbench.core.provenance import ATTESTED, SELF_REPORTED

WINDOW_DAYS = 14
RELATIVE = 0.10
FIGURES = ("system_tps", "ttft_ms_p90")


def agrees(mine: float | None, theirs: float | None,
           interval: tuple[float | None, float | None] = (None, None)) -> bool | None:
    """Whether one figure agrees (None: one of them is missing, so it says nothing)."""
    if mine is None or theirs is None or pd.isna(mine) or pd.isna(theirs):
        return None
    low, high = interval
    if low is not None and high is not None and not (pd.isna(low) or pd.isna(high)) \
            and low <= theirs <= high:
        return True
    return abs(mine - theirs) <= RELATIVE * abs(theirs)


def runs_agree(mine: dict[str, dict[str, Any]], theirs: dict[str, dict[str, Any]]) -> bool | None:
    """Points by id of two runs: True when every common point agrees on every figure, False
    when one disagrees, None when they have no point (or no figure) in common."""
    verdicts = []
    for point in sorted(set(mine) & set(theirs)):
        a, b = mine[point], theirs[point]
        for figure in FIGURES:
            interval = (a.get(f"{figure}_ci_low"), a.get(f"{figure}_ci_high"))
            verdict = agrees(a.get(figure), b.get(figure), interval)
            if verdict is not None:
                verdicts.append(verdict)
    return all(verdicts) if verdicts else None


def _day(value: Any) -> date | None:
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        return None


def _points_by_run(runs: pd.DataFrame, points: pd.DataFrame,
                   groups: set[tuple[Any, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """Point id -> the figures compared, for each run of an endpoint and workload that has an
    attested run: only those runs and only those columns (at 100,000 results every point row as
    a dict took 8 s of each build)."""
    keys = pd.MultiIndex.from_frame(runs[["endpoint_id", "workload_id"]])
    wanted = set(runs["run_id"][keys.isin(list(groups))].astype(str))
    mine = points[points["run_id"].astype(str).isin(wanted)]
    columns = ["run_id", "point", *(c for figure in FIGURES
                                     for c in (figure, f"{figure}_ci_low", f"{figure}_ci_high")
                                     if c in points.columns)]
    by_run: dict[str, dict[str, dict[str, Any]]] = {}
    for row in mine[columns].to_dict("records"):
        by_run.setdefault(str(row["run_id"]), {})[str(row["point"])] = row
    return by_run


def confirmations(runs: pd.DataFrame, points: pd.DataFrame) -> pd.DataFrame:
    """`runs` with `confirmation` and `confirmed_by` filled for self-reported serving rows."""
    runs = runs.copy()
    runs["confirmation"] = None
    runs["confirmed_by"] = None
    if runs.empty or "tier" not in runs.columns or points.empty:
        return runs
    attested = runs[runs["tier"] == ATTESTED]
    if attested.empty:
        return runs
    groups = {key: frame for key, frame in attested.groupby(["endpoint_id", "workload_id"])}
    by_run = _points_by_run(runs, points, set(groups))
    for index, row in runs[runs["tier"] == SELF_REPORTED].iterrows():
        candidates = groups.get((row["endpoint_id"], row["workload_id"]))
        day = _day(row["date"])
        if candidates is None or day is None or str(row["run_id"]) not in by_run:
            continue
        found: tuple[str, str] | None = None
        for _, other in candidates.sort_values(["date", "run_id"], ascending=False).iterrows():
            other_day = _day(other["date"])
            if other_day is None or abs((other_day - day).days) > WINDOW_DAYS:
                continue
            verdict = runs_agree(by_run[str(row["run_id"])], by_run.get(str(other["run_id"]), {}))
            if verdict is True:
                found = ("confirmed", str(other["run_id"]))
                break
            if verdict is False and found is None:
                found = ("disagrees", str(other["run_id"]))
        if found is not None:
            runs.at[index, "confirmation"], runs.at[index, "confirmed_by"] = found
    return runs
