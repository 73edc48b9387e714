"""Cost normalization against hand-computed values (serviced, self-hosted, agentic with retries).

Serviced sample (input 0.10, output 0.20, cached input 0.05 USD/Mtok):
  c1: 100,000 in + 12,800 out            -> 0.010000 + 0.002560            = 0.012560 USD
  c8: 600,000 in + 200,000 cached + 101,120 out
                                          -> 0.060000 + 0.010000 + 0.020224 = 0.090224 USD
  run: 0.102784 USD for 113,920 output tokens and 890 completed requests.
Self-hosted sample (3.60 USD/hour, 0.5 kW): 200 s -> 0.2 USD for 40,000 tokens.
Agentic sample: retry tags 0.030 + 0.006 + 0.002 + 0.002 = 0.040 USD over 8 trials, 5 wins.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from epbench.generator import cost
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data" / "results"
SERVICED = json.loads(
    (DATA / "alice/acme-llama-8b/2026-11-20-chat-short-a1b2c3d4.json").read_text()
)
SELF_HOSTED = json.loads(
    (DATA / "alice/alice-h100-vllm/2026-11-21-chat-short-b2c3d4e5.json").read_text()
)
AGENTIC = json.loads((DATA / "bob/acme-llama-8b/2026-11-22-tool-lookup-c3d4e5f6.json").read_text())


def test_serviced_point_costs_use_input_cached_and_output_prices() -> None:
    card = SERVICED["endpoint"]["pricing"]
    c1, c8 = SERVICED["points"]
    assert cost.point_cost_usd(card, c1) == pytest.approx(0.01256)
    assert cost.point_cost_usd(card, c8) == pytest.approx(0.090224)


def test_serviced_run_figures_equal_the_hand_computed_ones() -> None:
    run = cost.serving_cost(SERVICED["endpoint"]["pricing"], SERVICED["points"])
    assert run.cost_usd == pytest.approx(0.102784)
    assert run.output_tokens == 113_920
    assert run.usd_per_mtok_output == pytest.approx(0.102784 / 113_920 * 1e6)
    assert run.usd_per_mtok_output == pytest.approx(0.90224719, rel=1e-7)
    assert run.blended_usd_per_mtok == pytest.approx((3 * 0.10 + 0.20) / 4)
    assert run.output_tokens_per_usd == pytest.approx(1_108_343.71, rel=1e-7)
    assert run.usd_per_1k_requests == pytest.approx(0.102784 / 890 * 1000)
    assert run.tokens_per_kwh is None


def test_self_hosted_cost_is_hourly_price_times_measured_seconds_over_tokens() -> None:
    run = cost.serving_cost(SELF_HOSTED["endpoint"]["pricing"], SELF_HOSTED["points"])
    assert run.cost_usd == pytest.approx(3.6 * 200 / 3600)
    assert run.usd_per_mtok_output == pytest.approx(5.0)
    assert run.output_tokens_per_usd == pytest.approx(200_000)
    assert run.usd_per_1k_requests == pytest.approx(0.5)
    assert run.blended_usd_per_mtok is None
    # 40,000 tokens / (0.5 kW * 200 s / 3600 s/h) = 1,440,000 tokens per kWh
    assert run.tokens_per_kwh == pytest.approx(1_440_000)


def test_agentic_spend_includes_retries_and_their_share() -> None:
    spend = cost.agentic_cost(AGENTIC["endpoint"]["pricing"], AGENTIC)
    assert spend.total_usd == pytest.approx(0.04)
    assert spend.usd_per_task == pytest.approx(0.04 / 8)
    assert spend.usd_per_successful_task == pytest.approx(0.04 / 5)
    assert spend.retry_spend_share == pytest.approx((0.006 + 0.002 + 0.002) / 0.04)


def test_agentic_spend_at_another_price_is_recomputed_from_tokens() -> None:
    today = {"input_usd_per_mtok": 0.05, "output_usd_per_mtok": 0.10,
             "effective_date": "2026-11-25", "source_url": "https://acme.example/p"}
    spend = cost.agentic_cost(today, AGENTIC, pinned=False)
    # 24,000 in * 0.05 + 1,600 out * 0.10 = 1,200 + 160 = 1,360 micro-USD
    assert spend.total_usd == pytest.approx(0.00136)
    assert spend.usd_per_successful_task == pytest.approx(0.00136 / 5)
    # split by each tag's share of tokens: (3,000 + 1,300 + 1,300) / 25,600
    assert spend.retry_spend_share == pytest.approx(5_600 / 25_600)


def test_hourly_agentic_spend_comes_from_each_tags_seconds() -> None:
    card = {"usd_per_hour": 36.0, "effective_date": "2026-01-01"}
    spend = cost.agentic_cost(card, AGENTIC, pinned=False)
    # 36 USD/h = 0.01 USD/s; seconds 20 + 3 + 1 + 4 = 28
    assert spend.usd_by_tag == pytest.approx(
        {"productive": 0.2, "repair": 0.03, "recovery": 0.01, "transport": 0.04})
    assert spend.retry_spend_share == pytest.approx(8 / 28)


def test_today_card_comes_from_the_current_endpoint_file(tmp_path: Path) -> None:
    (tmp_path / "endpoints").mkdir()
    endpoint = dict(SERVICED["endpoint"], pricing={
        "input_usd_per_mtok": 0.05, "output_usd_per_mtok": 0.10,
        "effective_date": "2026-11-25", "source_url": "https://acme.example/pricing"})
    (tmp_path / "endpoints" / "acme-llama-8b.yaml").write_text(json.dumps(endpoint))
    card = cost.todays_card(tmp_path, "acme-llama-8b")
    assert card is not None and card["input_usd_per_mtok"] == 0.05
    today = cost.serving_cost(card, SERVICED["points"])
    # c1: 0.005 + 0.00128; c8: (600k + 200k cached at the input price) * 0.05 + 101,120 * 0.10
    assert today.cost_usd == pytest.approx(0.00628 + 0.050112)
    assert cost.todays_card(tmp_path, "nowhere") is None


def test_degenerate_inputs_give_none_not_division_errors() -> None:
    assert cost.usd_per_mtok_output(1.0, 0) is None
    assert cost.output_tokens_per_usd(0.0, 100) is None
    assert cost.usd_per_1k_requests(None, 10) is None
    assert cost.usd_per_successful_task(1.0, 0) is None
    assert cost.retry_spend_share({"productive": 0.0}) is None
    assert cost.tokens_per_kwh({"usd_per_hour": 1}, 100, 10) is None


def test_serving_cost_normalization_uses_cache_and_reasoning_token_counts() -> None:
    card = {"input_usd_per_mtok": 3.0, "output_usd_per_mtok": 15.0,
            "cached_input_usd_per_mtok": 0.30, "cache_write_input_usd_per_mtok": 3.75,
            "effective_date": "2026-01-01", "source_url": "https://example.com/pricing"}
    point = {"window_s": 10.0, "requests": {"completed": 10},
             "tokens": {"input": 10_000, "cached_input": 6_000, "cache_write": 2_000,
                        "output": 1_000, "reasoning": 400, "output_in_window": 1_000}}
    # 2000*3 + 6000*0.30 + 2000*3.75 + 1000*15 = 6000 + 1800 + 7500 + 15000 = 30,300 µ$
    assert cost.point_cost_usd(card, point) == pytest.approx(0.0303)
    run = cost.serving_cost(card, [point])
    assert run.usd_per_mtok_output == pytest.approx(30.3)  # 0.0303 $ / 1,000 tokens * 1e6
    assert run.usd_per_1k_requests == pytest.approx(3.03)  # 0.0303 / 10 * 1000
    # the same tokens without the cache split (an older result) cost the full input price
    plain = {**point, "tokens": {"input": 10_000, "output": 1_000, "output_in_window": 1_000}}
    assert cost.point_cost_usd(card, plain) == pytest.approx(0.045)  # 30,000 + 15,000 µ$


def _serving_cost_as_it_was(card: cost.Card, points: list[dict[str, Any]]) -> cost.RunCost:
    """The whole-run figures summed point by point, as serving_cost did on its own."""
    total: float | None = 0.0
    tokens = completed = 0
    seconds = 0.0
    for point in points:
        one = cost.point_cost_usd(card, point)
        total = None if one is None or total is None else total + one
        tokens += cost.billed_output_tokens(card, point)
        completed += int(point["requests"]["completed"])
        seconds += float(point["window_s"])
    if completed == 0 and tokens == 0:
        total = None
    return cost.RunCost(
        total, tokens, completed, seconds, cost.usd_per_mtok_output(total, tokens),
        cost.blended_usd_per_mtok(card), cost.output_tokens_per_usd(total, tokens),
        cost.usd_per_1k_requests(total, completed),
        cost.tokens_per_kwh(card, tokens, seconds) if "usd_per_hour" in card else None)


def test_serving_costs_gives_the_run_and_each_point_to_the_last_bit() -> None:
    rng = random.Random(13)
    cards: list[cost.Card] = [
        SERVICED["endpoint"]["pricing"], SELF_HOSTED["endpoint"]["pricing"],
        {"usd_per_hour": 3.7, "power_kw": 1.3},
        {"input_usd_per_mtok": 0.15, "output_usd_per_mtok": 0.6,
         "cached_input_usd_per_mtok": 0.075, "reasoning_usd_per_mtok": 2.4},
    ]
    for _ in range(300):
        card = rng.choice(cards)
        points = copy.deepcopy(rng.choice([SERVICED, SELF_HOSTED])["points"])
        points = [p for p in points if rng.random() < 0.8]
        for p in points:
            p["window_s"] = rng.choice([0.0, 0.1, 1e-9, rng.uniform(0, 1e4)])
            p["requests"]["completed"] = rng.choice([0, 1, rng.randint(0, 10**6)])
            p["tokens"]["output"] = rng.choice([0, rng.randint(0, 10**9)])
            p["tokens"]["output_in_window"] = rng.choice([0, p["tokens"]["output"]])
            p["tokens"]["input"] = rng.randint(0, 10**9)
            p["tokens"]["cached_input"] = rng.randint(0, 10**9)
        whole, each = cost.serving_costs(card, points)
        assert repr(whole) == repr(_serving_cost_as_it_was(card, points))
        assert repr(whole) == repr(cost.serving_cost(card, points))
        assert [repr(one) for one in each] == \
            [repr(_serving_cost_as_it_was(card, [p])) for p in points]
