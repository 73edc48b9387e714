"""Burst phases: p99 TTFT, error rate, recovery seconds."""

from __future__ import annotations

import pytest

from epbench.core.metrics.burst import phase_stats, recovery_seconds


def test_phase_stats_give_p99_ttft_of_successes_and_the_error_rate():
    stats = phase_stats("base", 0.0, 10.0, 4.0, [10.0, 20.0, 30.0], issued=4, failed=1)
    # p99 of [10, 20, 30]: h = 2·0.99 = 1.98 -> 20 + 0.98·10 = 29.8
    assert stats["ttft_p99_ms"] == pytest.approx(29.8)
    assert stats["error_rate"] == pytest.approx(0.25)
    assert stats["requests"] == 4
    assert (stats["start_s"], stats["end_s"], stats["rate_rps"]) == (0.0, 10.0, 4.0)


def test_an_empty_phase_has_no_p99_and_no_errors():
    stats = phase_stats("spike", 10.0, 12.0, 20.0, [], issued=0, failed=0)
    assert stats["ttft_p99_ms"] is None and stats["error_rate"] == 0.0


def samples_slow_until(slow_end: float) -> list[tuple[float, float]]:
    """Arrivals every 50 ms from 10.0 s to 15.0 s: 500 ms TTFT before slow_end, 100 after."""
    out = []
    for i in range(100):
        t = round(10.0 + i * 0.05, 6)
        out.append((t, 500.0 if t < slow_end else 100.0))
    return out


def test_recovery_is_the_first_window_start_whose_p99_is_within_ten_percent_of_base():
    # Base p99 100 -> limit 110; window 1 s, step 0.1 s; slow arrivals end at 11.5 s.
    assert recovery_seconds(samples_slow_until(11.5), 10.0, 15.0, 100.0, 1.0) == pytest.approx(1.5)


def test_no_slowdown_means_zero_recovery_seconds():
    assert recovery_seconds(samples_slow_until(0.0), 10.0, 15.0, 100.0, 1.0) == 0.0


def test_recovery_is_null_when_latency_never_comes_back():
    assert recovery_seconds(samples_slow_until(99.0), 10.0, 15.0, 100.0, 1.0) is None


def test_recovery_is_null_without_a_base_p99():
    assert recovery_seconds(samples_slow_until(11.5), 10.0, 15.0, None, 1.0) is None
