"""The History data, in two parts so that no page fetches every result.

- `data/view/history.json`: one row per endpoint x workload x client region x provenance tier x
  day (and the other filter columns that are constant within it), holding the median of each
  headline figure over that day's results and their count (`results`). A day with one result
  keeps its run id. Tiers are never pooled: a self-reported result's figures stay out of an
  attested median, so the board can leave self-reported rows out until the reader includes them
  (board.js), and each row says its tier and why (`tier_reason`).
  The History chart draws the median per series and day, so it is the same chart either way.
- `data/view/history/<file>.json`: every result of one endpoint x workload series, fetched by
  board.js only when a filter (or an endpoint's page) narrows to that endpoint; its rows then
  replace that series' daily rows.

File names are a digest of the series, never the (untrusted) ids themselves.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pandas as pd

METRICS = ["max_system_tps", "ttft_p90_ms_best", "usd_per_mtok_output", "success_rate",
           "tps_at_target", "best_tps_per_user", "decision_ms_p90"]
_GROUP = ["endpoint_id", "provider", "model", "division", "hardware", "region", "client_region",
          "workload_id", "workload_kind", "date", "rankable", "tier", "api"]


def series_file(endpoint_id: Any, workload_id: Any) -> str:
    """The file name (without folder) of one endpoint x workload series."""
    key = f"{endpoint_id}\0{workload_id}".encode()
    return hashlib.sha256(key).hexdigest()[:20] + ".json"


def series_files(runs: pd.DataFrame, root: str) -> dict[str, dict[str, str]]:
    """endpoint id -> workload id -> address of its series file (for the board config)."""
    out: dict[str, dict[str, str]] = {}
    if runs.empty:
        return out
    pairs = runs[["endpoint_id", "workload_id"]].dropna().drop_duplicates()
    for endpoint_id, workload_id in pairs.itertuples(index=False):
        out.setdefault(str(endpoint_id), {})[str(workload_id)] = (
            f"{root}data/view/history/{series_file(endpoint_id, workload_id)}")
    return out


def _reasons(reasons: pd.Series) -> str | None:
    """The tier reasons of one day's results: each distinct one once, in order, "; "-joined."""
    distinct = list(dict.fromkeys(str(r) for r in reasons if isinstance(r, str) and r))
    return "; ".join(distinct) or None


def daily_history(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per series, client region, tier and day: median figures, count, the lowest
    disclosure score (so `min_disclosure` keeps a day only when each of its results passes)
    and the tier's reasons."""
    keys = [c for c in _GROUP if c in runs.columns]
    metrics = [c for c in METRICS if c in runs.columns]
    reason = ["tier_reason"] if "tier_reason" in runs.columns else []
    if runs.empty:
        return runs.reindex(columns=[*keys, *reason, "run_id", "submitter", "disclosure_score",
                                     *metrics, "results"])
    grouped = runs.groupby(keys, dropna=False, sort=False)
    daily = grouped[metrics].median()
    if reason:
        daily["tier_reason"] = grouped["tier_reason"].agg(_reasons)
    daily["disclosure_score"] = grouped["disclosure_score"].min()
    daily["results"] = grouped["run_id"].count()
    daily["run_id"] = grouped["run_id"].first()
    daily["submitter"] = grouped["submitter"].first()
    daily = daily.reset_index()
    several = daily["results"] > 1
    daily["run_id"] = daily["run_id"].astype(object).where(~several, None)
    daily["submitter"] = daily["submitter"].astype(object).where(~several, None)
    return daily.sort_values(["date", "endpoint_id", "workload_id"], ascending=[False, True, True],
                             ignore_index=True)


def series_views(runs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """file name -> every result of that endpoint x workload series."""
    if runs.empty:
        return {}
    return {series_file(endpoint_id, workload_id): frame
            for (endpoint_id, workload_id), frame in
            runs.groupby(["endpoint_id", "workload_id"], sort=False)}
