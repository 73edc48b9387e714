"""system_tps, tps_per_user, goodput and the measurement window."""

from __future__ import annotations

import pytest

from epbench.core.metrics import throughput

MS = 1_000_000


def rec(cls="ok", send=0, first=50, last=250, done=260, tokens=5, warmup=False):
    return {
        "class": cls,
        "warmup": warmup,
        "t_send_ns": send * MS,
        "t_first_ns": first * MS,
        "t_last_ns": last * MS,
        "t_done_ns": done * MS,
        "output_tokens": tokens,
    }


def test_system_tps_is_tokens_over_window_seconds():
    assert throughput.system_tps(1000, 2.0) == pytest.approx(500.0)
    assert throughput.system_tps(1000, 0.0) == 0.0


def test_tps_per_user_is_one_thousand_over_tpot_p90():
    assert throughput.tps_per_user(20.0) == pytest.approx(50.0)
    assert throughput.tps_per_user(None) is None


def test_window_runs_from_first_measured_send_to_last_completion_excluding_warmup():
    records = [
        rec(send=0, done=500, warmup=True),
        rec(send=100, done=900),
        rec(send=300, done=1200),
    ]
    assert throughput.measurement_window(records) == (100 * MS, 1200 * MS)
    assert throughput.measurement_window([rec(warmup=True)]) is None


def test_window_seconds_is_sending_nanoseconds_in_seconds_and_never_zero():
    assert throughput.window_seconds(1_500 * MS) == 1.5
    assert throughput.window_seconds(0) == throughput.MIN_WINDOW_S


def test_goodput_counts_successes_meeting_every_slo_per_second():
    slo = {"ttft_ms": 100, "tpot_ms": 60}
    records = [
        rec(first=50, last=250, tokens=5),  # ttft 50, tpot 50: meets both
        rec(first=150, last=350, tokens=5),  # ttft 150: misses
        rec(first=50, last=450, tokens=5),  # tpot 100: misses
        rec(cls="http_5xx"),  # failed: never counts
        rec(first=50, last=50, tokens=1),  # no TPOT: judged on TTFT alone
    ]
    assert throughput.goodput_rps(records, slo, 2.0) == pytest.approx(1.0)


def test_goodput_without_slos_counts_every_success():
    assert throughput.goodput_rps([rec(), rec(), rec(cls="timeout")], {}, 1.0) == 2.0
