"""Issue 21, must-show 1 and 3: what no attestation proves is self-reported, and never ranked
by default. Two attacks, end to end through the command line:

- an invented run: a journal written by a script (no request was ever sent), every figure of
  its result filled in by epbench's own recomputation, so `validate` finds nothing to refuse;
  under the scheduled benchmark's submitter id `epbench` it is rejected, and under any other
  id it is published self-reported and not ranked;
- a real run against a fast local server, its endpoint file (which the same pull request adds)
  saying it is OpenAI's serviced endpoint: published self-reported and not ranked.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from attack import ROOT, TINY_WORKLOAD, epbench

TESTS = ROOT / "tests"
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from tests.generator.test_trust import make_run  # noqa: E402  (the script-written journal and its result)

RELABELLED = {
    "kind": "endpoint", "schema_version": 1, "id": "openai-gpt-4o", "provider": "OpenAI",
    "model": {"name": "emulated-8b", "version": "2024-08-06"}, "api": "openai-chat",
    "api_key_env": None, "division": "serviced", "region": "us-east-1",
    "pricing": [{"input_usd_per_mtok": 2.5, "output_usd_per_mtok": 10.0,
                 "effective_date": "2026-01-01", "source_url": "https://openai.com/api/pricing/"}],
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def fake_server() -> Iterator[str]:
    """`epbench emulate` on loopback: a fast server that is nobody's serviced endpoint."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "epbench.cli", "emulate", "--port", str(port)],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise AssertionError("the emulator did not start listening in 60 s")
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def runs_table(project: Path) -> dict[str, dict[str, Any]]:
    built = epbench("build", "--out", "site", cwd=project)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-3000:]
    rows = [row for day in sorted((project / "site" / "data" / "runs").glob("*.json"))
            for row in json.loads(day.read_text())]  # the public download, one file a day
    return {row["run_id"]: row for row in rows}


def invented_project(tmp_path: Path, submitter: str) -> tuple[Path, str]:
    """A project holding the invented run, submitted under `submitter`."""
    project = tmp_path / "project"
    (project / "results").mkdir(parents=True)
    (project / "workloads" / "serving").mkdir(parents=True)
    (project / "endpoints").mkdir()
    for rel in ("workloads/serving/chat-short.yaml", "endpoints/emulator.yaml"):
        (project / rel).write_bytes((ROOT / rel).read_bytes())
    run = make_run(tmp_path / "run")
    done = epbench("submit", str(run), "--submitter", submitter, "--results",
                   str(project / "results"), cwd=project)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    return project, json.loads((run / "result.json").read_text())["run_id"]


def test_an_invented_journal_under_the_scheduled_benchmarks_id_is_rejected(
    tmp_path: Path,
) -> None:
    project, _ = invented_project(tmp_path, "epbench")
    done = epbench("validate", "results", cwd=project)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = [x for x in done.stdout.splitlines() if "provenance.reserved-submitter" in x]
    assert len(lines) == 1 and "/submitter/name" in lines[0], done.stdout
    assert "self-reported (no attestation bundle)" in lines[0]


def test_an_invented_journal_validates_but_is_self_reported_and_not_ranked(
    tmp_path: Path,
) -> None:
    project, run_id = invented_project(tmp_path, "mallory")
    done = epbench("validate", "results", cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr  # every figure is the journal's
    row = runs_table(project)[run_id]
    assert (row["tier"], row["tier_reason"]) == ("self-reported", "no attestation bundle")
    assert row["rankable"] is False
    assert row["unranked_reasons"][0] == "self-reported: no attestation bundle"
    page = (project / "site" / "runs" / run_id / "index.html").read_text()
    assert "Provenance: <strong>self-reported</strong> (no attestation bundle)." in page


def test_a_real_run_relabelled_as_a_serviced_provider_is_self_reported_and_not_ranked(
    tmp_path: Path, fake_server: str,
) -> None:
    project = tmp_path / "project"
    (project / "endpoints").mkdir(parents=True)
    (project / "workloads" / "serving").mkdir(parents=True)
    (project / "results").mkdir()
    (project / "endpoints" / "openai-gpt-4o.yaml").write_text(
        yaml.safe_dump({**RELABELLED, "base_url": fake_server}))
    workload = {**TINY_WORKLOAD, "load": {**TINY_WORKLOAD["load"], "requests_per_point": 64}}
    (project / "workloads" / "serving" / "tiny.yaml").write_text(yaml.safe_dump(workload))
    ran = epbench("run", "--endpoint", "endpoints/openai-gpt-4o.yaml", "--workload",
                  "workloads/serving/tiny.yaml", "--out", "runs", "--no-progress", cwd=project)
    assert ran.returncode == 0, ran.stderr[-3000:]
    (run_dir,) = (project / "runs").iterdir()
    result = json.loads((run_dir / "result.json").read_text())
    assert result["round_trips"]["samples"] == 5  # measured by the run, journaled
    done = epbench("submit", str(run_dir), "--submitter", "mallory", cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr
    done = epbench("validate", "results", cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr
    row = runs_table(project)[result["run_id"]]
    assert (row["provider"], row["division"]) == ("OpenAI", "serviced")
    assert (row["tier"], row["rankable"]) == ("self-reported", False)
    # its tier is all that keeps it from ranking: the reader's control would include it
    assert row["unranked_reasons"] == ["self-reported: no attestation bundle"]
