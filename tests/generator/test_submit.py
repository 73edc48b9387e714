"""`epbench submit`: a run's result lands at its place under results/, with a submitter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from epbench.core.errors import InputError
from epbench.generator.submit import submit_run
from tests.conftest import ROOT
from tests.generator.checks.test_validate_results import SERVICED, make_project


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A finished run (runs/<id>/result.json, no submitter yet) beside a project."""
    project = make_project(tmp_path / "project")
    doc = json.loads((project / "results" / SERVICED).read_text())
    (project / "results" / SERVICED).unlink()
    del doc["submitter"]
    run = tmp_path / "runs" / doc["run_id"]
    run.mkdir(parents=True)
    (run / "result.json").write_text(json.dumps(doc))
    return run


def test_submit_places_the_result_and_fills_the_submitter(run_dir: Path, tmp_path: Path) -> None:
    results = tmp_path / "project" / "results"
    path, report = submit_run(run_dir, "dave", "dave@example.com", "customer", results)
    assert path == results / "dave" / "acme-llama-8b" / "2026-11-20-chat-short-a1b2c3d4.json"
    doc = json.loads(path.read_text())
    assert doc["submitter"] == {"name": "dave", "relationship": "customer",
                                "contact": "dave@example.com"}
    assert not report.blocking, report.render("text")
    assert [f.path for f in report.files] == [str(path)]


def test_submitting_the_same_run_twice_rewrites_only_its_own_file(run_dir: Path,
                                                                  tmp_path: Path) -> None:
    results = tmp_path / "project" / "results"
    first, _ = submit_run(run_dir, "dave", None, "independent", results)
    second, report = submit_run(run_dir, "dave", None, "provider", results)
    assert first == second and not report.blocking
    assert json.loads(second.read_text())["submitter"]["relationship"] == "provider"


def test_a_run_id_already_submitted_by_someone_else_is_rejected(run_dir: Path,
                                                               tmp_path: Path) -> None:
    results = tmp_path / "project" / "results"
    submit_run(run_dir, "dave", None, "independent", results)
    _, report = submit_run(run_dir, "erin", None, "independent", results)
    assert report.blocking
    assert "layout.run-id-unique" in {f.check for f in report.findings}


@pytest.mark.parametrize("name", ["../etc", "Dave", "", "a/b", "-x"])
def test_a_submitter_that_is_not_an_id_is_refused(run_dir: Path, tmp_path: Path,
                                                  name: str) -> None:
    with pytest.raises(InputError, match="--submitter"):
        submit_run(run_dir, name, None, "independent", tmp_path / "results")


def test_a_broken_result_is_reported_and_not_copied(run_dir: Path, tmp_path: Path) -> None:
    doc = json.loads((run_dir / "result.json").read_text())
    doc["points"][0]["system_tps"] = "fast"
    (run_dir / "result.json").write_text(json.dumps(doc))
    results = tmp_path / "project" / "results"
    path, report = submit_run(run_dir, "dave", None, "independent", results)
    assert path == run_dir / "result.json"
    assert report.blocking and report.findings[0].check == "schema.type"
    assert not (results / "dave").exists()


def test_the_cli_submits_and_prints_where(run_dir: Path, tmp_path: Path) -> None:
    results = tmp_path / "project" / "results"
    done = subprocess.run(
        [sys.executable, "-m", "epbench.cli", "submit", str(run_dir), "--submitter", "dave",
         "--results", str(results)],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith(
        str(results / "dave" / "acme-llama-8b" / "2026-11-20-chat-short-a1b2c3d4.json"))
