"""What a result's division and settings mean for ranking, and whether its price card fits.

- serviced endpoints carry a per-token price card (input and output USD per Mtok)
- `division: emulated` results are accepted but never ranked
- `--quick` results are accepted; readers are told the points were shortened
"""

from __future__ import annotations

from typing import Any

from epbench.core.findings import Finding
from epbench.core.pricing import cards, is_per_token
from epbench.generator.checks.base import check

SERVICED_CARD = check(
    "price.serviced-per-token", "reject",
    "a serviced endpoint carries a per-token price card",
    "give the endpoint's pricing input_usd_per_mtok, output_usd_per_mtok, effective_date and "
    "source_url as the provider publishes them",
)
EMULATED = check(
    "division.emulated", "warn", "emulated results are accepted but never ranked",
    "nothing to fix: emulated results are shown only when a reader asks for them",
)
QUICK = check(
    "settings.quick", "warn", "quick runs shorten every point",
    "for a leaderboard entry, run without --quick",
)


def check_division(doc: dict[str, Any], file: str, pointer: str = "") -> list[Finding]:
    """Checks on an endpoint block (a whole endpoint file, or /endpoint inside a result)."""
    out: list[Finding] = []
    if doc.get("division") == "serviced" and not all(
        is_per_token(card) for card in cards(doc.get("pricing", {}))
    ):
        out.append(SERVICED_CARD.at(
            file, f"{pointer}/pricing", "a serviced endpoint has no per-token price card"
        ))
    return out


def check_ranking(result: dict[str, Any], file: str) -> list[Finding]:
    out: list[Finding] = []
    if result["endpoint"].get("division") == "emulated":
        out.append(EMULATED.at(
            file, "/endpoint/division", "division is emulated: accepted, never ranked"
        ))
    if result["settings"].get("quick"):
        out.append(QUICK.at(file, "/settings/quick", "this run used --quick (shortened points)"))
    return out
