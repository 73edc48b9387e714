"""What a result's run settings tell a reader: `--quick` results are accepted, and readers are
told the points were shortened.
"""

from __future__ import annotations

from typing import Any

from epbench.core.findings import Finding
from epbench.generator.checks.base import Subject, check, on_result

QUICK = check(
    "settings.quick", "warn", "quick runs shorten every point",
    "for a leaderboard entry, run without --quick",
)


def check_quick(result: dict[str, Any], file: str) -> list[Finding]:
    """A note on a `--quick` run."""
    if result["settings"].get("quick"):
        return [QUICK.at(file, "/settings/quick", "this run used --quick (shortened points)")]
    return []


@on_result(110)
def _on_result(s: Subject) -> list[Finding]:
    return check_quick(s.doc, s.file)
