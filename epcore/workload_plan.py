"""What a serving workload plans, as compact arrays: the one implementation the runner builds
its plan from (epbench.runner.plan) and `epbench validate` rebuilds to compare with a journal.

    concurrency  one point per level `c`: warm-up requests then max(`requests_per_point`, c)
                 measured ones
    poisson      one point per rate `r`: arrival offsets drawn as exponential gaps with mean
                 1/r from a generator seeded by (seed, point), warm-up arrivals first
    burst        three points on one timeline: base, spike (base x factor), recovery;
                 arrivals are exponential gaps at the rate of the phase the previous arrival
                 fell in; --quick multiplies the phase lengths by `quick.time_scale`
    conversation sessions of several turns: epbench.core.conversation_plan, which builds its
                 points with PlannedPoint (`conversation` holds each request's session and
                 turn); `plan_points` and `planned_requests` callers dispatch to it

Shared prefixes (`prompts.shared_prefix`: K `prefixes` of L `tokens`, each used by M
`requests_each`): every planned length is L plus the drawn suffix length, and request `seq` of
a point uses the prefix `shared_prefix_key` names: measured request i is in group
i // (K*M), prefix i % K of it (so the K prefixes interleave and each serves M requests);
warm-up requests use prefixes of their own, so they never warm the measured ones. Keys start
with the point id: no point reads another point's prefixes from a server's cache.

A point holds its request count, warm-up count, prompt lengths (`array('i')`) and, open loop,
planned offsets (`array('d')`): about 12 bytes a request, so a plan of a million requests
fits in a few MB. Request `seq` of point `p` is `p-<seq:05d>`; the first `warmup` are warm-up.
"""

from __future__ import annotations

import math
import random
from array import array
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from epbench.core.runspec import PointSpec, RunSpec

BURST_PHASES = ("base", "spike", "recovery")


@dataclass
class PlannedPoint:
    id: str
    index: int
    warmup: int
    lengths: array = field(default_factory=lambda: array("i"))
    offsets: array | None = None  # open loop: planned arrival, seconds from the point's start
    concurrency: int | None = None
    rate: float | None = None
    phase: str | None = None
    start_s: float | None = None
    end_s: float | None = None
    # trace plans (epbench.core.trace_plan): each request's output length and prefix blocks
    outputs: array | None = None
    hash_ids: list[tuple[int, ...]] | None = None
    # conversation points: each request's session, turn and think time (conversation_plan)
    conversation: Any = None

    @property
    def count(self) -> int:
        return len(self.lengths)

    def request_id(self, seq: int) -> str:
        return request_id(self.id, seq)

    def spec(self) -> PointSpec:
        return PointSpec(self.id, self.index, self.concurrency, self.rate, self.phase,
                         self.start_s, self.end_s)


def request_id(point: str, seq: int) -> str:
    return f"{point}-{seq:05d}"


def rate_id(rate: float) -> str:
    return "r" + f"{rate:g}".replace("+", "")


def draw_length(dist: Mapping[str, Any], rng: random.Random) -> int:
    """One prompt length from a workload `distribution` (fixed, uniform, normal, lognormal).

    normal/lognormal use `mean` and `stddev` of the lengths themselves; every draw is clipped
    to [min, max] when given and is at least 1.
    """
    return max(1, round(draw_value(dist, rng)))


def draw_value(dist: Mapping[str, Any], rng: random.Random) -> float:
    """One value from a workload `distribution`, clipped to [min, max] when given (not
    rounded: a conversation's think times are seconds)."""
    kind = dist["distribution"]
    low = dist.get("min")
    high = dist.get("max")
    if kind == "fixed":
        value = float(dist.get("value", dist.get("mean", 1)))
    elif kind == "uniform":
        value = rng.uniform(
            float(low if low is not None else 1), float(high if high is not None else low or 1)
        )
    elif kind == "normal":
        value = rng.gauss(float(dist["mean"]), float(dist.get("stddev", 0)))
    elif kind == "lognormal":
        mean = float(dist["mean"])
        sd = float(dist.get("stddev", 0))
        sigma = math.sqrt(math.log(1 + (sd * sd) / (mean * mean))) if mean > 0 else 0.0
        mu = math.log(mean) - sigma * sigma / 2 if mean > 0 else 0.0
        value = rng.lognormvariate(mu, sigma)
    else:  # the schema admits no other kind
        raise ValueError(f"unknown distribution {kind!r}")
    if low is not None:
        value = max(value, float(low))
    if high is not None:
        value = min(value, float(high))
    return value


def planned_requests(pattern: str, load: Mapping[str, Any], quick_block: Mapping[str, Any],
                     quick: bool) -> float:
    """How many requests the plan holds (burst: the expected count), without drawing it."""
    q = quick_block if quick else {}
    if pattern in ("concurrency", "poisson"):
        n = int(q.get("requests_per_point", load["requests_per_point"]))
        warm = int(q.get("warmup_requests", load.get("warmup_requests", 0)))
        levels = load["concurrency"] if pattern == "concurrency" else load["rates_rps"]
        if pattern == "poisson":
            return float(len(levels) * (warm + n))
        return float(sum(warm + max(n, int(c)) for c in levels))
    scale = float(q.get("time_scale", 1.0)) if quick else 1.0
    base = float(load["base_rate_rps"])
    return scale * base * (float(load["base_s"]) + float(load["recovery_s"])
                           + float(load["spike_s"]) * float(load["spike_factor"]))


