"""Results written before the layering (commit 79ddc47, tests/data/before-layers) still
validate, aggregate and render exactly as that commit's code did, and the serving one's
journal still gives its numbers."""

from __future__ import annotations

import json
from pathlib import Path

from epbench.generator.render import CACHE_CELLS, POINT_COLUMNS
from epbench.runner.merge import merge_runs
from tests.tools.before_layers import DATA, snapshot

EXPECTED = json.loads((DATA / "expected.json").read_text(encoding="utf-8"))
# Wire-API columns added since, and what an old result gives in them.
API_ADDED = {
    "runs": {"api": "openai-chat", "ttfa_p90_ms_best": None, "reasoning_tokens": None,
             "cache_read_tokens": None, "cache_write_tokens": None},
    "points": {"api": "openai-chat", "ttfa_ms_p50": None, "ttfa_ms_p90": None,
               "reasoning_tokens": None, "cache_read_tokens": None, "cache_write_tokens": None},
    "agentic": {"api": "openai-chat", "reasoning_tokens": None, "cache_read_tokens": None,
                "cache_write_tokens": None},
}
ADDED_ERROR_CLASSES = {"overloaded", "http_other", "deadline", "protocol", "too_large",
                       "usage_implausible"}
ADDED_COUNTS = {"points": {"input_tokens", "output_tokens"}}  # the point's own token counts


# Columns added since that commit (additive, as the result contract asks); old results get
# them empty or false.
ADDED = {
    "agentic": {"model_version", "success_n", "quality_workload", "reference_endpoint",
                "source_category", "quality", "quality_reference_run", "quality_reference_rate",
                "quality_reference_low", "quality_reference_high", "quality_p", "quality_below",
                "unranked_reasons", "tier", "tier_reason",
                # issue 24: the endpoint over the agentic suite (epbench.generator.agentic_suite)
                "suite_workloads", "suite_success_n", "suite_success_rate",
                "suite_success_ci_low", "suite_success_ci_high", "suite_decision_ms_p50",
                "suite_usd_per_successful_task",
                # issue 26: load levels and agents at SLO (null without load levels)
                "agents_at_slo", "agents_per_usd_hour", "agents_slo_decision_p90_ms",
                "load_levels"},
    "points": {"unranked_reasons", "tier", "tier_reason", "ttft_ms_p90_ci_low",
               "ttft_ms_p90_ci_high",
               # issue 25: the prompt cache
               "cache_hit_rate", "cache_status", "usd_per_mtok_output_uncached"},
    "runs": {"quality", "quality_below", "bfcl", "unranked_reasons", "journal_path",
             "tier", "tier_reason", "confirmation", "confirmed_by",
             "usd_per_mtok_output_at_max_tps", "tps_at_target",
             # issue 25: the prompt cache
             "cache_hit_rate", "cache_status", "usd_per_mtok_output_uncached_at_max_tps"},
    "history": {"tier", "tier_reason"},
}
# Issue 24: a run carries $ per M output tokens at its point of max throughput (what the
# boards show), beside the whole-sweep average it always had, and its throughput at the
# default target (History's metric menu).
# Issue 21: every table carries the provenance tier (an old result is self-reported) and why,
# and a run its confirmation by an independent run.


def test_old_results_give_the_same_findings_tables_and_run_pages_as_before() -> None:
    got = snapshot()
    assert got["findings"] == EXPECTED["findings"]
    for name, rows in EXPECTED["tables"].items():
        assert len(got["tables"][name]) == len(rows), f"table {name} differs"
        for old, new in zip(rows, got["tables"][name], strict=True):
            assert {k: new.get(k, "(missing)") for k in old} == old, f"table {name} differs"
            api_added = API_ADDED.get(name, {})
            allowed = ADDED.get(name, set()) | set(api_added) | ADDED_COUNTS.get(name, set())
            assert set(new) - set(old) <= allowed, \
                f"table {name}: new columns {sorted(set(new) - set(old) - allowed)}"
            assert all(new[k] == v for k, v in api_added.items()), name
        if got["tables"][name] and "unranked_reasons" in got["tables"][name][0]:  # issue 10
            assert all("no evidence (no journal submitted)" in row["unranked_reasons"]
                       for row in got["tables"][name])
    # The run page's points gained each point's cost per M output tokens since (issue 13):
    # the other cells are as before.
    # Issue 25: each point's prompt-cache hit rate and its cost without cache prices, last;
    # an old result's says it was written before cache figures.
    cost_at = POINT_COLUMNS.index("cost per M output tokens")
    cache_at = len(POINT_COLUMNS) - CACHE_CELLS
    pages = {run: [row[:cost_at] + row[cost_at + 1:cache_at] for row in rows]
             for run, rows in got["run_pages"].items()}
    assert pages == EXPECTED["run_pages"]
    assert all(str(row[cost_at]).startswith(("$", "—"))
               for rows in got["run_pages"].values() for row in rows)
    assert all(row[cache_at].startswith("not recorded")
               and row[cache_at + 1].startswith(("$", "—"))
               for rows in got["run_pages"].values() for row in rows)
    assert set(got["tables"]) == set(EXPECTED["tables"])


def test_the_snapshot_covers_a_serving_frontier_and_an_agentic_run() -> None:
    tables = EXPECTED["tables"]
    assert {r["workload_kind"] for r in tables["runs"]} == {"serving", "agentic"}
    assert len(tables["agentic"]) == 1
    assert len(tables["points"]) == 7 and all(p["on_pareto"] for p in tables["points"])
    assert all(not p["rankable"] for p in tables["points"])  # emulated


def test_the_old_serving_journal_gives_the_old_points_and_frontier(tmp_path: Path) -> None:
    run = DATA / "runs" / "099e659d12a1640a"
    old = json.loads((run / "result.json").read_text(encoding="utf-8"))
    new = json.loads(merge_runs([run], tmp_path / "again").read_text(encoding="utf-8"))
    for new_point, old_point in zip(new["points"], old["points"], strict=True):
        # error classes added since (overloaded) are counted, and are zero here
        added = set(new_point["errors"]) - set(old_point["errors"])
        assert added <= ADDED_ERROR_CLASSES, added
        assert all(new_point["errors"].pop(cls) == 0 for cls in added)
        # inter-token latency no longer carries a bootstrap interval (epbench.core.summary says why)
        assert "ci95" not in new_point["itl_ms"]
        old_point["itl_ms"].pop("ci95")
    assert new["points"] == old["points"]
    assert new["pareto"] == old["pareto"]
