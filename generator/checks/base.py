"""What every check module shares: the registry of check ids, the registry of what runs, and
tolerant comparison.

Every semantic check has an id (`group.name`), a severity and a sentence a contributor can
act on; `CHECKS` lists them so the docs and the tests can enumerate them.

Each group registers the function that runs it, with the scope it runs at and its place in a
fixed order: `on_point` (each point of a result, before the result's own checks),
`on_result` (once per result; `needs_index` only when the validator has the workloads,
`epbench_only` not on imported results) and `on_endpoint` (an endpoint file).
epbench.generator.checks runs what `runners` gives, in that order.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from epbench.core.findings import Finding, Severity

REL_TOLERANCE = 0.01
"""Derived values may differ from what they derive from by 1% (rounding in the writer)."""
ABS_TOLERANCE = 0.01
"""And by 0.01 absolute, so values rounded to two decimals near zero still agree."""


@dataclass(frozen=True)
class Check:
    """One semantic check: id, severity, what it verifies, and the fix to suggest."""

    id: str
    severity: Severity
    description: str
    fix: str

    def at(self, file: str, pointer: str, message: str, fix: str | None = None) -> Finding:
        """A finding of this check at a JSON pointer."""
        return Finding(file, pointer, self.id, self.severity, message, fix or self.fix)


CHECKS: dict[str, Check] = {}


def check(id: str, severity: Severity, description: str, fix: str) -> Check:
    """Register a check (ids are unique across modules)."""
    if id in CHECKS:
        raise ValueError(f"duplicate check id {id}")
    CHECKS[id] = Check(id, severity, description, fix)
    return CHECKS[id]


@dataclass(frozen=True)
class Subject:
    """A schema-valid document the checks run on, with what some of them need."""

    doc: dict[str, Any]
    file: str
    path: Path | None = None  # a result's file (its layout, its journal beside it)
    index: Any = None  # the WorkloadIndex of checks/workload/sha.py (which imports this module)
    now: datetime | None = None
    project: Path | None = None  # an endpoint's project (its workloads)
    imported: bool = False  # a result imported from another tool (`source.format`)


PointRun = Callable[[Subject, str, dict[str, Any]], list[Finding]]
Run = Callable[[Subject], list[Finding]]


@dataclass(frozen=True)
class Runner:
    """One group's function, where it runs and when."""

    scope: str  # "point", "result" or "endpoint"
    order: int
    run: Callable[..., list[Finding]]
    needs_index: bool = False
    epbench_only: bool = False


RUNNERS: list[Runner] = []


def _register(runner: Runner) -> None:
    for other in RUNNERS:
        if other.scope == runner.scope and other.order == runner.order:
            raise ValueError(f"two {runner.scope} runners at order {runner.order}: "
                             f"{other.run.__module__} and {runner.run.__module__}")
    RUNNERS.append(runner)


def on_point(order: int) -> Callable[[PointRun], PointRun]:
    """Register `run(subject, pointer, point)` for each point of a result."""
    def register(run: PointRun) -> PointRun:
        _register(Runner("point", order, run))
        return run
    return register


def on_result(order: int, *, needs_index: bool = False,
              epbench_only: bool = False) -> Callable[[Run], Run]:
    """Register `run(subject)` once per result."""
    def register(run: Run) -> Run:
        _register(Runner("result", order, run, needs_index, epbench_only))
        return run
    return register


def on_endpoint(order: int) -> Callable[[Run], Run]:
    """Register `run(subject)` for an endpoint file."""
    def register(run: Run) -> Run:
        _register(Runner("endpoint", order, run))
        return run
    return register


def runners(scope: str) -> list[Runner]:
    """The runners of a scope, in their order."""
    return sorted((r for r in RUNNERS if r.scope == scope), key=lambda r: r.order)


def close(a: float, b: float, rel: float = REL_TOLERANCE, abs_tol: float = ABS_TOLERANCE) -> bool:
    """True when a and b agree within the stated tolerance; never when either is not finite
    (infinity is not close to anything, not even to a huge number)."""
    if not (math.isfinite(a) and math.isfinite(b)):
        return False
    return abs(a - b) <= max(rel * max(abs(a), abs(b)), abs_tol)


def fmt(value: float | None) -> str:
    """A number as it should appear in a message."""
    if value is None:
        return "null"
    return f"{value:.6g}"
