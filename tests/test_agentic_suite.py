"""Each endpoint over the agentic suite (epbench.generator.agentic_suite): its newest ranked
result per workload, pooled; the interval is Wilson's on the pooled successes and trials."""

from __future__ import annotations

import statistics

import pandas as pd
import pytest

from epbench.core.metrics.wilson import wilson
from epbench.generator.agentic_suite import SUITE_COLUMNS, add_suite, suite_rows


def row(run: str, endpoint: str, workload: str, day: str, rate: float, n: int,
        per_task: float | None = 0.01, decision: float = 300.0,
        ranked: bool = True) -> dict:
    return {"run_id": run, "endpoint_id": endpoint, "provider": "p", "model": "m",
            "workload_id": workload, "date": day, "rankable": ranked, "success_rate": rate,
            "success_n": n, "usd_per_task": per_task, "decision_ms_p50": decision}


def test_an_endpoint_pools_its_newest_ranked_result_of_each_workload() -> None:
    table = pd.DataFrame([
        row("a1", "a", "w1", "2026-11-01", 0.5, 10, decision=100.0),
        row("a2", "a", "w1", "2026-11-03", 0.9, 10, decision=200.0),  # newer: replaces a1
        row("a3", "a", "w2", "2026-11-02", 0.25, 20, per_task=0.02, decision=500.0),
        row("a4", "a", "w3", "2026-11-04", 1.0, 40, ranked=False),  # unranked: not pooled
    ])
    add_suite(table)
    wins, n = 9 + 5, 10 + 20
    got = table.set_index("run_id")
    assert got.loc["a2", "suite_workloads"] == 2 and got.loc["a2", "suite_success_n"] == n
    assert got.loc["a2", "suite_success_rate"] == pytest.approx(wins / n)
    assert (got.loc["a2", "suite_success_ci_low"], got.loc["a2", "suite_success_ci_high"]) \
        == pytest.approx(wilson(wins, n))
    assert got.loc["a2", "suite_decision_ms_p50"] == statistics.median([200.0, 500.0])
    assert got.loc["a2", "suite_usd_per_successful_task"] == pytest.approx(
        (0.01 * 10 + 0.02 * 20) / wins)
    assert got.loc["a1", "suite_success_n"] == n  # the endpoint's figures on each ranked row
    assert all(pd.isna(got.loc["a4", c]) for c in SUITE_COLUMNS)


def test_a_result_without_a_price_leaves_the_suite_cost_unknown_not_cheaper() -> None:
    table = pd.DataFrame([row("b1", "b", "w1", "2026-11-01", 0.5, 10),
                          row("b2", "b", "w2", "2026-11-01", 0.5, 10, per_task=None)])
    add_suite(table)
    assert table["suite_usd_per_successful_task"].isna().all()
    assert table["suite_success_rate"].tolist() == [0.5, 0.5]


def test_the_suite_rows_put_the_highest_low_end_of_the_interval_first() -> None:
    # c: 9 of 10 (rate higher, interval wide); d: 85 of 100 (lower rate, higher low end)
    table = pd.DataFrame([row("c1", "c", "w1", "2026-11-01", 0.9, 10),
                          row("d1", "d", "w1", "2026-11-01", 0.85, 100)])
    add_suite(table)
    assert wilson(85, 100)[0] > wilson(9, 10)[0]
    rows = suite_rows(table)
    assert [r["endpoint_id"] for r in rows] == ["d", "c"]
    assert rows[0]["workloads"] == ["w1"]


def test_no_ranked_agentic_result_gives_no_suite_rows() -> None:
    table = pd.DataFrame([row("e1", "e", "w1", "2026-11-01", 0.9, 10, ranked=False)])
    add_suite(table)
    assert suite_rows(table) == []
    empty = pd.DataFrame(columns=["run_id", "endpoint_id", "rankable"])
    add_suite(empty)
    assert suite_rows(empty) == [] and set(SUITE_COLUMNS) <= set(empty.columns)
