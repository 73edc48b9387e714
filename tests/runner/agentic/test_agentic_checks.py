"""Tools as data, trial checks, and `epbench validate` on agentic workloads."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from epbench.core.documents import load_document
from epbench.runner.agentic.checks import (
    Observed,
    ObservedCall,
    accepts,
    evaluate,
)
from epbench.runner.agentic.model import load_workload
from epbench.runner.agentic.semantics import validate_workload_semantics
from epbench.runner.agentic.tools import ToolBox, error_kind, sample_latency_s, seeded_rng
from tests.conftest import ROOT

SHIPPED = ROOT / "workloads" / "agentic"


def shipped(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = load_document(SHIPPED / f"{name}.yaml")
    return doc


# ---- tools ---------------------------------------------------------------------------------


def test_a_table_tool_finds_rows_case_insensitively_and_errors_on_a_missing_key():
    box = ToolBox(load_workload(shipped("weather-single-call")), run_seed=0, task="t", trial=0)
    assert '"temperature": 18' in box.call("get_weather", {"city": " paris "}).content
    missing = box.call("get_weather", {"city": "Atlantis"})
    assert missing.is_error and missing.fault is None
    assert error_kind(missing.content) == "tool_error" and "Atlantis" in missing.content


def test_state_updates_apply_to_the_trials_own_copy_and_guards_refuse():
    wl = load_workload(shipped("retail-refund"))
    box = ToolBox(wl, run_seed=0, task="t", trial=0)
    refused = box.call("refund_order", {"order_id": "W1002", "reason": "other"})
    assert refused.is_error and "not delivered" in refused.content
    done = box.call("refund_order", {"order_id": "W1001", "reason": "wrong_size"})
    assert not done.is_error and '"R-W1001"' in done.content
    assert box.state["orders"]["W1001"]["status"] == "refunded"
    assert box.state["refunds"] == [{"order_id": "W1001", "reason": "wrong_size"}]
    assert wl.state["orders"]["W1001"]["status"] == "delivered"  # the workload's state is untouched
    assert ToolBox(wl, run_seed=0, task="t", trial=1).state["refunds"] == []


def test_templates_keep_an_arguments_type_and_increment_adds_it():
    box = ToolBox(load_workload(shipped("inventory-fault-recovery")), run_seed=0, task="t", trial=0)
    box.call("reserve_stock", {"sku": "SKU-7720", "quantity": 2})  # call 1: the seeded timeout
    box.call("reserve_stock", {"sku": "SKU-7720", "quantity": 2})
    assert box.state["stock"]["SKU-7720"]["reserved"] == 2
    assert box.state["reservations"] == [{"sku": "SKU-7720", "quantity": 2}]


def test_faults_on_the_nth_call_are_tool_faults_with_their_kind_and_timeout_latency():
    box = ToolBox(load_workload(shipped("inventory-fault-recovery")), run_seed=0, task="t", trial=0)
    first = box.call("check_stock", {"sku": "SKU-4411"})
    assert (first.fault, error_kind(first.content)) == ("unavailable", "tool_fault")
    assert "503" in first.content
    assert box.call("check_stock", {"sku": "SKU-4411"}).fault is None
    timeout = box.call("reserve_stock", {"sku": "SKU-4411", "quantity": 1})
    assert timeout.fault == "timeout" and timeout.latency_s == pytest.approx(0.06)


def test_probability_faults_and_latency_are_seeded_per_trial_and_call():
    doc = shipped("weather-single-call")
    doc["tools"][0]["faults"] = [{"probability": 0.5, "kind": "error"}]
    wl = load_workload(doc)

    def pattern(trial: int) -> list[tuple[bool, float]]:
        box = ToolBox(wl, run_seed=3, task="t", trial=trial)
        return [
            (r.fault is not None, r.latency_s)
            for r in (box.call("get_weather", {"city": "Paris"}) for _ in range(12))
        ]

    assert pattern(0) == pattern(0)
    assert pattern(0) != pattern(1)
    assert 0 < sum(f for f, _ in pattern(0)) < 12


def test_lognormal_latency_has_the_asked_median_and_p99():
    rng = seeded_rng("lat")
    draws = sorted(sample_latency_s({"p50_ms": 20, "p99_ms": 80}, rng) for _ in range(20000))
    assert draws[10000] * 1000 == pytest.approx(20, rel=0.05)
    assert draws[19800] * 1000 == pytest.approx(80, rel=0.1)
    assert sample_latency_s({"fixed_ms": 15}, rng) == 0.015


# ---- checks --------------------------------------------------------------------------------


def checks_of(name: str, task: int = 0):
    return load_workload(shipped(name)).tasks[task].checks


def test_accepted_values_compare_strings_loosely_numbers_by_value_and_never_true_as_1():
    assert accepts(["Sao Paulo", "São Paulo"], "são  paulo")
    assert accepts(4, 4.0)
    assert not accepts(1, True)
    assert accepts([["a", "b"]], ["A", "b"])  # a list-valued argument is accepted inside a list


def test_order_partial_needs_the_expected_calls_in_order():
    checks = checks_of("retail-refund")
    state = {
        "orders": {"W1001": {"status": "refunded"}, "W1002": {"status": "shipped"}},
        "refunds": [{"order_id": "W1001"}],
    }
    good = [
        ObservedCall("get_order", {"order_id": "W1001"}),
        ObservedCall("refund_order", {"order_id": "W1001", "reason": "wrong_size"}),
    ]
    assert evaluate(checks, Observed(good, ["Your refund is done"], state)) == []
    failed = evaluate(checks, Observed(good[::-1], ["Your refund is done"], state))
    assert failed == [
        "calls[1]: expected in order "
        'refund_order(order_id="W1001", reason=["wrong_size", "other"]), not made',
        'extra_calls: unexpected call refund_order({"order_id": "W1001", "reason": "wrong_size"})',
    ]


def test_extra_calls_false_rejects_invalid_calls_but_excuses_faulted_ones():
    checks = checks_of("weather-single-call")
    call = ObservedCall("get_weather", {"city": "Paris"})
    reply = ["18 degrees"]
    assert (
        evaluate(
            checks,
            Observed([ObservedCall("get_weather", {"city": "Paris"}, faulted=True), call], reply),
        )
        == []
    )
    failed = evaluate(
        checks, Observed([ObservedCall("get_weather", None, "invalid_json"), call], reply)
    )
    assert failed == ["extra_calls: invalid call get_weather (invalid_json)"]


def test_forbidden_state_and_reply_checks_each_fail_with_one_line():
    checks = checks_of("travel-tool-choice")
    failed = evaluate(
        checks,
        Observed([ObservedCall("search_hotels", {"city": "Berlin", "nights": 1})], ["nothing"]),
    )
    assert failed == [
        "calls[0]: expected "
        'search_flights(origin="LIS", destination="BER", date="2026-12-18"), not made',
        "forbidden: search_hotels was called",
        'reply_contains: "EB 412" or "129" not in the final reply',
    ]
    state_checks = checks_of("restaurant-clarify")
    out = evaluate(state_checks, Observed([], ["LG-4-1930"], {"bookings": []}))
    assert "state /bookings/0/party_size: missing, expected 4" in out


# ---- validate ------------------------------------------------------------------------------


def test_every_shipped_workload_passes_its_semantic_checks_and_there_are_eight_categories():
    docs = [load_document(p) for p in sorted(SHIPPED.glob("*.yaml"))]
    assert len(docs) >= 8
    assert {d["category"] for d in docs} >= {
        "single-call",
        "tool-choice",
        "parallel",
        "multi-turn-state",
        "no-tool",
        "clarify",
        "fault-recovery",
        "long-output",
    }
    for path, doc in zip(sorted(SHIPPED.glob("*.yaml")), docs, strict=True):
        assert validate_workload_semantics(doc, str(path)) == [], path


def broken(name: str, edit) -> dict[str, Any]:
    doc = copy.deepcopy(shipped(name))
    edit(doc)
    return doc


def lines(doc: dict[str, Any]) -> list[str]:
    return [f.line() for f in validate_workload_semantics(doc, "w.yaml")]


def test_an_undefined_tool_is_one_line_naming_where():
    doc = broken(
        "retail-refund", lambda d: d["tasks"][0]["checks"]["calls"][0].update(tool="lookup_order")
    )
    assert lines(doc) == [
        "w.yaml:/tasks/0/checks/calls/0/tool: reject: [agentic.unknown-tool] tool 'lookup_order' "
        "is not defined in `tools` -- define the tool or fix the name"
    ]


def test_a_bad_state_path_is_one_line():
    doc = broken(
        "retail-refund",
        lambda d: d["tools"][1]["implementation"]["updates"][0].update(
            path="/order/{order_id}/status"
        ),
    )
    out = lines(doc)
    assert len(out) == 1 and out[0].startswith(
        "w.yaml:/tools/1/implementation/updates/0/path: reject: [agentic.state-path]"
    )


def test_a_reference_that_fails_its_own_checks_is_one_line():
    doc = broken(
        "retail-refund",
        lambda d: d["tasks"][0]["reference"][1]["calls"][0]["arguments"].update(order_id="W1002"),
    )
    out = lines(doc)
    assert (
        len(out) == 1
        and "[agentic.reference-fails] the reference path fails its own checks" in out[0]
    )
    assert out[0].startswith("w.yaml:/tasks/0/reference:")


def test_an_accepted_value_outside_the_parameter_schema_is_one_line():
    doc = broken(
        "retail-refund",
        lambda d: d["tasks"][0]["checks"]["calls"][1]["arguments"].update(reason="broken"),
    )
    out = lines(doc)
    assert len(out) == 1 and "[agentic.argument-schema]" in out[0] and "/arguments/reason" in out[0]


def test_epbench_validate_passes_the_shipped_folder_and_rejects_broken_files(tmp_path: Path):
    ok = subprocess.run(
        [sys.executable, "-m", "epbench.cli", "validate", str(SHIPPED)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "a.yaml").write_text(
        yaml.safe_dump(
            broken(
                "retail-refund", lambda d: d["tasks"][0]["checks"]["calls"][0].update(tool="nope")
            )
        )
    )
    (bad / "b.yaml").write_text(
        yaml.safe_dump(
            broken(
                "retail-refund",
                lambda d: d["tasks"][1]["checks"]["state"][0].update(path="/order/W1003/address"),
            )
        )
    )
    out = subprocess.run(
        [sys.executable, "-m", "epbench.cli", "validate", str(bad)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1
    assert "a.yaml:/tasks/0/checks/calls/0/tool: reject: [agentic.unknown-tool]" in out.stdout
    assert "b.yaml:/tasks/1/checks/state/0/path: reject: [agentic.state-path]" in out.stdout
