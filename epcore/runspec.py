"""What a run measured, as the summarizer needs it: the points and the run's constants.

The runner writes this as the first line of its journal (`{"type": "run", "spec": ...}`), so
the journal alone is enough to recompute every figure of the result: the validator reads the
spec back with `RunSpec.from_json` and calls the same summarizer the runner called.

    pattern   concurrency | poisson | burst
    seed      the workload's seed (bootstrap seeds derive from it and each point's index)
    slo       the workload's SLOs (goodput)
    points    id, index in the plan, concurrency or rate, burst phase and its span
    burst     {"window_s", "end_s"} of a burst plan, else None
    offsets   burst plans only: each request's planned offset on the burst timeline
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class PointSpec:
    id: str
    index: int
    concurrency: int | None = None
    rate: float | None = None
    phase: str | None = None
    start_s: float | None = None
    end_s: float | None = None


@dataclass
class RunSpec:
    pattern: str
    seed: int
    points: list[PointSpec]
    slo: dict[str, float] = field(default_factory=dict)
    burst: dict[str, Any] | None = None
    offsets: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(doc: Any) -> RunSpec:
        """The spec from its JSON form; ValueError naming what is wrong."""
        if not isinstance(doc, dict):
            raise ValueError("the run spec is not an object")
        try:
            points = [PointSpec(**p) for p in doc["points"]]
            spec = RunSpec(
                pattern=str(doc["pattern"]),
                seed=int(doc["seed"]),
                points=points,
                slo={str(k): float(v) for k, v in (doc.get("slo") or {}).items()},
                burst=doc.get("burst"),
                offsets={str(k): float(v) for k, v in (doc.get("offsets") or {}).items()},
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"the run spec is malformed ({type(exc).__name__}: {exc})") from None
        for point in spec.points:
            if not isinstance(point.id, str) or not isinstance(point.index, int):
                raise ValueError("a point of the run spec has no string id or integer index")
        if spec.burst is not None and not isinstance(spec.burst, dict):
            raise ValueError("the run spec's burst is not an object")
        return spec
