"""A result that claims a shipped workload (its real sha256) but whose journal ran another,
smaller load is rejected by `epbench validate`: the plan is rebuilt from the workload file the
result names and compared with the journal (issue 21, must-show 1)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

from forged_runs import ROOT, forged_run, workload_file

from epbench.core import evidence
from epbench.generator.submit import submit_run
from epbench.runner.workload import load_serving_workload

CHAT_SHORT = ROOT / "workloads" / "serving" / "chat-short.yaml"


def validate(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "epbench.cli", "validate", *map(str, paths)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300, check=False)


def rejections(out: str) -> list[str]:
    return [line for line in out.splitlines() if ": reject: " in line]


def test_a_result_claiming_chat_short_whose_journal_ran_80_requests_of_32_tokens_is_rejected(
    tmp_path: Path,
) -> None:
    run = forged_run(tmp_path / "run", workload_file(tmp_path / "wl"))
    result = run / "result.json"
    doc = json.loads(result.read_text())
    real = load_serving_workload(CHAT_SHORT)
    doc["workload"].update(id=real.id, version=real.version, sha256=real.sha256)
    doc["settings"].update(seed=real.seed, max_tokens=128, temperature=0.0)
    result.write_text(json.dumps(doc, indent=2))
    path, _ = submit_run(run, "mallory", None, "independent", tmp_path / "results")

    done = validate(path)
    assert done.returncode == 1, done.stdout + done.stderr
    found = rejections(done.stdout)
    assert len(found) == 1, done.stdout
    assert "[workload.plan]" in found[0] and str(path) in found[0]
    assert "point 'c1' journals 80 requests, the plan sends 264" in found[0], found[0]


def test_the_same_run_with_its_own_workload_validates(tmp_path: Path) -> None:
    project = tmp_path / "project"
    wl = workload_file(project / "workloads" / "serving")
    run = forged_run(tmp_path / "run", wl)
    path, _ = submit_run(run, "mallory", None, "independent", project / "results")
    done = validate(path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert rejections(done.stdout) == []


def test_a_journal_whose_prompts_are_not_the_planned_lengths_is_rejected(tmp_path: Path) -> None:
    project = tmp_path / "project"
    run = forged_run(tmp_path / "run", workload_file(project / "workloads" / "serving"))
    path, _ = submit_run(run, "mallory", None, "independent", project / "results")
    journal = path.with_name(path.stem + evidence.SUFFIX)
    lines = gzip.decompress(journal.read_bytes()).splitlines()
    seventh = json.loads(lines[8])
    seventh["input_requested"] = 16
    lines[8] = json.dumps(seventh, separators=(",", ":")).encode()
    data = b"\n".join(lines) + b"\n"
    evidence.pack(data, journal)
    doc = json.loads(path.read_text())
    doc["evidence"] = evidence.describe(data)
    path.write_text(json.dumps(doc, indent=2))
    found = rejections(validate(path).stdout)
    assert len(found) == 1 and "[workload.plan]" in found[0], found
    assert "request 'c1-00006' asked for 16 input tokens, the plan 64" in found[0]


def test_one_shard_of_the_claimed_workload_validates_and_a_relabelled_point_does_not(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    wl = workload_file(project / "workloads" / "serving", concurrency=[1, 2, 4],
                       requests_per_point=8)
    run = forged_run(tmp_path / "run", wl, shard="2/3")
    path, _ = submit_run(run, "mallory", None, "independent", project / "results")
    done = validate(path)
    assert done.returncode == 0, done.stdout

    other = forged_run(tmp_path / "other", wl, run_id="deadbeef12345678")
    journal = other / "events.jsonl"
    lines = journal.read_bytes().splitlines()
    run_line = json.loads(lines[0])
    run_line["spec"]["points"][2]["concurrency"] = 64  # c4 ran at 64 in flight
    kept = [json.dumps(run_line, separators=(",", ":")).encode(), *lines[1:]]
    journal.write_bytes(b"\n".join(kept) + b"\n")
    from epbench.runner.plan import Plan
    from epbench.runner.run_folder import read_journal
    from epbench.runner.serving_run import write_result
    plan = Plan.from_json(json.loads((other / "plan.json").read_text()))
    write_result(other, plan, read_journal(other))
    path, _ = submit_run(other, "mallory", None, "independent", project / "results")
    found = rejections(validate(path).stdout)
    assert len(found) == 1 and "[workload.plan]" in found[0], found
    assert "the journal's point 'c4' is concurrency 64" in found[0], found[0]
