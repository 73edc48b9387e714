"""The Pareto frontier over (tps_per_user, system_tps) as a step function."""

from __future__ import annotations

import itertools

from epcore.metrics.pareto import frontier


def point(pid, user, system):
    return {"id": pid, "tps_per_user": user, "system_tps": system}


def test_dominated_points_are_dropped_and_the_rest_sorted_by_tps_per_user():
    points = [
        point("a", 100, 100),
        point("b", 80, 300),
        point("c", 50, 250),  # b has more of both
        point("d", 30, 400),
        point("e", 80, 200),  # same tps_per_user as b, less system_tps
        point("f", None, 900),  # no TPOT: not placed
    ]
    assert frontier(points) == [
        {"point": "d", "tps_per_user": 30.0, "system_tps": 400.0},
        {"point": "b", "tps_per_user": 80.0, "system_tps": 300.0},
        {"point": "a", "tps_per_user": 100.0, "system_tps": 100.0},
    ]


def test_frontier_system_tps_strictly_falls_as_tps_per_user_rises():
    points = [point(f"p{i}", 10 * i, 1000 - (i * 37) % 500) for i in range(1, 20)]
    rows = frontier(points)
    users = [r["tps_per_user"] for r in rows]
    systems = [r["system_tps"] for r in rows]
    assert users == sorted(users)
    assert all(a > b for a, b in itertools.pairwise(systems))


def test_no_points_give_an_empty_frontier():
    assert frontier([]) == []