def plan_points(
    pattern: str, seed: int, load: Mapping[str, Any], lengths: Mapping[str, Any],
    quick_block: Mapping[str, Any], quick: bool,
    shared_prefix: Mapping[str, Any] | None = None,
) -> tuple[list[PlannedPoint], dict[str, Any] | None]:
    """(every point of the plan, the burst block {"window_s", "end_s"} or None); with
    `shared_prefix`, every length includes the prefix's tokens."""
    points, burst = _plan_points(pattern, seed, load, lengths, quick_block, quick)
    if shared_prefix:
        with_prefix(points, shared_prefix)
    return points, burst


def _plan_points(
    pattern: str, seed: int, load: Mapping[str, Any], lengths: Mapping[str, Any],
    quick_block: Mapping[str, Any], quick: bool,
) -> tuple[list[PlannedPoint], dict[str, Any] | None]:
    q = quick_block if quick else {}
    if pattern == "burst":
        return _burst_points(seed, load, lengths, float(q.get("time_scale", 1.0)) if quick else 1.0)
    n = int(q.get("requests_per_point", load["requests_per_point"]))
    warm = int(q.get("warmup_requests", load.get("warmup_requests", 0)))
    points: list[PlannedPoint] = []
    if pattern == "concurrency":
        for index, level in enumerate(load["concurrency"]):
            pid = f"c{level}"
            # At least one measured request per worker, or the point never reaches its level.
            drawn = _lengths(seed, pid, lengths, warm + max(n, int(level)))
            points.append(PlannedPoint(pid, index, warm, drawn, concurrency=int(level)))
    elif pattern == "poisson":
        for index, rate in enumerate(load["rates_rps"]):
            pid = rate_id(float(rate))
            drawn = _lengths(seed, pid, lengths, warm + n)
            rng = random.Random(f"{seed}:schedule:{pid}")
            offsets = array("d")
            t = 0.0
            for _ in range(len(drawn)):
                offsets.append(round(t, 9))
                t += rng.expovariate(float(rate))
            points.append(PlannedPoint(pid, index, warm, drawn, offsets, rate=float(rate)))
    else:  # the schema admits no other pattern
        raise ValueError(f"unknown pattern {pattern!r}")
    return points, None


# --- shared prefixes (prompts.shared_prefix) ---
def with_prefix(points: list[PlannedPoint], shared: Mapping[str, Any]) -> None:
    """Add the shared prefix's tokens to every planned length (in place)."""
    extra = int(shared["tokens"])
    for point in points:
        point.lengths = array("i", (length + extra for length in point.lengths))


def shared_prefix_key(point_id: str, seq: int, warmup: int, shared: Mapping[str, Any]) -> str:
    """The name of the prefix request `seq` of a point sends (see the module docstring)."""
    prefixes = int(shared["prefixes"])
    if seq < warmup:
        return f"{point_id}-w-k{seq % prefixes}"
    i = seq - warmup
    return f"{point_id}-g{i // (prefixes * int(shared['requests_each']))}-k{i % prefixes}"
# --- end of shared prefixes ---


def run_spec(pattern: str, seed: int, points: list[PlannedPoint], slo: Mapping[str, float],
             burst: dict[str, Any] | None) -> RunSpec:
    """The run line's spec for these (selected) points: what the summarizer needs."""
    offsets: dict[str, float] = {}
    if pattern == "burst":
        offsets = {p.request_id(seq): float(p.offsets[seq] if p.offsets else 0.0)
                   for p in points for seq in range(p.count)}
    return RunSpec(pattern=pattern, seed=seed, points=[p.spec() for p in points],
                   slo=dict(slo or {}), burst=burst, offsets=offsets)


def _lengths(seed: int, pid: str, dist: Mapping[str, Any], count: int) -> array:
    rng = random.Random(f"{seed}:lengths:{pid}")
    return array("i", (draw_length(dist, rng) for _ in range(count)))


def _burst_points(
    seed: int, load: Mapping[str, Any], dist: Mapping[str, Any], scale: float
) -> tuple[list[PlannedPoint], dict[str, Any]]:
    base = float(load["base_rate_rps"])
    spike = base * float(load["spike_factor"])
    spans = [float(load["base_s"]) * scale, float(load["spike_s"]) * scale,
             float(load["recovery_s"]) * scale]
    bounds = [0.0, spans[0], spans[0] + spans[1], sum(spans)]
    rates = [base, spike, base]
    rng = random.Random(f"{seed}:schedule:burst")
    length_rng = random.Random(f"{seed}:lengths:burst")
    points = [
        PlannedPoint(name, i, 0, array("i"), array("d"), rate=rates[i], phase=name,
                     start_s=bounds[i], end_s=bounds[i + 1])
        for i, name in enumerate(BURST_PHASES)
    ]
    t = 0.0
    while t < bounds[3]:
        phase = 0 if t < bounds[1] else 1 if t < bounds[2] else 2
        point = points[phase]
        point.lengths.append(draw_length(dist, length_rng))
        assert point.offsets is not None
        point.offsets.append(round(t, 9))
        t += rng.expovariate(rates[phase])
    window = float(load.get("recovery_window_s", 5.0)) * scale
    return points, {"window_s": window, "end_s": bounds[3]}
