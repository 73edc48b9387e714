"""`plausible.tps-per-user`: a point's per-user speed against the fastest inter-token gap
its journal shows. Events that arrive in one read share a timestamp (a gap of 0); a real
run with such reads must pass, and a forged speed must still be refused."""

from __future__ import annotations

from typing import Any

from epbench.core.metrics.latency import tpot_ms
from epbench.generator.checks.plausible.fastest_gap import check_fastest_gap

MS = 1_000_000  # ns


def request(first_ms: float, gaps_us: list[int], tokens: int) -> dict[str, Any]:
    first = int(first_ms * MS)
    return {"type": "request", "class": "ok", "point": "c8", "output_tokens": tokens,
            "t_first_ns": first, "t_last_ns": first + sum(gaps_us) * 1000, "itl_us": gaps_us}


RECORDS = [
    # two events per read now and then (gap 0): 9 tokens in 1.0 ms gaps -> TPOT 0.75 ms
    request(0, [1000, 0, 1000, 0, 1000, 0, 1000, 1000, 1000], 10),
    request(50, [1100] * 9, 10),  # one event a read: TPOT 1.1 ms
]


def speed(tpot: float) -> dict[str, Any]:
    return {"points": [{"id": "c8", "tps_per_user": 1000 / tpot}]}


def test_a_run_whose_reads_carried_two_events_passes_at_its_own_speed() -> None:
    fastest_tpot = min(t for t in map(tpot_ms, RECORDS) if t is not None)
    assert fastest_tpot < 1.0  # faster than any gap between reads: the old rule refused it
    assert check_fastest_gap(speed(fastest_tpot), RECORDS, "r.json") == []


def test_a_speed_no_gap_of_the_journal_allows_is_still_refused() -> None:
    findings = check_fastest_gap(speed(0.5), RECORDS, "r.json")
    assert [(f.check, f.pointer) for f in findings] == [
        ("plausible.tps-per-user", "/points/0/tps_per_user")]
