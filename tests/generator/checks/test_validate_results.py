"""`epbench validate` on results: each semantic check fires on its own defect, with its id."""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from epbench.core.findings import Finding
from epbench.generator.checks import CHECKS
from epbench.generator.validate import validate_paths
from tests.conftest import ROOT

SAMPLES = ROOT / "tests" / "data" / "results"
SERVICED = "alice/acme-llama-8b/2026-11-20-chat-short-a1b2c3d4.json"
SELF_HOSTED = "alice/alice-h100-vllm/2026-11-21-chat-short-b2c3d4e5.json"
AGENTIC = "bob/acme-llama-8b/2026-11-22-tool-lookup-c3d4e5f6.json"
EMULATED = "carol/emulator/2026-11-23-chat-short-d4e5f6a7.json"


def make_project(tmp_path: Path) -> Path:
    """A project with the sample results, their endpoint files and a workload file whose sha256
    they carry."""
    shutil.copytree(SAMPLES, tmp_path / "results")
    shutil.copytree(SAMPLES.parent / "endpoints", tmp_path / "endpoints")
    for path in (tmp_path / "results").rglob("*.json"):
        doc = json.loads(path.read_text())
        workload = doc["workload"]
        wfile = tmp_path / "workloads" / workload["kind"] / f"{workload['id']}.yaml"
        wfile.parent.mkdir(parents=True, exist_ok=True)
        if not wfile.exists():
            wfile.write_text(f"id: {workload['id']}\n")
        workload["sha256"] = hashlib.sha256(wfile.read_bytes()).hexdigest()
        path.write_text(json.dumps(doc, indent=2))
    return tmp_path


def load(project: Path, rel: str) -> dict[str, Any]:
    return json.loads((project / "results" / rel).read_text())


def save(project: Path, rel: str, doc: dict[str, Any]) -> Path:
    path = project / "results" / rel
    path.write_text(json.dumps(doc, indent=2))
    return path


def checks_of(findings: list[Finding]) -> set[str]:
    return {f.check for f in findings}


def validate_one(project: Path, rel: str) -> list[Finding]:
    return validate_paths([project / "results" / rel]).findings


