"""Hand-computed vectors for pass^k, the Wilson interval, distributions and retry-cost tags."""

from __future__ import annotations

import pytest

from epbench.core.agentic_summary import dist
from epbench.core.cost_ledger import CostLedger, tag_after
from epbench.core.metrics.passk import pass_hat_k, pass_hat_k_task
from epbench.core.metrics.wilson import wilson


def test_pass_hat_k_of_one_task_is_c_choose_k_over_n_choose_k():
    # 3 of 4 trials passed: C(3,1)/C(4,1) = 3/4, C(3,2)/C(4,2) = 3/6, C(3,3)/C(4,3) = 1/4, 0.
    assert [pass_hat_k_task(3, 4, k) for k in (1, 2, 3, 4)] == [0.75, 0.5, 0.25, 0.0]


def test_pass_hat_k_is_the_mean_over_tasks_for_every_k_up_to_n():
    got = pass_hat_k([(3, 4), (4, 4), (1, 4)])
    # k=1: (3/4 + 1 + 1/4)/3; k=2: (1/2 + 1 + 0)/3; k=3: (1/4 + 1 + 0)/3; k=4: (0 + 1 + 0)/3
    assert got == pytest.approx({"1": 2 / 3, "2": 0.5, "3": 1.25 / 3, "4": 1 / 3})
    assert list(got) == ["1", "2", "3", "4"]


def test_pass_hat_k_stops_at_the_smallest_n_and_skips_tasks_without_trials():
    assert pass_hat_k([(2, 2), (1, 3), (0, 0)]) == pytest.approx({"1": (1 + 1 / 3) / 2, "2": 0.5})
    assert pass_hat_k([]) == {}


def test_pass_hat_k_rejects_a_k_beyond_n():
    with pytest.raises(ValueError):
        pass_hat_k_task(1, 2, 3)


def test_wilson_interval_for_8_of_10_matches_the_textbook_value():
    low, high = wilson(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4)
    assert high == pytest.approx(0.9433, abs=1e-4)
    assert wilson(0, 0) == (0.0, 1.0)
    assert wilson(5, 5)[1] == 1.0


def test_agentic_dist_is_the_shared_percentiles_unrounded_without_intervals():
    d = dist([1.0, 2.0, 3.0, 4.0])
    assert (d["p50"], d["p90"], d["mean"], d["n"]) == (2.5, pytest.approx(3.7), 2.5, 4)
    assert d["insufficient"] == ["p90", "p99"]
    assert dist([])["p50"] is None and dist([])["n"] == 0
    assert "ci95" not in dist([1.0, 2.0, 3.0])
    assert dist([1 / 3, 2 / 3])["mean"] == 0.5 and dist([1 / 3])["p50"] == 1 / 3
    assert dist([1.0] * 64)["insufficient"] == ["p99"] and dist([1.0] * 662)["insufficient"] == []


def test_the_next_request_is_a_repair_when_any_call_was_invalid_even_with_a_fault():
    assert tag_after(0, 0) == "productive"
    assert tag_after(0, 2) == "recovery"
    assert tag_after(1, 1) == "repair"


def test_ledger_prices_tokens_on_a_per_token_card_and_sums_per_tag():
    card = {"input_usd_per_mtok": 1.0, "output_usd_per_mtok": 2.0}
    ledger = CostLedger(card)
    # 100 in, 10 out: (100 * 1 + 10 * 2) / 1e6 = 0.00012 USD
    assert ledger.add("productive", 100, 10, 0.5) == pytest.approx(0.00012)
    ledger.add("repair", 200, 20, 1.0)
    ledger.add("repair", 0, 0, 0.25)
    out = ledger.to_dict()
    assert out["repair"] == {
        "requests": 2,
        "tokens": 220,
        "seconds": 1.25,
        "usd": pytest.approx(0.00024),
    }
    assert ledger.total_usd() == pytest.approx(0.00036)
    assert ledger.retry_usd() == pytest.approx(0.00024)


def test_ledger_prices_seconds_on_an_hourly_card():
    ledger = CostLedger({"usd_per_hour": 3.6})
    # 3.6 USD/h = 0.001 USD/s; 2.5 s cost 0.0025 USD whatever the tokens
    assert ledger.add("transport", 1000, 1000, 2.5) == pytest.approx(0.0025)


def test_ledger_without_a_price_card_reports_no_usd():
    ledger = CostLedger(None)
    ledger.add("productive", 10, 10, 1.0)
    assert ledger.total_usd() is None and ledger.to_dict()["productive"]["usd"] is None


def test_ledger_merges_sums_read_back_from_a_journal():
    card = {"input_usd_per_mtok": 1.0, "output_usd_per_mtok": 1.0}
    a, b = CostLedger(card), CostLedger(card)
    a.add("recovery", 10, 0, 1.0)
    b.merge(a.to_dict())
    b.merge(a.to_dict())
    assert b.to_dict()["recovery"]["requests"] == 2 and b.to_dict()["recovery"]["tokens"] == 20
