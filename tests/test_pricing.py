"""Price-card arithmetic, against hand-computed values."""

from __future__ import annotations

import pytest

from epcore.pricing import cost_usd, hourly_cost_usd, request_cost_usd

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
