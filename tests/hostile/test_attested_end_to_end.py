"""Issue 21, items 1-2 end to end: a signed run is ranked as `attested`, the same run with a
byte changed or signed by another workflow is self-reported, all through `epbench validate` and
`epbench build` with the real verifier. Only the trust root differs from production: the
Sigstore instance of tests/sigstore_fixture.py stands in for the public-good one (its
certificate authority, transparency log and CT log), since nothing here can reach Sigstore.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from attack import ROOT, TINY_WORKLOAD, epbench
from click.testing import CliRunner

TESTS = ROOT / "tests"
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from sigstore_fixture import SCHEDULED, Identity, local_sigstore, sign_beside  # noqa: E402
from test_provenance_tiers import RELABELLED, fake_server  # noqa: E402,F401  (fixture)

from epbench.cli import main  # noqa: E402
from epbench.generator.checks.attestation import verify  # noqa: E402


@pytest.fixture
def local_trust(monkeypatch: pytest.MonkeyPatch) -> None:
    """The verifier trusts the local Sigstore instance instead of the public-good root."""
    monkeypatch.setattr(verify, "public_good_trust", lambda: local_sigstore().trust())


def measured_project(tmp_path: Path, base_url: str, submitter: str) -> tuple[Path, Path]:
    """A real run against a loopback server, submitted under `submitter`; (project, result)."""
    project = tmp_path / "project"
    (project / "endpoints").mkdir(parents=True)
    (project / "workloads" / "serving").mkdir(parents=True)
    (project / "results").mkdir()
    (project / ".github").mkdir()
    (project / ".github" / "attestation-policy.yaml").write_bytes(
        (ROOT / ".github" / "attestation-policy.yaml").read_bytes())
    (project / "endpoints" / "openai-gpt-4o.yaml").write_text(
        yaml.safe_dump({**RELABELLED, "base_url": base_url}))
    workload = {**TINY_WORKLOAD, "load": {**TINY_WORKLOAD["load"], "requests_per_point": 64}}
    (project / "workloads" / "serving" / "tiny.yaml").write_text(yaml.safe_dump(workload))
    ran = epbench("run", "--endpoint", "endpoints/openai-gpt-4o.yaml", "--workload",
                  "workloads/serving/tiny.yaml", "--out", "runs", "--no-progress", cwd=project)
    assert ran.returncode == 0, ran.stderr[-3000:]
    (run_dir,) = (project / "runs").iterdir()
    done = epbench("submit", str(run_dir), "--submitter", submitter, cwd=project)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    (result,) = (project / "results").rglob("*-*.json")
    return project, result


def cli(project: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str]:
    monkeypatch.chdir(project)
    done = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return done.exit_code, done.output


def run_row(project: Path, monkeypatch: pytest.MonkeyPatch, run_id: str) -> dict[str, Any]:
    code, out = cli(project, monkeypatch, "build", "--out", "site", "--no-cache")
    assert code == 0, out[-3000:]
    rows = [row for day in sorted((project / "site" / "data" / "runs").glob("*.json"))
            for row in json.loads(day.read_text())]
    (row,) = [r for r in rows if r["run_id"] == run_id]
    return row


def test_a_run_signed_by_the_scheduled_workflow_is_attested_and_ranked(
    tmp_path: Path, fake_server: str, local_trust: None,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project, result = measured_project(tmp_path, fake_server, "epbench")
    sign_beside(result, SCHEDULED, relative_to=project)
    code, out = cli(project, monkeypatch, "validate", "results")
    assert code == 0, out  # the reserved submitter is allowed: the run is attested
    run_id = json.loads(result.read_text())["run_id"]
    row = run_row(project, monkeypatch, run_id)
    assert row["tier"] == "attested", row["tier_reason"]
    assert "benchmark.yml@refs/heads/main" in row["tier_reason"]
    assert (row["rankable"], row["unranked_reasons"]) == (True, [])
    page = (project / "site" / "runs" / run_id / "index.html").read_text()
    assert "Provenance: <strong>attested</strong>" in page


def test_a_signed_run_with_one_byte_changed_is_self_reported_and_its_submitter_refused(
    tmp_path: Path, fake_server: str, local_trust: None,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project, result = measured_project(tmp_path, fake_server, "epbench")
    sign_beside(result, SCHEDULED, relative_to=project)
    doc = json.loads(result.read_text())
    doc["notes"] = "edited after signing"
    result.write_text(json.dumps(doc, indent=2))
    code, out = cli(project, monkeypatch, "validate", "results")
    assert code == 1, out
    (line,) = [x for x in out.splitlines() if "provenance.reserved-submitter" in x]
    assert "self-reported" in line


def test_a_run_signed_by_another_workflow_is_self_reported(
    tmp_path: Path, fake_server: str, local_trust: None,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project, result = measured_project(tmp_path, fake_server, "mallory")
    other = Identity(workflow="epbench/epbench/.github/workflows/my-own.yml")
    sign_beside(result, other, relative_to=project)
    code, out = cli(project, monkeypatch, "validate", "results")
    assert code == 0, out
    row = run_row(project, monkeypatch, json.loads(result.read_text())["run_id"])
    assert row["tier"] == "self-reported"
    assert "my-own.yml" in row["tier_reason"] and row["rankable"] is False
