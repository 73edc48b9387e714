"""Dates are plausible: readable, not in the future, and a run ends after it starts (that the
pinned price card was in force by the run date is epbench.generator.checks.price).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

from epbench.core.findings import Finding
from epbench.generator.checks.base import Subject, check, on_result

FUTURE_SLACK = timedelta(days=1)

FUTURE = check(
    "date.future", "reject", "no date lies in the future (one day of slack for time zones)",
    "set the real run date; a result cannot come from the future",
)
ORDER = check(
    "date.order", "reject", "finished_at is not before started_at",
    "finished_at must be at or after started_at",
)
UNPARSEABLE = check(
    "date.format", "reject", "dates are ISO 8601 (RFC 3339) with a time zone",
    "write dates like 2026-11-29T21:00:00Z",
)


def parse_instant(text: str) -> datetime | None:
    """An aware datetime from ISO 8601 text (naive values are taken as UTC), or None."""
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value


def parse_day(text: str) -> date | None:
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def run_date(result: dict[str, Any]) -> date | None:
    """The UTC calendar date a result started on."""
    started = parse_instant(str(result.get("started_at", "")))
    return started.astimezone(UTC).date() if started else None


def check_dates(result: dict[str, Any], file: str, now: datetime | None = None) -> list[Finding]:
    out: list[Finding] = []
    now = now or datetime.now(UTC)
    limit = now + FUTURE_SLACK
    started = parse_instant(result["started_at"])
    finished = parse_instant(result["finished_at"])
    for key, value in (("started_at", started), ("finished_at", finished)):
        if value is None:
            out.append(UNPARSEABLE.at(file, f"/{key}", f"{key} is not an ISO 8601 date-time"))
        elif value > limit:
            out.append(FUTURE.at(file, f"/{key}", f"{key} ({result[key]}) is in the future"))
    if started and finished and finished < started:
        out.append(ORDER.at(file, "/finished_at", "finished_at is before started_at"))
    pricing = result["endpoint"].get("pricing", {})
    effective = parse_day(str(pricing.get("effective_date", "")))
    if effective is None:
        out.append(UNPARSEABLE.at(
            file, "/endpoint/pricing/effective_date",
            "the price card's effective_date is not a date",
            "write effective_date as YYYY-MM-DD",
        ))
    elif effective > limit.date():
        out.append(FUTURE.at(
            file, "/endpoint/pricing/effective_date",
            f"the price card's effective_date ({effective}) is in the future",
        ))
    return out


@on_result(70)
def _on_result(s: Subject) -> list[Finding]:
    return check_dates(s.doc, s.file, now=s.now)
