"""What a result's division means for ranking: `division: emulated` results are accepted but
never ranked (the price card a division needs is epbench.generator.checks.price, the `--quick`
note epbench.generator.checks.settings).
"""

from __future__ import annotations

from typing import Any

from epbench.core.findings import Finding
from epbench.generator.checks.base import Subject, check, on_result

EMULATED = check(
    "division.emulated", "warn", "emulated results are accepted but never ranked",
    "nothing to fix: emulated results are shown only when a reader asks for them",
)


def check_emulated(result: dict[str, Any], file: str) -> list[Finding]:
    """A note on an emulated result: accepted, never ranked."""
    if result["endpoint"].get("division") == "emulated":
        return [EMULATED.at(
            file, "/endpoint/division", "division is emulated: accepted, never ranked"
        )]
    return []


@on_result(100)
def _on_result(s: Subject) -> list[Finding]:
    return check_emulated(s.doc, s.file)
