"""The Pareto frontier over (tps_per_user, system_tps) as a step function."""

from __future__ import annotations

import itertools

from epbench.core.metrics.pareto import frontier


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


def dominates(q, p):
    """The docstring's rule, written out literally."""
    return (q["tps_per_user"] >= p["tps_per_user"] and q["system_tps"] >= p["system_tps"]
            and (q["tps_per_user"] > p["tps_per_user"] or q["system_tps"] > p["system_tps"]))


def test_the_frontier_is_the_documented_dominance_rule_on_random_points_with_ties():
    import random

    for seed in range(20):
        rng = random.Random(seed)
        points = []
        for i in range(120):
            if points and rng.random() < 0.15:
                twin = rng.choice(points)
                points.append(point(f"p{i}", twin["tps_per_user"], twin["system_tps"]))
            else:
                points.append(point(f"p{i}", float(rng.randint(1, 12)), float(rng.randint(1, 12))))
        expected = []
        for p in points:
            position = (p["tps_per_user"], p["system_tps"])
            first_at = next(q for q in points if (q["tps_per_user"], q["system_tps"]) == position)
            if first_at is p and not any(dominates(q, p) for q in points):
                expected.append(p)
        expected.sort(key=lambda p: p["tps_per_user"])
        assert [r["point"] for r in frontier(points)] == [p["id"] for p in expected]