def test_the_sample_tree_passes_with_only_the_emulated_warning(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    report = validate_paths([project / "results"])
    assert not report.blocking
    assert [(f.check, f.severity) for f in report.findings] == [("division.emulated", "warn")]
    assert {entry.status for entry in report.files} == {"passed"}
    assert len(report.files) == 4


MUTATIONS: list[tuple[str, str, Any, str, str]] = [
    # (sample, json path, new value, expected check, expected pointer)
    (SERVICED, "points.0.tps_per_user", 150.0, "derived.tps-per-user", "/points/0/tps_per_user"),
    (SERVICED, "points.1.system_tps", 1100.0, "derived.system-tps", "/points/1/system_tps"),
    (SERVICED, "points.1.requests.failed", 9, "derived.failed-count", "/points/1/requests/failed"),
    (SERVICED, "points.1.errors.timeout", 3, "derived.error-sum", "/points/1/errors"),
    (SERVICED, "points.0.ttft_ms.p95", 140.0, "dist.order", "/points/0/ttft_ms/p95"),
    (SERVICED, "points.0.ttft_ms.p50", None, "dist.presence", "/points/0/ttft_ms"),
    (SERVICED, "points.0.ttft_ms.insufficient", [], "dist.sufficiency",
     "/points/0/ttft_ms/insufficient"),
    (SERVICED, "started_at", "2099-01-01T00:00:00Z", "date.future", "/started_at"),
    (SERVICED, "finished_at", "2026-11-19T10:00:00Z", "date.order", "/finished_at"),
    (SERVICED, "endpoint.pricing.effective_date", "2026-11-25", "price.effective-after-run",
     "/endpoint/pricing/effective_date"),
    (SERVICED, "endpoint.pricing", {"usd_per_hour": 1.0, "effective_date": "2026-01-01"},
     "price.serviced-per-token", "/endpoint/pricing"),
    (SERVICED, "pareto.0.system_tps", 900.0, "pareto.consistent", "/pareto/0/system_tps"),
    (SERVICED, "workload.sha256", "f" * 64, "workload.sha256", "/workload/sha256"),
    (SERVICED, "workload.id", "chat-nowhere", "workload.unknown", "/workload/id"),
    (SERVICED, "notes", "debug key sk-proj-AbCdEf0123456789XyZ", "secret.suspected", "/notes"),
    (SERVICED, "settings.quick", True, "settings.quick", "/settings/quick"),
    (AGENTIC, "agentic.tasks.0.successes", 2, "agentic.task-counts",
     "/agentic/tasks/0/successes"),
    (AGENTIC, "agentic.success_rate.value", 0.9, "agentic.success-rate", "/agentic/success_rate"),
    (AGENTIC, "agentic.pass_hat_k.1", 0.5, "agentic.pass-hat-1", "/agentic/pass_hat_k/1"),
    (AGENTIC, "agentic.usd_per_successful_task", 0.01, "agentic.usd-per-success",
     "/agentic/usd_per_successful_task"),
    (AGENTIC, "agentic.decision_ms.p50", 0.0, "dist.positive", "/agentic/decision_ms/p50"),
]


def _set(doc: dict[str, Any], dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    target: Any = doc
    for part in parts[:-1]:
        target = target[int(part)] if isinstance(target, list) else target[part]
    last = parts[-1]
    if isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value


@pytest.mark.parametrize(("sample", "where", "value", "check", "pointer"), MUTATIONS,
                         ids=[m[3] for m in MUTATIONS])
def test_each_defect_gives_its_own_check_at_its_pointer(
    tmp_path: Path, sample: str, where: str, value: Any, check: str, pointer: str
) -> None:
    project = make_project(tmp_path)
    doc = load(project, sample)
    _set(doc, where, value)
    save(project, sample, doc)
    findings = validate_one(project, sample)
    hits = [f for f in findings if f.check == check]
    assert hits, f"expected {check}, got {[f.line() for f in findings]}"
    assert hits[0].pointer == pointer
    assert hits[0].severity == CHECKS[check].severity
    assert hits[0].fix, "every finding says what to do"


def test_a_rejected_point_flags_the_file_but_blocks_the_pull_request(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    doc = load(project, SERVICED)
    doc["points"][0]["tps_per_user"] = 150.0
    doc["pareto"][1]["tps_per_user"] = 150.0
    save(project, SERVICED, doc)
    report = validate_paths([project / "results" / SERVICED])
    assert report.files[0].status == "flagged"
    assert report.blocking


def test_the_path_must_agree_with_the_content(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    doc = load(project, SERVICED)
    wrong = project / "results" / "mallory" / "acme-llama-8b" / Path(SERVICED).name
    wrong.parent.mkdir(parents=True)
    (project / "results" / SERVICED).rename(wrong)
    wrong.write_text(json.dumps(doc))
    findings = validate_paths([wrong]).findings
    layout = [f for f in findings if f.check == "layout.path"]
    assert len(layout) == 1
    assert f"results/{SERVICED}" in layout[0].message


def test_a_run_id_may_appear_only_once_across_the_tree(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    doc = load(project, SELF_HOSTED)
    doc["run_id"] = load(project, SERVICED)["run_id"]
    target = project / "results" / "alice/alice-h100-vllm" / "2026-11-21-chat-short-a1b2c3d4.json"
    target.write_text(json.dumps(doc))
    (project / "results" / SELF_HOSTED).unlink()
    # Only the new file is checked, yet the duplicate is found against the whole tree.
    findings = validate_paths([target]).findings
    dup = [f for f in findings if f.check == "layout.run-id-unique"]
    assert len(dup) == 1
    assert SERVICED.split("/")[-1] in dup[0].message


def test_a_result_without_a_submitter_under_results_is_rejected(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    doc = load(project, SERVICED)
    del doc["submitter"]
    save(project, SERVICED, doc)
    assert "layout.submitter" in checks_of(validate_one(project, SERVICED))


def test_no_date_in_the_future_uses_one_day_of_slack(tmp_path: Path) -> None:
    from epbench.generator.checks.date import check_dates

    doc = load(make_project(tmp_path), SERVICED)
    doc["finished_at"] = "2026-11-20T23:00:00Z"
    now = datetime(2026, 11, 20, 0, 0, tzinfo=UTC)
    assert check_dates(doc, "f", now=now) == []
    doc["finished_at"] = "2026-11-21T01:00:00Z"
    assert {f.check for f in check_dates(doc, "f", now=now)} == {"date.future"}


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
                        "PATH": "/usr/bin:/bin", "HOME": str(cwd)})


def test_a_workload_sha_from_the_git_history_is_accepted(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    _git(project, "init", "-q")
    _git(project, "add", ".")
    _git(project, "commit", "-q", "-m", "v1")
    wfile = project / "workloads" / "serving" / "chat-short.yaml"
    wfile.write_text("id: chat-short\nversion: 2\n")
    _git(project, "commit", "-q", "-am", "v2")
    findings = validate_one(project, SERVICED)
    assert "workload.sha256" not in checks_of(findings)
    doc = load(project, SERVICED)
    doc["workload"]["sha256"] = hashlib.sha256(b"never committed").hexdigest()
    save(project, SERVICED, doc)
    assert "workload.sha256" in checks_of(validate_one(project, SERVICED))


def test_changed_since_checks_only_what_the_branch_adds(tmp_path: Path, monkeypatch: Any) -> None:
    project = make_project(tmp_path)
    _git(project, "init", "-q", "-b", "main")
    _git(project, "add", ".")
    _git(project, "commit", "-q", "-m", "base")
    _git(project, "checkout", "-q", "-b", "pr")
    doc = load(project, SERVICED)
    doc["points"][0]["tps_per_user"] = 1.0
    save(project, SERVICED, doc)
    _git(project, "commit", "-q", "-am", "change one")
    new = copy.deepcopy(load(project, EMULATED))
    new["run_id"] = load(project, EMULATED)["run_id"]  # a duplicate, untracked
    dup = project / "results" / "carol" / "emulator" / "2026-11-23-chat-short-d4e5f6a7-copy.json"
    dup.write_text(json.dumps(new))
    monkeypatch.chdir(project)
    report = validate_paths([project / "results"], changed_since="main")
    assert sorted(Path(f.path).name for f in report.files) == sorted(
        [Path(SERVICED).name, dup.name]
    )
    assert "derived.tps-per-user" in checks_of(report.findings)
    assert "layout.run-id-unique" in checks_of(report.findings)


def test_changed_since_with_an_unknown_ref_is_one_clear_error(tmp_path: Path,
                                                              monkeypatch: Any) -> None:
    from epbench.core.errors import InputError

    project = make_project(tmp_path)
    _git(project, "init", "-q")
    _git(project, "add", ".")
    _git(project, "commit", "-q", "-m", "base")
    monkeypatch.chdir(project)
    with pytest.raises(InputError, match="no-such-branch"):
        validate_paths([project / "results"], changed_since="no-such-branch")


def test_endpoint_files_need_a_variable_name_and_no_key(tmp_path: Path) -> None:
    good = {
        "kind": "endpoint", "schema_version": 1, "id": "acme", "provider": "Acme",
        "model": {"name": "m"}, "api": "openai-chat", "base_url": "https://api.acme.example/v1",
        "api_key_env": "ACME_API_KEY", "division": "serviced", "region": "us-east-1",
        "pricing": {"input_usd_per_mtok": 1, "output_usd_per_mtok": 2,
                    "effective_date": "2026-01-01", "source_url": "https://acme.example/p"},
    }
    path = tmp_path / "endpoints" / "acme.yaml"
    path.parent.mkdir()
    path.write_text(json.dumps(good))
    assert validate_paths([path]).findings == []
    leaked = dict(good, request={"headers": {"Authorization": "Bearer 9f8e7d6c5b4a39281706AbCdEf"}})
    path.write_text(json.dumps(leaked))
    findings = validate_paths([path]).findings
    # a literal header value is refused twice: it looks like a key, and only ${NAME} is allowed
    assert [(f.check, f.pointer) for f in findings] == [
        ("secret.suspected", "/request/headers/Authorization"),
        ("schema.pattern", "/request/headers/Authorization"),
    ]
    assert all("9f8e7d6c" not in f.line() for f in findings), "the suspected key is never echoed"
    hourly = dict(good, pricing={"usd_per_hour": 2.0, "effective_date": "2026-01-01"})
    path.write_text(json.dumps(hourly))
    assert checks_of(validate_paths([path]).findings) == {"price.serviced-per-token"}


def test_agentic_workloads_go_through_the_callable_the_cli_passes(tmp_path: Path) -> None:
    seen: list[str] = []

    def semantics(doc: dict[str, Any], file: str) -> list[Finding]:
        seen.append(doc["id"])
        return [Finding(file, "/tasks/0", "workload.stub", "reject", "stub says no", "fix it")]

    shipped = sorted((ROOT / "workloads" / "agentic").glob("*.yaml"))
    assert shipped, "the agentic workloads ship with epbench"
    report = validate_paths([shipped[0]], workload_semantics=semantics)
    assert seen, [f.line() for f in report.findings]
    assert "workload.stub" in checks_of(report.findings)


def test_every_check_has_an_id_a_severity_and_a_fix() -> None:
    assert len(CHECKS) >= 25
    for check in CHECKS.values():
        assert check.id.count(".") >= 1
        assert check.severity in ("reject", "reject-point", "flag", "warn")
        assert check.fix and check.description
