"""The disclosure score: the share of reproducibility fields a result carries, field by field."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from epbench.core.findings import Finding
from epbench.generator.disclosure import disclosure
from epbench.generator.validate import validate_paths
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data" / "results"
SERVICED = json.loads(
    (DATA / "alice/acme-llama-8b/2026-11-20-chat-short-a1b2c3d4.json").read_text()
)
SELF_HOSTED = json.loads(
    (DATA / "alice/alice-h100-vllm/2026-11-21-chat-short-b2c3d4e5.json").read_text()
)


def test_a_complete_serviced_result_discloses_all_18_fields() -> None:
    score = disclosure(SERVICED)
    assert score.score == 1.0
    assert len(score.fields) == 18  # 17 common + the rate-limit tier
    assert "rate_limit_tier" in score.present


def test_missing_fields_lower_the_score_and_are_named() -> None:
    doc = copy.deepcopy(SERVICED)
    del doc["client"]["region"]
    doc["settings"]["temperature"] = None
    del doc["harness"]["git_sha"]
    del doc["endpoint"]["rate_limits"]
    score = disclosure(doc)
    assert score.missing == ["client_region", "temperature", "harness_git_sha",
                             "rate_limit_tier"]
    assert score.score == pytest.approx(round(14 / 18, 4))


def test_a_snapshot_date_counts_as_the_model_version() -> None:
    doc = copy.deepcopy(SERVICED)
    doc["endpoint"]["model"] = {"name": "m", "snapshot_date": "2026-01-02"}
    assert "model_version" in disclosure(doc).present
    doc["endpoint"]["model"] = {"name": "m", "version": "  "}
    assert "model_version" in disclosure(doc).missing


def test_self_hosted_results_disclose_hardware_and_engine_instead_of_a_tier() -> None:
    score = disclosure(SELF_HOSTED)
    names = [f.name for f in score.fields]
    assert "hardware" in names and "engine" in names and "rate_limit_tier" not in names
    assert score.score == 1.0


def test_a_result_in_yaml_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "result.yaml"
    path.write_text(json.dumps(SERVICED))  # JSON is valid YAML
    assert "file.format" in {f.check for f in validate_paths([path]).findings}


def test_a_bug_in_a_check_becomes_a_rejection_of_that_file_only(tmp_path: Path) -> None:
    def broken(doc: dict[str, object], file: str) -> list[Finding]:
        raise RuntimeError("bug")

    workloads = sorted((ROOT / "workloads" / "agentic")
                       .glob("*.yaml"))
    assert workloads, "the agentic workloads ship with epbench"
    good = tmp_path / "ok.json"  # an emulator result: its endpoint and workload ship
    good.write_text((DATA / "carol/emulator/2026-11-23-chat-short-d4e5f6a7.json").read_text())
    report = validate_paths([workloads[0], good], workload_semantics=broken)
    by_file = {f.path: f.status for f in report.files}
    assert by_file[str(workloads[0])] == "rejected"
    assert [f.check for f in report.findings if f.file == str(workloads[0])] == ["internal.error"]
    assert by_file[str(good)] != "rejected"
    assert "internal.error" not in {f.check for f in report.findings if f.file == str(good)}
