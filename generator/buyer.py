"""The buyer's pages: the home page's ranked table at a target, and the compare page.

Both read the newest result per endpoint × workload × client region (`epbench.generator.latest`) and
run in the browser (site/assets/epbench/buyer.js): the reader picks a workload and a target
(a per-user speed to reach, or a TTFT p90 ceiling), and every endpoint is placed at its best
point meeting the target. This module gives the pages their configuration: the columns with
their definitions, the workloads to offer, and the defaults.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from epbench.generator import charts
from epbench.generator.columns import Column
from epbench.generator.tables import TARGET_SPEED

DEFAULT_SPEED = TARGET_SPEED  # tokens/s per user: a reader's comfortable reading speed
DEFAULT_TTFT_MS = 1000.0
COMPARE_LIMIT = 4

RANKED_COLUMNS = [
    Column("rank", "#", "num"),
    Column("endpoint_id", kind="link"),
    # the endpoint's best point meeting the reader's target
    Column("system_tps", "throughput at target (tok/s)"),
    Column("tps_per_user"),
    Column("usd_per_mtok_output"),
    Column("ttft_ms_p90"),
    Column("error_rate"),
    Column("date", kind="text"),
    Column("badges", "provenance", "badges", define="rankable"),
]


def serving_workloads(latest: pd.DataFrame) -> list[str]:
    """Workload ids of the latest serving points, the most measured endpoints first."""
    if latest.empty:
        return []
    counts = latest.groupby("workload_id")["endpoint_id"].nunique()
    ordered = sorted(counts.items(), key=lambda kv: (-int(kv[1]), str(kv[0])))
    return [str(w) for w, _ in ordered]


def page_config(mode: str, root: str, latest: pd.DataFrame) -> dict[str, Any]:
    """The inline configuration of the home (`mode="home"`) or compare page."""
    workloads = serving_workloads(latest)
    return {
        "mode": mode,
        "root": root,
        "sources": {"latest": f"{root}data/view/latest.json",
                    "agentic": f"{root}data/view/latest_agentic.json"},
        "workloads": workloads,
        "defaults": {"workload": workloads[0] if workloads else "", "target": "speed",
                     "speed": DEFAULT_SPEED, "ttft": DEFAULT_TTFT_MS},
        "compare_limit": COMPARE_LIMIT,
        "methodology": f"{root}methodology/",
        "columns": [c.to_config("points") for c in RANKED_COLUMNS],
        "chart": charts.buyer_chart(),
    }
