"""lib/reducers.js and epbench.core compute the same Pareto frontier: 1,000 seeded random
points (exact ties, duplicates, equal tps_per_user and equal system_tps, points without
tps_per_user) go to the page's frontier function in Chromium and to
epbench.core.metrics.pareto.frontier."""

from __future__ import annotations

import random
from typing import Any

import pytest

from epbench.core.metrics.pareto import frontier
from tests.browser.harness import open_page, wait_for_board

pytestmark = [pytest.mark.browser]


def random_points(seed: int, n: int = 1000) -> list[dict[str, Any]]:
    """Points on a coarse grid (so ties on one axis are common), with exact duplicates."""
    rng = random.Random(seed)
    points: list[dict[str, Any]] = []
    for i in range(n):
        if points and rng.random() < 0.1:
            twin = rng.choice(points)
            user, system = twin["tps_per_user"], twin["system_tps"]
        else:
            # system_tps falls as tps_per_user rises (a serving trade-off), on a coarse grid.
            step = rng.randint(1, 60)
            user = None if rng.random() < 0.02 else float(step)
            system = float((60 - step) * 10 + rng.randint(0, 4) * 5)
        points.append({"id": f"p{i:04d}", "point": f"p{i:04d}", "tps_per_user": user,
                       "system_tps": system, "run_id": "r", "endpoint_id": "e",
                       "workload_id": "w"})
    return points


def test_random_points_have_ties_duplicates_and_a_long_frontier() -> None:
    points = random_points(2026)
    positions = [(p["tps_per_user"], p["system_tps"]) for p in points]
    assert len(set(positions)) < len(positions) - 50
    assert len({p["tps_per_user"] for p in points}) < 70
    assert len(frontier(points)) >= 5


@pytest.mark.parametrize("seed", [2026, 7, 31337])
def test_board_js_and_python_give_the_same_frontier_on_1000_random_points(
        chrome: Any, site_url: str, seed: int) -> None:
    points = random_points(seed)
    page, log = open_page(chrome)
    page.goto(site_url + "serving/")
    wait_for_board(page)
    in_browser = page.evaluate(
        "pts => window.epbBoard.frontier(pts).map(r => [r.id, r.tps_per_user, r.system_tps])",
        points)
    in_python = [[r["point"], r["tps_per_user"], r["system_tps"]] for r in frontier(points)]
    assert in_browser == in_python
    assert log.problems() == []
    page.context.close()
