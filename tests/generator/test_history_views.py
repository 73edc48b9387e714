"""The History view: one row per series, client region, tier and day, so a self-reported
result is never pooled into an attested median, and each row carries its tier and why."""

from __future__ import annotations

import pandas as pd
import pytest

from epbench.generator.boards import VIEW_COLUMNS
from epbench.generator.history_views import daily_history
from epbench.generator.tables import HISTORY_COLUMNS


def _run(run_id: str, tier: str, reason: str, tps: float, day: str = "2026-11-20") -> dict:
    return {"run_id": run_id, "endpoint_id": "acme", "provider": "acme", "model": "m",
            "division": "serviced", "hardware": None, "region": "us", "client_region": "us",
            "workload_id": "chat-short", "workload_kind": "serving", "date": day,
            "rankable": tier != "self-reported", "tier": tier, "tier_reason": reason,
            "api": "chat", "submitter": "s", "disclosure_score": 0.9,
            "max_system_tps": tps, "ttft_p90_ms_best": 100.0, "usd_per_mtok_output": 1.0,
            "success_rate": None}


def test_a_self_reported_result_gets_its_own_daily_row_apart_from_the_attested_median() -> None:
    runs = pd.DataFrame([
        _run("a1", "attested", "signed by the scheduled workflow", 100.0),
        _run("a2", "attested", "signed by the scheduled workflow", 200.0),
        _run("s1", "self-reported", "no attestation bundle", 9000.0),
    ])
    daily = daily_history(runs).set_index("tier")
    assert sorted(daily.index) == ["attested", "self-reported"]
    assert daily.loc["attested", "max_system_tps"] == pytest.approx(150.0)  # (100 + 200) / 2
    assert daily.loc["attested", "results"] == 2
    assert daily.loc["attested", "tier_reason"] == "signed by the scheduled workflow"
    assert daily.loc["self-reported", "max_system_tps"] == pytest.approx(9000.0)
    assert daily.loc["self-reported", "run_id"] == "s1"  # one result keeps its run id
    assert daily.loc["self-reported", "tier_reason"] == "no attestation bundle"


def test_a_day_of_one_tier_lists_each_distinct_reason_once() -> None:
    runs = pd.DataFrame([
        _run("s1", "self-reported", "no attestation bundle", 10.0),
        _run("s2", "self-reported", "bundle signed by another workflow", 20.0),
        _run("s3", "self-reported", "no attestation bundle", 30.0),
    ])
    daily = daily_history(runs)
    assert len(daily) == 1
    assert daily.loc[0, "tier_reason"] == (
        "no attestation bundle; bundle signed by another workflow")
    assert daily.loc[0, "results"] == 3


def test_no_result_gives_an_empty_view_with_the_tier_columns() -> None:
    empty = pd.DataFrame(columns=list(_run("x", "attested", "r", 1.0)))
    assert {"tier", "tier_reason", "results"} <= set(daily_history(empty).columns)


def test_the_history_view_and_download_name_the_tier_and_its_reason() -> None:
    for columns in (VIEW_COLUMNS["history"], HISTORY_COLUMNS):
        assert {"tier", "tier_reason"} <= set(columns), columns
