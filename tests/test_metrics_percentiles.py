"""Percentiles (numpy linear), counts, sufficiency flags and seeded bootstrap intervals."""

from __future__ import annotations

import random

import pytest

from epcore.metrics.percentiles import bootstrap_ci, insufficient, summarize


def test_percentiles_of_one_to_ten_match_the_linear_method_by_hand():
    dist = summarize(list(range(1, 11)), seed=None)
    # h = (n-1)·q: p50 h=4.5 -> 5.5; p90 h=8.1 -> 9.1; p95 h=8.55 -> 9.55; p99 h=8.91 -> 9.91
    assert dist["p50"] == pytest.approx(5.5)
    assert dist["p90"] == pytest.approx(9.1)
    assert dist["p95"] == pytest.approx(9.55)
    assert dist["p99"] == pytest.approx(9.91)
    assert dist["mean"] == pytest.approx(5.5)
    assert dist["n"] == 10
    assert dist["insufficient"] == ["p90", "p99"]
    assert "ci95" not in dist


def test_an_empty_sample_has_no_statistics_and_a_zero_count():
    dist = summarize([], seed=1)
    assert dist["p50"] is None and dist["p99"] is None and dist["mean"] is None
    assert dist["n"] == 0


def test_sufficiency_thresholds_are_64_for_p90_and_662_for_p99():
    assert insufficient(63) == ["p90", "p99"]
    assert insufficient(64) == ["p99"]
    assert insufficient(661) == ["p99"]
    assert insufficient(662) == []


def test_bootstrap_interval_is_reproducible_with_the_same_seed():
    rng = random.Random(0)
    values = [rng.random() for _ in range(200)]
    assert bootstrap_ci(values, 50, seed=3) == bootstrap_ci(values, 50, seed=3)
    assert bootstrap_ci(values, 50, seed=3) != bootstrap_ci(values, 50, seed=4)


def test_bootstrap_interval_of_a_constant_sample_is_that_constant():
    assert bootstrap_ci([7.0] * 50, 90, seed=0) == (7.0, 7.0)


def test_bootstrap_interval_brackets_the_sample_percentile():
    values = [float(v) for v in range(1, 401)]
    low, high = bootstrap_ci(values, 50, seed=0)
    assert low <= 200.5 <= high
    assert high - low < 80  # about ±2 standard errors of the median of 400 uniform values


def test_summary_carries_intervals_for_p50_and_p90_only():
    dist = summarize([float(v) for v in range(100)], seed=0)
    assert set(dist["ci95"]) == {"p50", "p90"}
    assert dist["insufficient"] == ["p99"]


def test_a_single_sample_has_no_interval():
    assert bootstrap_ci([1.0], 50, seed=0) is None


def test_one_percentile_is_the_same_linear_value_the_distribution_reports():
    from epcore.metrics.percentiles import percentile

    values = [5.0, 1.0, 4.0, 2.0, 3.0]
    # sorted 1..5, h = 4 * 0.9 = 3.6: 4 + 0.6 * (5 - 4) = 4.6
    assert percentile(values, 90) == pytest.approx(4.6) == summarize(values, seed=None)["p90"]
    assert percentile([], 50) is None
