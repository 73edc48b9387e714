"""Each endpoint over the agentic suite (epbench.generator.agentic_suite): its newest ranked
result per workload, pooled; the interval is Wilson's on the pooled successes and trials."""

from __future__ import annotations

import statistics

import pandas as pd
import pytest

from epbench.core.metrics.wilson import wilson
from epbench.generator.agentic_suite import SUITE_COLUMNS, add_suite, pool_rows, pools, suite_rows


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


def _tiered(run: str, endpoint: str, rate: float, n: int, *, tier: str, division: str,
            reasons: list[str]) -> dict:
    return {**row(run, endpoint, "w1", "2026-11-01", rate, n, ranked=not reasons),
            "tier": tier, "division": division, "unranked_reasons": reasons}


SELF = "self-reported: no verified attestation"


def test_each_pool_takes_in_what_its_control_includes_and_counts_the_unranked_it_pooled() -> None:
    table = pd.DataFrame([
        _tiered("r", "ranked", 0.9, 10, tier="attested", division="open", reasons=[]),
        # self-reported with no other reason: ranks once the reader includes self-reported ones
        _tiered("s", "selfrep", 0.8, 10, tier="self-reported", division="open", reasons=[SELF]),
        # self-reported and quick: unranked even then
        _tiered("q", "selfquick", 0.7, 10, tier="self-reported", division="open",
                reasons=[SELF, "quick run"]),
        _tiered("e", "emulated", 1.0, 10, tier="self-reported", division="emulated",
                reasons=[SELF, "emulated endpoint"]),
    ])
    add_suite(table)
    seen = {pool: [r["endpoint_id"] for r in pool_rows(table, pool)]
            for pool in ("ranked", "self", "unranked", "all")}
    assert seen == {"ranked": ["ranked"], "self": ["ranked", "selfrep"],
                    "unranked": ["emulated", "ranked"],
                    "all": ["emulated", "ranked", "selfrep", "selfquick"]}
    unranked = {r["endpoint_id"]: r["unranked"] for r in pool_rows(table, "all")}
    assert unranked == {"emulated": 1, "ranked": 0, "selfrep": 1, "selfquick": 1}
    e = next(r for r in pool_rows(table, "all") if r["endpoint_id"] == "emulated")
    assert (e["suite_success_rate"], e["suite_success_n"]) == (1.0, 10)
    assert (e["suite_success_ci_low"], e["suite_success_ci_high"]) == pytest.approx(
        wilson(10, 10))


def test_equal_pools_are_written_once_naming_every_pool_they_serve() -> None:
    table = pd.DataFrame([
        _tiered("e", "emulated", 1.0, 10, tier="self-reported", division="emulated",
                reasons=[SELF, "emulated endpoint"])])
    add_suite(table)
    got = [(p["pools"], [r["endpoint_id"] for r in p["rows"]]) for p in pools(table)]
    assert got == [(["ranked", "self"], []), (["unranked", "all"], ["emulated"])]
