"""The leaderboard boards: which table each reads, its columns (with what each means), its
charts, and the compact per-view data the page fetches (`data/view/<name>.json`)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from epbench.generator import charts
from epbench.generator.columns import Column, axis_of
from epbench.generator.history_views import series_files

# Columns of the compact per-page view tables (data/view/<name>.json). Filters need the
# identity columns; the rest are what tables and charts show.
_FILTER_COLUMNS = ["run_id", "endpoint_id", "provider", "model", "api", "division", "hardware",
                   "region", "client_region", "workload_id", "date", "submitter",
                   "disclosure_score"]
VIEW_COLUMNS: dict[str, list[str]] = {
    "runs": [*_FILTER_COLUMNS, "model_version", "engine", "workload_kind", "pattern", "flags",
             "rankable", "unranked_reasons", "tier", "tier_reason", "confirmation",
             "confirmed_by", "quick", "max_system_tps", "tps_per_user_at_max_tps",
             "best_tps_per_user", "ttft_p90_ms_best", "ttfa_p90_ms_best", "reasoning_tokens",
             "error_rate", "usd_per_mtok_output", "usd_per_mtok_output_at_max_tps",
             "blended_usd_per_mtok", "output_tokens_per_usd", "usd_per_1k_requests",
             "usd_per_mtok_output_today", "success_rate", "pass_hat_1",
             "usd_per_successful_task", "decision_ms_p90", "quality", "quality_below",
             # issue 25: the prompt cache
             "cache_hit_rate", "cache_status", "usd_per_mtok_output_uncached_at_max_tps"],
    "points": ["run_id", "endpoint_id", "workload_id", "point", "concurrency", "rate",
               "tps_per_user", "system_tps", "ttft_ms_p90", "usd_per_mtok_output",
               "on_pareto"],
    # The History board and the endpoint pages: daily medians, and every result of a series
    # once the reader narrows to its endpoint (epbench.generator.history_views; the other boards
    # read
    # the newest result per endpoint x workload x client region: epbench.generator.latest).
    "history": [*_FILTER_COLUMNS, "workload_kind", "rankable", "tier", "tier_reason",
                "max_system_tps", "ttft_p90_ms_best", "usd_per_mtok_output", "success_rate",
                "tps_at_target", "best_tps_per_user", "decision_ms_p90", "results"],
    "agentic": [*_FILTER_COLUMNS, "rankable", "unranked_reasons", "tier", "tier_reason",
                "success_rate",
                "success_ci_low", "success_ci_high",
                "pass_hat_1", "decision_ms_p90", "correct_call_rate", "usd_per_task",
                "usd_per_successful_task", "retry_spend_share", "quality", "quality_below",
                "agents_at_slo", "agents_per_usd_hour", "agents_slo_decision_p90_ms", "load_levels",
                *(f"retry_{tag}_{m}" for tag in ("productive", "repair", "recovery", "transport")
                  for m in ("requests", "tokens", "seconds", "usd"))],
}


_IDENT = [Column("endpoint_id", kind="link"), Column("provider", kind="text"),
          Column("model", kind="text"), Column("api", kind="text"),
          Column("division", kind="text")]

BOARDS: dict[str, dict[str, Any]] = {
    "serving": {
        "title": "Serving leaderboard",
        "intro": [
            "One row per endpoint, workload and client region: its newest serving result "
            "(rankable first; every older one is on the History page and in the downloads). "
            "Each result is a sweep of measurement points; the row shows its best throughput, "
            "the per-user speed there, its best TTFT p90 and its cost. Filter, sort by any "
            "column, and share the link: the address holds the view.",
        ],
        "source": "runs",
        "where": {"workload_kind": "serving"},
        "sort": ["max_system_tps", "desc"],
        # The figures a reader compares first, identity after them.
        # (cost among them: at 1366 px a reader sees about ten columns without scrolling).
        "columns": [Column("endpoint_id", kind="link"),
                    Column("workload_id", kind="text"),
                    Column("client_region", kind="text"),
                    Column("max_system_tps"),
                    Column("tps_per_user_at_max_tps"),
                    Column("best_tps_per_user"),
                    Column("ttft_p90_ms_best"),
                    Column("error_rate"),
                    Column("usd_per_mtok_output_at_max_tps"),
                    Column("model", kind="text"), Column("api", kind="text"),
                    # issue 25: the prompt cache
                    Column("cache_hit_rate", kind="cache"),
                    Column("usd_per_mtok_output_uncached_at_max_tps"),
                    Column("ttfa_p90_ms_best"),
                    Column("usd_per_mtok_output"),
                    Column("quality", kind="text"),
                    Column("date", kind="run"), Column("provider", kind="text"),
                    Column("division", kind="text"), Column("region", kind="text"),
                    Column("disclosure_score"),
                    Column("rankable", kind="rank"),
                    Column("flags", kind="list")],
        "downloads": ["runs", "points"],
    },
    "agentic": {
        "title": "Agentic leaderboard",
        "intro": [
            "One row per endpoint, workload and client region (its newest agentic result): "
            "tool-calling tasks played for n trials each. Success "
            "counts endpoint errors against the endpoint; the retry columns say what was spent "
            "repairing invalid calls, recovering from tool faults and retrying transport "
            "errors.",
        ],
        "source": "agentic",
        "where": {},
        "sort": ["success_rate", "desc"],
        # The figures first (success and its cost in view at 1366 px), identity after them.
        "columns": [Column("endpoint_id", kind="link"),
                    Column("workload_id", kind="text"),
                    Column("success_rate"),
                    Column("success_ci_low"), Column("success_ci_high"),
                    Column("pass_hat_1"), Column("decision_ms_p90"),
                    Column("usd_per_successful_task"),
                    Column("usd_per_task"),
                    Column("correct_call_rate"),
                    Column("agents_at_slo"),
                    Column("agents_per_usd_hour"),
                    *_IDENT[1:], Column("date", kind="run"),
                    Column("quality", kind="text"),
                    Column("retry_spend_share"),
                    Column("disclosure_score"),
                    Column("rankable", kind="rank")],
        "downloads": ["agentic"],
    },
    "cost": {
        "title": "Cost",
        "intro": [
            "What the measured work cost, for the newest result per endpoint, workload and "
            "client region, with the price card each result ran under (pinned "
            "at run time) and re-priced with today's card. Serviced endpoints are priced per "
            "token; self-hosted ones per hour of the deployment. Input tokens the endpoint "
            "read from its prompt cache are priced at the card's cached-input price and "
            "cache writes at its cache-write price; beside it, the same work without cache "
            "prices, and the hit rate (\"not reported by the endpoint\" when its usage never "
            "said).",
        ],
        "source": "runs",
        "where": {},
        "sort": ["usd_per_mtok_output_at_max_tps", "asc"],
        "columns": [Column("endpoint_id", kind="link"), Column("model", kind="text"),
                    Column("workload_id", kind="text"),
                    Column("usd_per_mtok_output_at_max_tps"),
                    # issue 25: the prompt cache
                    Column("usd_per_mtok_output_uncached_at_max_tps"),
                    Column("cache_hit_rate", kind="cache"),
                    Column("usd_per_mtok_output"),
                    Column("usd_per_mtok_output_today"),
                    Column("blended_usd_per_mtok"),
                    Column("output_tokens_per_usd"),
                    Column("usd_per_1k_requests"),
                    Column("usd_per_successful_task"),
                    Column("date", kind="run"), Column("provider", kind="text"),
                    Column("division", kind="text")],
        "downloads": ["runs", "endpoints"],
    },
    "history": {
        "title": "History",
        "intro": [
            "Every result over time, per endpoint and workload. Until you pick an endpoint, "
            "a row stands for one endpoint, workload and client region on one day (the median "
            "of its results; the “results” column says how many); picking an endpoint "
            "loads each of its results. Pick the metric above the chart. Results of each "
            "provenance tier are kept apart; self-reported ones are left out until you tick "
            "“Include self-reported results” (emulated ones, self-reported too, follow "
            "“Include emulated results”).",
        ],
        "source": "history",
        "where": {},
        "sort": ["date", "desc"],
        "columns": [Column("date", kind="run"), *_IDENT,
                    Column("workload_id", kind="text"),
                    Column("tier", kind="tier"),
                    Column("results"),
                    Column("max_system_tps"),
                    Column("ttft_p90_ms_best"),
                    Column("usd_per_mtok_output"),
                    Column("success_rate")],
        # the figures the chart can draw, named as its axis names them
        "metrics": ["max_system_tps", "tps_at_target", "best_tps_per_user", "ttft_p90_ms_best",
                    "usd_per_mtok_output", "success_rate", "decision_ms_p90"],
        "downloads": ["history", "runs"],
    },
}



def board_config(name: str, spec: dict[str, Any], root: str, frame: pd.DataFrame) -> dict:
    """The board's JSON configuration, inlined in its page for board.js."""
    chart_specs = charts.charts_for(name)
    needed = {spec["source"], *(c.source for c in chart_specs)}
    export = [c for c in VIEW_COLUMNS[spec["source"]] if c in frame.columns or frame.empty]
    return {
        "page": name,
        "root": root,
        "sources": {s: f"{root}data/view/{s}.json" for s in sorted(needed)},
        "table": {
            "source": spec["source"],
            "where": spec["where"],
            "sort": spec["sort"],
            "caption": spec["title"] + " (filtered rows; click a header to sort)",
            "columns": [c.to_config(spec["source"]) for c in spec["columns"]],
            "export_columns": export,
        },
        "charts": [c.to_config() for c in chart_specs],
        "metrics": [{"key": k, "label": axis_of(k, spec["source"])}
                    for k in spec.get("metrics", [])],
        **({"series": {"source": "history", "files": series_files(frame, root)}}
           if spec["source"] == "history" else {}),
    }

