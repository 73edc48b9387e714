"""What every check module shares: the registry of check ids, and tolerant comparison.

Every semantic check has an id (`group.name`), a severity and a sentence a contributor can
act on; `CHECKS` lists them so the docs and the tests can enumerate them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

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
