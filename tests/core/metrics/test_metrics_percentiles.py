"""Percentiles (numpy linear), counts, sufficiency flags and seeded bootstrap intervals."""

from __future__ import annotations

import random

import pytest

from epbench.core.metrics.percentiles import bootstrap_ci, insufficient, summarize


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
    from epbench.core.metrics.percentiles import percentile

    values = [5.0, 1.0, 4.0, 2.0, 3.0]
    # sorted 1..5, h = 4 * 0.9 = 3.6: 4 + 0.6 * (5 - 4) = 4.6
    assert percentile(values, 90) == pytest.approx(4.6) == summarize(values, seed=None)["p90"]
    assert percentile([], 50) is None



def _numpy_statistics(values, qs, seed, resamples=1000):
    """The definition in the module docstring, written the slow way: numpy.percentile over
    every resample drawn by default_rng(seed), in the same batches."""
    import numpy as np

    arr = np.asarray(values, dtype=float)
    n = arr.size
    resamples = max(100, min(resamples, 4_000_000 // n))
    rng = np.random.default_rng(seed)
    batch = max(1, min(resamples, 1_000_000 // n))
    rows, done = [], 0
    while done < resamples:
        k = min(batch, resamples - done)
        rows.append(np.percentile(arr[rng.integers(0, n, size=(k, n))], list(qs), axis=1))
        done += k
    return np.concatenate(rows, axis=1)


@pytest.mark.parametrize("case", range(300))
def test_bootstrap_statistics_are_bit_identical_to_numpy_percentile_over_each_resample(case):
    import numpy as np

    from epbench.core.metrics.percentiles import bootstrap_cis, bootstrap_statistics

    rng = random.Random(case)
    n = rng.choice([2, 3, 5, 7, 10, 63, 64, 65, 100, 333, 960, 1001, rng.randint(2, 5000)])
    shape = case % 4
    if shape == 0:  # continuous
        values = [rng.lognormvariate(3, 1) for _ in range(n)]
    elif shape == 1:  # heavy ties, as integer milliseconds give
        values = [float(rng.randint(1, 6)) for _ in range(n)]
    elif shape == 2:  # large magnitudes and tiny spreads, where rounding shows
        values = [1e9 + rng.random() * 1e-3 for _ in range(n)]
    else:  # mixed signs and a constant run
        values = [rng.uniform(-5, 5) for _ in range(n // 2)] + [2.5] * (n - n // 2)
    qs = rng.choice([(50.0, 90.0), (90.0,), (50.0,), (95.0, 99.0, 2.5), (rng.uniform(0, 100),)])
    seed = rng.randint(0, 10**6)
    expected = _numpy_statistics(values, qs, seed)
    assert np.array_equal(bootstrap_statistics(np.asarray(values), qs, seed), expected)
    intervals = bootstrap_cis(values, qs, seed)
    for q, row in zip(qs, expected, strict=True):
        low, high = np.percentile(row, [2.5, 97.5])
        assert intervals[q] == (round(float(low), 6), round(float(high), 6))


@pytest.mark.parametrize("case", range(200))
def test_percentiles_are_bit_identical_to_numpy_percentile(case):
    import numpy as np

    from epbench.core.metrics.percentiles import percentile, summarize

    rng = random.Random(1000 + case)
    n = rng.choice([1, 2, 3, 4, 9, 10, 64, 661, 662, rng.randint(1, 20000)])
    values = ([float(rng.randint(0, 9)) for _ in range(n)] if case % 2
              else [rng.lognormvariate(1, 2) for _ in range(n)])
    dist = summarize(values, seed=None, digits=None)
    for name, q in (("p50", 50), ("p90", 90), ("p95", 95), ("p99", 99)):
        assert dist[name] == float(np.percentile(values, q))
    q = rng.uniform(0, 100)
    assert percentile(values, q) == float(np.percentile(values, q))


def test_integer_gaps_summarized_in_place_give_the_float_summary_percentiles_to_the_last_bit():
    import numpy as np

    from epbench.core.metrics.percentiles import summarize_integers

    rng = random.Random(11)
    for n in (1, 2, 7, 64, 1000, 5003):
        gaps = [rng.choice((0, rng.randint(1, 40_000), rng.randint(3000, 9000))) for _ in range(n)]
        floats = summarize([g / 1000 for g in gaps], seed=None, digits=None)
        ints = np.asarray(gaps, dtype=np.int32)
        exact = summarize_integers(ints, 1000, digits=None)
        for name in ("p50", "p90", "p95", "p99"):
            assert exact[name] == floats[name], (n, name)
        assert exact["mean"] == pytest.approx(floats["mean"], rel=1e-12)
        assert exact["mean"] == sum(gaps) / (n * 1000)
        assert exact["n"] == n and exact["insufficient"] == floats["insufficient"]
        assert list(exact) == list(floats)
        assert list(ints) == sorted(gaps)  # sorted in place: no copy held


def test_integer_gaps_with_a_seed_or_none_at_all_are_the_float_summary():
    import numpy as np

    from epbench.core.metrics.percentiles import summarize_integers

    gaps = [5000, 7000, 0, 12000, 6500, 6400]
    assert summarize_integers(np.asarray(gaps), 1000, seed=4) == summarize(
        [g / 1000 for g in gaps], seed=4)
    assert summarize_integers(np.asarray([], dtype=np.int32), 1000) == summarize([], seed=None)
