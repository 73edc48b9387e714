"""epbench.core.rankable: one function decides what is ranked, and says why not."""

from __future__ import annotations

import copy
import json
from typing import Any

from epbench.core.provenance import ATTESTED, Provenance, self_reported
from epbench.core.rankable import REASONS, Reason
from epbench.core.rankable import rankability as tiered
from tests.conftest import ROOT

SERVICED = json.loads((ROOT / "tests/data/results/alice/acme-llama-8b/"
                       "2026-11-20-chat-short-a1b2c3d4.json").read_text())
AGENTIC = json.loads((ROOT / "tests/data/results/bob/acme-llama-8b/"
                      "2026-11-22-tool-lookup-c3d4e5f6.json").read_text())
PINNED = {"sha256": "0" * 64, "lines": 10, "bytes": 100}
SCHEDULED = Provenance(ATTESTED, "signed by epbench/epbench/.github/workflows/benchmark.yml")


def rankability(doc: dict[str, Any], limits: dict[str, Any] | None = None) -> list[Reason]:
    """The reasons of an attested result (the tier's own reason is tested on its own)."""
    return tiered(doc, limits, SCHEDULED)


def ranked(doc: dict[str, Any]) -> dict[str, Any]:
    """A copy that pins a journal (validated results with one are what the board ranks)."""
    out = copy.deepcopy(doc)
    out["evidence"] = PINNED
    out["round_trips"] = {"samples": 5, "min_ms": 0.5, "median_ms": 0.6}
    for point in out.get("points") or []:
        point["ttft_ms"]["n"] = max(point["ttft_ms"]["n"], 64)
    return out


def codes(doc: dict[str, Any], limits: dict[str, Any] | None = None) -> list[str]:
    return [reason.code for reason in rankability(doc, limits)]


def test_a_result_with_its_journal_and_enough_clean_samples_is_ranked() -> None:
    assert rankability(ranked(SERVICED)) == []


def test_a_self_reported_result_is_not_ranked_and_its_reason_comes_first() -> None:
    doc = ranked(SERVICED)
    (reason,) = tiered(doc, None, self_reported("no attestation bundle"))
    assert (reason.code, reason.text) == ("self-reported", "self-reported: no attestation bundle")
    doc["endpoint"] = {**doc["endpoint"], "division": "emulated"}
    assert [r.code for r in tiered(doc)] == ["self-reported", "emulated"]  # no tier given


def test_a_journal_without_measured_round_trips_is_not_ranked() -> None:
    doc = ranked(SERVICED)
    del doc["round_trips"]
    (reason,) = rankability(doc)
    assert reason.code == "no-rtt"


def test_results_written_before_journals_are_shown_but_not_ranked() -> None:
    (reason,) = rankability(SERVICED | {"points": ranked(SERVICED)["points"]})
    assert (reason.code, reason.text) == ("no-evidence", "no evidence (no journal submitted)")


def test_emulated_quick_and_imported_results_are_not_ranked() -> None:
    doc = ranked(SERVICED)
    doc["endpoint"] = {**doc["endpoint"], "division": "emulated"}
    doc["settings"] = {**doc["settings"], "quick": True}
    doc["source"] = {"format": "vllm-bench"}
    assert codes(doc) == ["emulated", "quick", "imported"]


def test_the_error_rate_limit_defaults_to_five_percent_and_a_workload_may_set_its_own() -> None:
    doc = ranked(SERVICED)
    doc["points"][1]["requests"].update(completed=700, failed=100)  # 100 of 900 failed
    (reason,) = rankability(doc)
    assert reason.code == "error-rate" and reason.text == "error rate 11.1% above the 5% limit"
    assert codes(doc, {"max_error_rate": 0.2}) == []


def test_every_request_failing_is_its_own_reason() -> None:
    doc = ranked(SERVICED)
    for point in doc["points"]:
        point["requests"].update(completed=0, failed=point["requests"]["issued"])
    assert "all-failed" in codes(doc)


def test_fewer_samples_than_a_p90_needs_is_not_ranked() -> None:
    doc = ranked(SERVICED)
    doc["points"][0]["ttft_ms"]["n"] = 63
    (reason,) = rankability(doc)
    assert reason.code == "thin-sample" and "at c1" in reason.text


def test_a_harness_fault_or_a_long_resume_gap_is_not_ranked() -> None:
    doc = ranked(AGENTIC)
    doc["agentic"]["decision_ms"]["n"] = 64
    assert codes(doc) == []
    doc["agentic"]["harness_faults"] = [{"task": "t", "trial": 0, "message": "boom"}]
    assert codes(doc) == ["harness-fault"]
    serving = ranked(SERVICED)
    serving["resumes"] = [{"at": "2026-11-20T10:02:00Z", "gap_s": 301.0}]
    assert codes(serving) == ["resume-gap"]
    assert codes(serving, {"max_resume_gap_s": 600}) == []


def test_every_reason_code_is_documented() -> None:
    import epbench.core.rankable as module

    assert all(code in (module.__doc__ or "") for code in REASONS)
