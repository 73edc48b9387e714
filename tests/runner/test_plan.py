"""Plans and prompts: seeded, unique per request, lengths from the workload, open-loop schedules."""

from __future__ import annotations

import random

import pytest

from epbench.core.errors import InputError
from epbench.runner.plan import Plan, build_plan, parse_shard
from epbench.runner.prompts import draw_length, prompt_text
from epbench.runner.workload import load_serving_workload
from tests.conftest import ROOT

SERVING = ROOT / "workloads" / "serving"


def test_prompts_are_deterministic_unique_and_start_with_the_request_id():
    a = prompt_text(1, "c1-00001", 50)
    assert a == prompt_text(1, "c1-00001", 50)
    assert a.startswith("c1-00001 ") and len(a.split()) == 50
    assert prompt_text(1, "c1-00002", 50).split()[1:] != a.split()[1:]
    assert prompt_text(2, "c1-00001", 50) != a


def test_lengths_follow_their_distribution_and_stay_within_bounds():
    rng = random.Random(0)
    normal = [
        draw_length(
            {"distribution": "normal", "mean": 128, "stddev": 16, "min": 64, "max": 192}, rng
        )
        for _ in range(4000)
    ]
    assert min(normal) >= 64 and max(normal) <= 192
    assert abs(sum(normal) / len(normal) - 128) < 2
    assert draw_length({"distribution": "fixed", "value": 7}, rng) == 7
    uniform = [
        draw_length({"distribution": "uniform", "min": 10, "max": 20}, rng) for _ in range(500)
    ]
    assert min(uniform) >= 10 and max(uniform) <= 20
    lognormal = [
        draw_length({"distribution": "lognormal", "mean": 100, "stddev": 30}, rng)
        for _ in range(4000)
    ]
    assert abs(sum(lognormal) / len(lognormal) - 100) < 3


def test_a_sweep_plan_has_warmup_then_measured_requests_per_level():
    plan = build_plan(load_serving_workload(SERVING / "chat-short.yaml"), "r" * 16, quick=True)
    assert [p.concurrency for p in plan.points] == [1, 2, 4, 8, 16, 32, 64]
    first = plan.points[0].requests
    assert len(first) == 34 and [r.warmup for r in first[:3]] == [True, True, False]
    ids = [r.request_id for p in plan.points for r in p.requests]
    assert len(ids) == len(set(ids))
    # quick asks for 32 per point; c64 gets 64 so that each of its workers sends one
    assert sum(not r.warmup for r in plan.points[-1].requests) == 64


def test_a_poisson_plan_is_seeded_and_spaced_at_the_rate():
    workload = load_serving_workload(SERVING / "poisson.yaml")
    plan = build_plan(workload, "r" * 16, quick=False)
    again = build_plan(workload, "r" * 16, quick=False)
    assert plan.to_json() == again.to_json()
    point = plan.points[-1]  # 16 requests per second
    offsets = [r.offset_s for r in point.requests]
    assert offsets[0] == 0.0 and offsets == sorted(offsets)
    mean_gap = offsets[-1] / (len(offsets) - 1)
    assert 1 / 16 * 0.8 < mean_gap < 1 / 16 * 1.2


def test_a_burst_plan_puts_arrivals_in_their_phases_at_their_rates():
    plan = build_plan(load_serving_workload(SERVING / "burst.yaml"), "r" * 16, quick=False)
    base, spike, recovery = plan.points
    assert (base.start_s, base.end_s, spike.end_s, recovery.end_s) == (0.0, 20.0, 30.0, 60.0)
    for point in plan.points:
        assert all(point.start_s <= r.offset_s < point.end_s for r in point.requests)
    assert 60 < len(base.requests) < 100  # 4 rps for 20 s
    assert 150 < len(spike.requests) < 250  # 20 rps for 10 s
    assert plan.burst == {"window_s": 5.0, "end_s": 60.0}


def test_a_plan_survives_its_json_round_trip():
    plan = build_plan(load_serving_workload(SERVING / "burst.yaml"), "r" * 16, quick=True)
    assert Plan.from_json(plan.to_json()) == plan


@pytest.mark.parametrize("spec", ["0/2", "3/2", "x", "1-2"])
def test_bad_shard_specs_are_input_errors(spec):
    with pytest.raises(InputError):
        parse_shard(spec)


def test_a_burst_cannot_be_split_into_shards():
    with pytest.raises(InputError):
        build_plan(load_serving_workload(SERVING / "burst.yaml"), "r" * 16, quick=True, shard="1/2")
