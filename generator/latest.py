"""The newest result per endpoint × workload × client region: the data of the home page's
ranked table and of the compare page (`data/view/latest.json`, `latest_agentic.json`).

A continuous benchmark adds thousands of results a day; a buyer asks about the endpoints as
they are now. So these views carry one run per endpoint, workload and client region: the
newest rankable one, or the newest one when none is rankable (shown only when a reader asks
for unranked results). Older runs stay in the history views and the downloads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from epbench.generator.history_views import daily_history

if TYPE_CHECKING:
    from epbench.generator.tables import Tables

KEY = ["endpoint_id", "workload_id", "client_region"]
# What the runs table adds to a point or agentic row: provenance for the badges.
RUN_EXTRA = ["submitter_relationship", "source_format", "quick", "flags", "harness_version",
             "confirmation", "confirmed_by"]
LATEST_POINT_COLUMNS = [
    "run_id", "endpoint_id", "provider", "model", "division", "hardware", "region",
    "client_region", "workload_id", "date", "submitter", "rankable", "unranked_reasons", "tier",
    "tier_reason", *RUN_EXTRA, "point", "concurrency", "rate", "tps_per_user", "system_tps",
    "ttft_ms_p50",
    "ttft_ms_p90", "ttft_ms_p99", "tpot_ms_p90", "e2e_ms_p90", "error_rate", "completed",
    "usd_per_mtok_output", "on_pareto",
]
LATEST_AGENTIC_COLUMNS = [
    "run_id", "endpoint_id", "provider", "model", "division", "client_region", "workload_id",
    "date", "submitter", "rankable", "unranked_reasons", "tier", "tier_reason", *RUN_EXTRA,
    "trials", "tasks",
    "success_rate", "success_ci_low", "success_ci_high", "pass_hat_1", "decision_ms_p90",
    "correct_call_rate", "usd_per_task", "usd_per_successful_task", "retry_spend_share",
    "quality", "quality_below",
    "agents_at_slo", "agents_per_usd_hour", "agents_slo_decision_p90_ms", "load_levels",
]


def latest_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """One run per endpoint × workload × client region: rankable first, then one that only
    its tier keeps from ranking (self-reported, ranked when the reader includes those), then
    newest."""
    if runs.empty:
        return runs
    rankable = runs["rankable"].fillna(False).astype(bool)
    if "tier" in runs.columns:
        only_tier = (runs["tier"] == "self-reported") & runs["unranked_reasons"].map(
            lambda reasons: not isinstance(reasons, str) and hasattr(reasons, '__len__')
            and len(reasons) == 1)
    else:
        only_tier = pd.Series(False, index=runs.index)
    ranked = runs.assign(_rank=rankable, _included=rankable | only_tier,
                         _region=runs["client_region"].fillna(""))
    ranked = ranked.sort_values(["_rank", "_included", "date", "run_id"],
                                ascending=[False, False, False, True],
                                na_position="last", kind="stable")
    keep = ranked.drop_duplicates(["endpoint_id", "workload_id", "_region"], keep="first")
    return keep.drop(columns=["_rank", "_included", "_region"])


def _joined(rows: pd.DataFrame, latest: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    extra = [c for c in RUN_EXTRA if c in latest.columns]
    picked = rows[rows["run_id"].isin(set(latest["run_id"]))]
    if extra:
        picked = picked.merge(latest[["run_id", *extra]], on="run_id", how="left")
    return picked[[c for c in columns if c in picked.columns]]


def board_views(tables: Tables) -> dict[str, pd.DataFrame]:
    """What each board reads, by view name: the newest result per endpoint x workload x client
    region for the serving, agentic and cost boards (and their charts), every result for the
    History board, and the two latest views of the home and compare pages."""
    latest = latest_runs(tables.runs)
    ids = set(latest["run_id"]) if not latest.empty else set()
    views = {
        "runs": latest,
        "points": tables.points[tables.points["run_id"].isin(ids)],
        "agentic": tables.agentic[tables.agentic["run_id"].isin(ids)],
        "history": daily_history(tables.runs),
    }
    views.update(latest_views(tables, latest))
    return views


def latest_views(tables: Tables, latest: pd.DataFrame | None = None) -> dict[str, pd.DataFrame]:
    """The two latest-result views, by file name."""
    latest = latest_runs(tables.runs) if latest is None else latest
    if latest.empty:
        return {"latest": tables.points.iloc[0:0], "latest_agentic": tables.agentic.iloc[0:0]}
    return {
        "latest": _joined(tables.points, latest, LATEST_POINT_COLUMNS),
        "latest_agentic": _joined(tables.agentic, latest, LATEST_AGENTIC_COLUMNS),
    }
