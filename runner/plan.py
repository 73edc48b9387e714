"""Load patterns as a plan: every request a run will send, decided before the first is sent.

    concurrency  one point per level `c`: warm-up requests then max(`requests_per_point`, c)
                 measured ones, sent closed-loop by `c` workers (a worker sends its next
                 request when its last one finished)
    poisson      one point per rate `r`: arrival offsets drawn as exponential gaps with mean
                 1/r from a generator seeded by (seed, point), warm-up arrivals first
    burst        three points on one timeline: base (base rate), spike (base x factor),
                 recovery (base rate); arrivals are exponential gaps at the rate of the phase
                 the previous arrival fell in; --quick multiplies the phase lengths by
                 `quick.time_scale`

The plan is written to runs/<run-id>/plan.json. It holds each request's id, point, sequence
number, warm-up flag, prompt length and planned arrival offset; the prompt text is rebuilt
from (seed, request id, length) by `runner.prompts`, so `--resume` sends the same bytes.
Sharding ("I/N") keeps the points whose index % N == I-1.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import Any

from epcore.errors import InputError
from runner.prompts import draw_length
from runner.workload import ServingWorkload

PLAN_VERSION = 1
BURST_PHASES = ("base", "spike", "recovery")


@dataclass
class PlannedRequest:
    request_id: str
    point: str
    seq: int
    warmup: bool
    input_tokens: int
    offset_s: float | None = None  # open loop: planned arrival, seconds from the point's start


@dataclass
class PointPlan:
    id: str
    index: int
    requests: list[PlannedRequest]
    concurrency: int | None = None
    rate: float | None = None
    phase: str | None = None
    start_s: float | None = None  # burst phases: where the phase sits on the burst timeline
    end_s: float | None = None


@dataclass
class Plan:
    run_id: str
    workload_id: str
    workload_sha256: str
    pattern: str
    seed: int
    quick: bool
    points: list[PointPlan]
    shard: str | None = None
    burst: dict[str, Any] | None = None  # {"window_s": ..., "end_s": ...}
    version: int = PLAN_VERSION
    meta: dict[str, Any] = field(default_factory=dict)
    inputs: dict[str, str] = field(default_factory=dict)  # resolved endpoint/workload paths

    def selected(self) -> list[PointPlan]:
        """The points this shard runs (every point when unsharded)."""
        if not self.shard:
            return self.points
        index, count = parse_shard(self.shard)
        return [p for p in self.points if p.index % count == index - 1]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(doc: dict[str, Any]) -> Plan:
        points = [
            PointPlan(**{**p, "requests": [PlannedRequest(**r) for r in p["requests"]]})
            for p in doc["points"]
        ]
        known = set(Plan.__dataclass_fields__)
        return Plan(**{**{k: v for k, v in doc.items() if k in known}, "points": points})


def parse_shard(spec: str) -> tuple[int, int]:
    """(I, N) from "I/N" with 1 <= I <= N; InputError otherwise."""
    try:
        left, right = spec.split("/")
        index, count = int(left), int(right)
    except ValueError:
        raise InputError(f"--shard {spec!r}: write it as I/N, e.g. 1/4") from None
    if not 1 <= index <= count:
        raise InputError(f"--shard {spec!r}: I must be between 1 and N")
    return index, count


def rate_id(rate: float) -> str:
    return "r" + f"{rate:g}".replace("+", "")


def build_plan(
    workload: ServingWorkload, run_id: str, quick: bool, shard: str | None = None
) -> Plan:
    """The plan for a workload (every point; `selected()` applies the shard)."""
    if shard:
        parse_shard(shard)
        if workload.pattern == "burst" and shard.split("/")[1] != "1":
            raise InputError(
                f"--shard {shard}: a burst is one timeline and cannot be split; run it whole"
            )
    load = workload.load
    q = workload.quick if quick else {}
    seed = workload.seed
    points: list[PointPlan] = []
    burst = None
    if workload.pattern == "concurrency":
        n = int(q.get("requests_per_point", load["requests_per_point"]))
        warm = int(q.get("warmup_requests", load.get("warmup_requests", 0)))
        for index, level in enumerate(load["concurrency"]):
            pid = f"c{level}"
            # At least one measured request per worker, or the point never reaches its level.
            reqs = _requests(workload, pid, warm, max(n, int(level)))
            points.append(PointPlan(id=pid, index=index, requests=reqs, concurrency=int(level)))
    elif workload.pattern == "poisson":
        n = int(q.get("requests_per_point", load["requests_per_point"]))
        warm = int(q.get("warmup_requests", load.get("warmup_requests", 0)))
        for index, rate in enumerate(load["rates_rps"]):
            pid = rate_id(float(rate))
            reqs = _requests(workload, pid, warm, n)
            rng = random.Random(f"{seed}:schedule:{pid}")
            t = 0.0
            for req in reqs:
                req.offset_s = round(t, 9)
                t += rng.expovariate(float(rate))
            points.append(PointPlan(id=pid, index=index, requests=reqs, rate=float(rate)))
    elif workload.pattern == "burst":
        points, burst = _burst_points(workload, float(q.get("time_scale", 1.0)) if quick else 1.0)
    else:  # the schema admits no other pattern
        raise InputError(f"{workload.path}:/load/pattern: unknown pattern {workload.pattern!r}")
    return Plan(
        run_id=run_id,
        workload_id=workload.id,
        workload_sha256=workload.sha256,
        pattern=workload.pattern,
        seed=seed,
        quick=quick,
        points=points,
        shard=shard,
        burst=burst,
    )


def _requests(workload: ServingWorkload, pid: str, warm: int, n: int) -> list[PlannedRequest]:
    rng = random.Random(f"{workload.seed}:lengths:{pid}")
    dist = workload.prompts["input_tokens"]
    out = []
    for seq in range(warm + n):
        out.append(
            PlannedRequest(
                request_id=f"{pid}-{seq:05d}",
                point=pid,
                seq=seq,
                warmup=seq < warm,
                input_tokens=draw_length(dist, rng),
            )
        )
    return out


def _burst_points(
    workload: ServingWorkload, scale: float
) -> tuple[list[PointPlan], dict[str, Any]]:
    load = workload.load
    base = float(load["base_rate_rps"])
    spike = base * float(load["spike_factor"])
    lengths = [
        float(load["base_s"]) * scale,
        float(load["spike_s"]) * scale,
        float(load["recovery_s"]) * scale,
    ]
    bounds = [0.0, lengths[0], lengths[0] + lengths[1], sum(lengths)]
    rates = [base, spike, base]
    rng = random.Random(f"{workload.seed}:schedule:burst")
    length_rng = random.Random(f"{workload.seed}:lengths:burst")
    dist = workload.prompts["input_tokens"]
    points = [
        PointPlan(
            id=name,
            index=i,
            requests=[],
            rate=rates[i],
            phase=name,
            start_s=bounds[i],
            end_s=bounds[i + 1],
        )
        for i, name in enumerate(BURST_PHASES)
    ]
    t = 0.0
    while t < bounds[3]:
        phase = 0 if t < bounds[1] else 1 if t < bounds[2] else 2
        point = points[phase]
        seq = len(point.requests)
        point.requests.append(
            PlannedRequest(
                request_id=f"{point.id}-{seq:05d}",
                point=point.id,
                seq=seq,
                warmup=False,
                input_tokens=draw_length(dist, length_rng),
                offset_s=round(t, 9),
            )
        )
        t += rng.expovariate(rates[phase])
    window = float(load.get("recovery_window_s", 5.0)) * scale
    return points, {"window_s": window, "end_s": bounds[3]}
