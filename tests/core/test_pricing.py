"""Price-card arithmetic, against hand-computed values."""

from __future__ import annotations

import pytest

from epbench.core.pricing import cost_usd, hourly_cost_usd, request_cost_usd

CARD = {"input_usd_per_mtok": 0.5, "output_usd_per_mtok": 1.5, "cached_input_usd_per_mtok": 0.25}


def test_request_cost_prices_input_cached_and_output_tokens_separately():
    # 1,000 in (200 cached), 500 out: 800*0.5 + 200*0.25 + 500*1.5 = 400 + 50 + 750 = 1200 µ$
    assert request_cost_usd(CARD, 1000, 500, cached_input_tokens=200) == pytest.approx(0.0012)


def test_cached_tokens_fall_back_to_the_input_price_without_a_cached_price():
    card = {"input_usd_per_mtok": 2.0, "output_usd_per_mtok": 8.0}
    assert request_cost_usd(card, 1_000_000, 0, cached_input_tokens=500_000) == pytest.approx(2.0)


def test_hourly_cards_cost_by_the_second():
    card = {"usd_per_hour": 3.6}
    assert hourly_cost_usd(card, 10.0) == pytest.approx(0.01)
    assert request_cost_usd(card, 10, 10) is None
    assert cost_usd(card, 10, 10, seconds=1800) == pytest.approx(1.8)


# An Anthropic-style card: cache writes at 1.25x input, cache reads at 0.1x.
SONNET = {"input_usd_per_mtok": 3.0, "output_usd_per_mtok": 15.0,
          "cached_input_usd_per_mtok": 0.30, "cache_write_input_usd_per_mtok": 3.75}


def test_cache_reads_and_writes_are_priced_apart_and_reasoning_as_output():
    # 10,000 in = 2,000 plain + 6,000 read + 2,000 written; 1,000 out of which 400 reasoning:
    # 2000*3 + 6000*0.30 + 2000*3.75 + 600*15 + 400*15 = 6000 + 1800 + 7500 + 9000 + 6000
    # = 30,300 µ$
    assert request_cost_usd(SONNET, 10_000, 1_000, cached_input_tokens=6_000,
                            cache_write_tokens=2_000, reasoning_tokens=400) == pytest.approx(0.0303)


def test_a_reasoning_price_on_the_card_prices_reasoning_tokens_apart():
    card = {**SONNET, "reasoning_usd_per_mtok": 20.0}
    # as above but 400 * 20 = 8,000 instead of 6,000: 32,300 µ$
    assert request_cost_usd(card, 10_000, 1_000, cached_input_tokens=6_000,
                            cache_write_tokens=2_000, reasoning_tokens=400) == pytest.approx(0.0323)


def test_without_cache_prices_every_input_token_costs_the_input_price():
    card = {"input_usd_per_mtok": 3.0, "output_usd_per_mtok": 15.0}
    # 10,000 * 3 + 1,000 * 15 = 45,000 µ$, however the input and output split
    assert request_cost_usd(card, 10_000, 1_000, cached_input_tokens=6_000,
                            cache_write_tokens=2_000, reasoning_tokens=400) == pytest.approx(0.045)


def test_cache_and_reasoning_counts_are_clamped_to_the_totals_they_belong_to():
    # reads 9,000 of 10,000; writes claimed 5,000 but only 1,000 are left; reasoning 2,000 > 1,000
    # 0*3 + 9000*0.30 + 1000*3.75 + 0*15 + 1000*15 = 2700 + 3750 + 15000 = 21,450 µ$
    assert request_cost_usd(SONNET, 10_000, 1_000, cached_input_tokens=9_000,
                            cache_write_tokens=5_000, reasoning_tokens=2_000) == pytest.approx(
        0.02145)
