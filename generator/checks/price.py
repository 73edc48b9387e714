"""Whether a price card fits: a serviced endpoint carries a per-token card (input and output
USD per Mtok), and the card pinned in a result was already in force when the run started.
"""

from __future__ import annotations

from typing import Any

from epbench.core.findings import Finding
from epbench.core.pricing import cards, is_per_token
from epbench.generator.checks.base import Subject, check, on_endpoint, on_result
from epbench.generator.checks.date import parse_day, run_date

SERVICED_CARD = check(
    "price.serviced-per-token", "reject",
    "a serviced endpoint carries a per-token price card",
    "give the endpoint's pricing input_usd_per_mtok, output_usd_per_mtok, effective_date and "
    "source_url as the provider publishes them",
)
PRICE_AFTER_RUN = check(
    "price.effective-after-run", "reject",
    "the pinned price card took effect no later than the run date",
    "pin the price card that was in force on the run date (its effective_date <= the run date)",
)


def check_card(doc: dict[str, Any], file: str, pointer: str = "") -> list[Finding]:
    """An endpoint block's card (a whole endpoint file, or /endpoint inside a result)."""
    out: list[Finding] = []
    if doc.get("division") == "serviced" and not all(
        is_per_token(card) for card in cards(doc.get("pricing", {}))
    ):
        out.append(SERVICED_CARD.at(
            file, f"{pointer}/pricing", "a serviced endpoint has no per-token price card"
        ))
    return out


def check_effective(result: dict[str, Any], file: str) -> list[Finding]:
    """The pinned card's effective_date against the run date (an unreadable date is
    `date.format`, epbench.generator.checks.date)."""
    pricing = result["endpoint"].get("pricing", {})
    effective = parse_day(str(pricing.get("effective_date", "")))
    day = run_date(result)
    if effective is not None and day is not None and effective > day:
        return [PRICE_AFTER_RUN.at(
            file, "/endpoint/pricing/effective_date",
            f"the price card took effect on {effective}, after the run ({day})",
        )]
    return []


@on_result(80)
def _on_result_date(s: Subject) -> list[Finding]:
    return check_effective(s.doc, s.file)


@on_result(90)
def _on_result_card(s: Subject) -> list[Finding]:
    return check_card(s.doc["endpoint"], s.file, "/endpoint")


@on_endpoint(10)
def _on_endpoint(s: Subject) -> list[Finding]:
    return check_card(s.doc, s.file)
