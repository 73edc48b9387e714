"""Load patterns as a plan: every request a run will send, decided before the first is sent.

The points are drawn by `epbench.core.workload_plan` (which `epbench validate` also rebuilds to
compare with a journal); this module gives each request its own record for the run:

    concurrency  one point per level `c`: warm-up requests then max(`requests_per_point`, c)
                 measured ones, sent closed-loop by `c` workers (a worker sends its next
                 request when its last one finished)
    poisson      one point per rate `r`: arrival offsets drawn as exponential gaps with mean
                 1/r from a generator seeded by (seed, point), warm-up arrivals first
    burst        three points on one timeline: base (base rate), spike (base x factor),
                 recovery (base rate); arrivals are exponential gaps at the rate of the phase
                 the previous arrival fell in; --quick multiplies the phase lengths by
                 `quick.time_scale`
    trace        one point, `trace`: a window of a request trace at its (scaled) arrival
                 times, each request with the trace's input and output lengths (capped) and,
                 Mooncake, its prefix-block hash ids (epbench.core.trace_plan)
    conversation sessions of several turns, one request per turn, each with its session,
                 turn and think time (epbench.core.conversation_plan; epbench.runner.conversation
                 sends them)

The plan is written to runs/<run-id>/plan.json. It holds each request's id, point, sequence
number, warm-up flag, prompt length, planned arrival offset and (shared prefixes) the name of
its prefix; the prompt text is rebuilt from (seed, request id, length, prefix) by
`epbench.runner.prompts`, so `--resume` sends the same bytes.
Sharding ("I/N") keeps the points whose index % N == I-1.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from epbench.core.conversation_plan import conversation_points
from epbench.core.errors import InputError
from epbench.core.journal_records import RunLine, run_line
from epbench.core.runspec import PointSpec, RunSpec
from epbench.core.trace_plan import load_trace, project_root, trace_point
from epbench.core.workload_plan import (
    BURST_PHASES,
    PlannedPoint,
    plan_points,
    rate_id,
    shared_prefix_key,
)
from epbench.runner.workload import ServingWorkload

PLAN_VERSION = 1
_CONVERSATION_FIELDS = ("session", "turn", "think_s")
__all__ = ["BURST_PHASES", "Plan", "PlannedRequest", "PointPlan", "build_plan", "parse_shard",
           "rate_id"]


@dataclass
class PlannedRequest:
    request_id: str
    point: str
    seq: int
    warmup: bool
    input_tokens: int
    offset_s: float | None = None  # open loop: planned arrival, seconds from the point's start
    prefix: str | None = None  # shared prefixes: the name of the prefix this request sends
    max_tokens: int | None = None  # trace: this request's output length (else the workload's)
    hash_ids: list[int] | None = None  # Mooncake trace: the request's 512-token prefix blocks
    # --- conversation turns (epbench.core.conversation_plan); None for other patterns ---
    session: int | None = None
    turn: int | None = None
    think_s: float | None = None
    # --- end of conversation turns ---


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
        doc = asdict(self)
        if self.pattern != "conversation":  # plans of other patterns stay as they were
            for point in doc["points"]:
                for request in point["requests"]:
                    for key in _CONVERSATION_FIELDS:
                        request.pop(key, None)
        return doc

    def spec(self, slo: dict[str, float] | None = None) -> RunSpec:
        """What the summarizer needs of this plan's selected points (epbench.core.runspec)."""
        points = self.selected()
        offsets: dict[str, float] = {}
        if self.pattern == "burst":
            offsets = {r.request_id: float(r.offset_s or 0.0) for p in points for r in p.requests}
        return RunSpec(
            pattern=self.pattern,
            seed=self.seed,
            points=[
                PointSpec(p.id, p.index, p.concurrency, p.rate, p.phase, p.start_s, p.end_s)
                for p in points
            ],
            slo=dict(slo or {}),
            burst=self.burst,
            offsets=offsets,
        )

    def run_line(self, slo: dict[str, float] | None = None) -> RunLine:
        """The journal's run line of this plan: its spec (the run's and `epbench merge`'s)."""
        return run_line(spec=self.spec(slo).to_json())

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
    shared = workload.prompts.get("shared_prefix")
    if workload.pattern == "trace":
        planned, burst = [_trace_point(workload, quick)], None
    elif workload.pattern == "conversation":
        planned, burst = conversation_points(workload.seed, workload.load,
                                             workload.prompts["input_tokens"],
                                             workload.quick if quick else {}), None
    elif workload.pattern not in ("concurrency", "poisson", "burst"):  # the schema admits no other
        raise InputError(f"{workload.path}:/load/pattern: unknown pattern {workload.pattern!r}")
    else:
        planned, burst = plan_points(workload.pattern, workload.seed, workload.load,
                                     workload.prompts["input_tokens"], workload.quick, quick,
                                     shared)
    points = [_point_plan(p) for p in planned]
    if shared:
        name_prefixes(points, shared)
    seed = workload.seed
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


def _trace_point(workload: ServingWorkload, quick: bool) -> PlannedPoint:
    """The one point of a trace replay (epbench.core.trace_plan), from the trace file the
    workload names, its sha256 checked."""
    where = str(workload.path)
    trace = load_trace(workload.load["trace"], project_root(workload.path), where)
    return trace_point(workload.load, trace, workload.max_tokens, workload.quick, quick, where)


def _point_plan(point: PlannedPoint) -> PointPlan:
    """The runner's view of a planned point: one PlannedRequest per request."""
    offsets, outputs, blocks = point.offsets, point.outputs, point.hash_ids
    requests = [
        PlannedRequest(request_id=point.request_id(seq), point=point.id, seq=seq,
                       warmup=seq < point.warmup, input_tokens=int(length),
                       offset_s=None if offsets is None else offsets[seq],
                       max_tokens=None if outputs is None else int(outputs[seq]),
                       hash_ids=None if blocks is None else list(blocks[seq]))
        for seq, length in enumerate(point.lengths)
    ]
    turns = point.conversation
    if turns is not None:
        for seq, req in enumerate(requests):
            req.session, req.turn = turns.session[seq], turns.turn[seq]
            req.think_s = turns.think_s[seq]
    return PointPlan(id=point.id, index=point.index, requests=requests,
                     concurrency=point.concurrency, rate=point.rate, phase=point.phase,
                     start_s=point.start_s, end_s=point.end_s)


# --- shared prefixes (prompts.shared_prefix) ---
def name_prefixes(points: list[PointPlan], shared: dict[str, Any]) -> None:
    """Name each request's prefix (epbench.core.workload_plan.shared_prefix_key), in place."""
    for point in points:
        warmup = sum(1 for r in point.requests if r.warmup)
        for r in point.requests:
            r.prefix = shared_prefix_key(point.id, r.seq, warmup, shared)
# --- end of shared prefixes ---
