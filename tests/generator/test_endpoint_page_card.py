"""The endpoint page states the prices today's card has, and only those."""

from __future__ import annotations

import re

from epbench.generator.render import environment


def _card_sentence(card: dict) -> str:
    html = environment().get_template("endpoint.md.j2").render(
        endpoint_id="acme", identity=None, card=card, prices=[], serving=[], agentic=[],
        root="../", workload_pages=set(), board="", capacity=None,
    )
    return re.search(r"<p>Today's card.*?</p>", html, re.S).group(0)


def test_an_hourly_card_shows_its_hourly_price_and_no_empty_token_prices():
    text = _card_sentence({"effective_date": "2026-01-01", "usd_per_hour": 2.0,
                           "input_usd_per_mtok": None, "output_usd_per_mtok": None})
    assert "$2.00 per hour of the deployment" in text
    assert "$—" not in text and "per M tokens" not in text


def test_a_token_card_lists_input_output_and_cached_prices():
    text = _card_sentence({"effective_date": "2026-01-01", "input_usd_per_mtok": 0.15,
                           "output_usd_per_mtok": 0.6, "cached_input_usd_per_mtok": 0.075})
    assert "input $0.15 per M tokens, output $0.60 per M tokens" in text
    assert "cached input $0.075 per M tokens" in text and "per hour" not in text
