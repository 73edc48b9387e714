"""Fast paths of the semantic checks never change a finding: check_dist's one-pass test for a
clean distribution gives the same findings as the checks one by one on 2,000 seeded
distributions (missing, unordered, zero, NaN, wrong or duplicated `insufficient`, n around the
thresholds), and the cached results_root equals the walk it replaced."""

from __future__ import annotations

import random

import pytest

from epbench.generator.checks import dist
from epbench.generator.checks.dist import POSITIVE_TIMES, check_dist

NAMES = ["ttft_ms", "itl_ms", "tool_ms", *sorted(POSITIVE_TIMES)]


def seeded_dist(rng: random.Random) -> dict[str, object]:
    n = rng.choice([0, 1, 2, 63, 64, 65, 661, 662, 663, 12700])
    base = sorted(rng.choice([0.0, 1.0, 5.5, 100.0, -1.0, float("nan")]) for _ in range(4))
    if rng.random() < 0.2:
        rng.shuffle(base)
    dist: dict[str, object] = dict(zip(("p50", "p90", "p95", "p99"), base, strict=True))
    dist.update(mean=1.0, n=n)
    if rng.random() < 0.2:
        dist[rng.choice(["p50", "p90", "p95", "p99"])] = None
    if rng.random() < 0.1:
        dist.update(p50=None, p90=None, p95=None, p99=None)
    roll = rng.random()
    if roll < 0.6:
        dist["insufficient"] = [k for k in ("p90", "p99") if
                                n < {"p90": 64, "p99": 662}[k] or rng.random() < 0.1]
        if rng.random() < 0.1:
            dist["insufficient"] = [*dist["insufficient"], *dist["insufficient"]]  # type: ignore[misc]
    return dist


def test_2000_seeded_distributions_get_the_same_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(13)
    cases = [(seeded_dist(rng), rng.choice(NAMES), rng.random() < 0.2) for _ in range(2000)]
    fast = [check_dist(d, name, "/points/0/x", "f.json", partial_ok=ok) for d, name, ok in cases]
    monkeypatch.setattr(dist, "_clean", lambda *_: False)
    slow = [check_dist(d, name, "/points/0/x", "f.json", partial_ok=ok) for d, name, ok in cases]
    assert fast == slow
    assert sum(1 for found in slow if found) > 300
    assert sum(1 for found in slow if not found) > 300


def test_results_root_is_the_nearest_enclosing_results_folder() -> None:
    from pathlib import Path

    from epbench.generator.checks.layout import results_root

    def walked(path: Path) -> Path | None:  # the walk it caches
        return next((p for p in path.parents if p.name == "results"), None)

    for text in ("results/a/b.json", "x/results/results/c.json", "c.json", "/", "/x",
                 "results", "results/../d.json", "/tmp/results/e/f/g.json", "a/b/c.json"):
        assert results_root(Path(text)) == walked(Path(text)), text


def test_the_lowest_carried_percentile_is_the_first_of_carried() -> None:
    from epbench.generator.checks.plausible.round_trip import _carried, _lowest

    rng = random.Random(5)
    for _ in range(500):
        dist = {k: rng.choice([None, True, 0, 1.5, "x", 7]) for k in ("p50", "p90", "p95", "p99")
                if rng.random() < 0.7}
        for value in (dist, None, [], "x"):
            carried = _carried(value)
            assert _lowest(value) == (carried[0] if carried else ("p50", None))
