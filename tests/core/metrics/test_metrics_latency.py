"""TTFT, E2E, TPOT, ITL and the open-loop latencies from the scheduled time."""

from __future__ import annotations

import pytest

from epbench.core.metrics import latency

MS = 1_000_000
RECORD = {
    "class": "ok",
    "t_scheduled_ns": 990 * MS,
    "t_send_ns": 1000 * MS,
    "t_first_ns": 1050 * MS,
    "t_last_ns": 1250 * MS,
    "output_tokens": 5,
    "itl_us": [40_000, 60_000, 50_000, 50_000],
}


def test_ttft_is_first_content_event_minus_send():
    assert latency.ttft_ms(RECORD) == pytest.approx(50.0)


def test_e2e_is_last_content_event_minus_send():
    assert latency.e2e_ms(RECORD) == pytest.approx(250.0)


def test_tpot_spreads_decode_time_over_tokens_after_the_first():
    assert latency.tpot_ms(RECORD) == pytest.approx((250.0 - 50.0) / 4)


def test_tpot_needs_two_or_more_tokens():
    assert latency.tpot_ms({**RECORD, "output_tokens": 1}) is None


def test_itl_is_the_journaled_microsecond_gaps_of_a_successful_request():
    assert list(latency.itl_us(RECORD)) == [40_000, 60_000, 50_000, 50_000]


def test_open_loop_latencies_count_from_the_scheduled_time():
    assert latency.schedule_delay_ms(RECORD) == pytest.approx(10.0)
    assert latency.ttft_from_scheduled_ms(RECORD) == pytest.approx(60.0)
    assert latency.e2e_from_scheduled_ms(RECORD) == pytest.approx(260.0)


def test_failed_requests_have_no_latency_but_keep_their_schedule_delay():
    failed = {**RECORD, "class": "truncated"}
    assert latency.ttft_ms(failed) is None
    assert latency.e2e_ms(failed) is None
    assert latency.tpot_ms(failed) is None
    assert list(latency.itl_us(failed)) == []
    assert latency.schedule_delay_ms(failed) == pytest.approx(10.0)


def test_closed_loop_records_have_no_schedule_delay():
    assert latency.schedule_delay_ms({**RECORD, "t_scheduled_ns": None}) is None
