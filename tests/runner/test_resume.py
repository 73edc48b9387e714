"""SIGKILL in the middle of `epbench run`, then `--resume`: every planned request exactly once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

from epbench.core.documents import load_document
from epbench.core.journal_file import Journal
from epbench.core.schema import check_schema
from tests.conftest import ROOT

pytestmark = pytest.mark.integration


def write_inputs(tmp_path: Path) -> tuple[Path, Path]:
    endpoint = load_document(ROOT / "endpoints" / "emulator.yaml")
    endpoint["emulator"].update(
        slots=16, ttft_ms=5, prefill_ms_per_1k_tokens=1, tpot_ms=3, jitter=0.0
    )
    workload = {
        "kind": "serving-workload",
        "schema_version": 1,
        "id": "resume-test",
        "version": "1.0",
        "description": "killed and resumed",
        "seed": 5,
        "prompts": {
            "input_tokens": {"distribution": "fixed", "value": 32},
            "max_tokens": 16,
            "ignore_eos": True,
        },
        "load": {
            "pattern": "concurrency",
            "concurrency": [1, 2, 4],
            "requests_per_point": 30,
            "warmup_requests": 2,
        },
    }
    ep_path, wl_path = tmp_path / "emulator.yaml", tmp_path / "resume-test.yaml"
    ep_path.write_text(yaml.safe_dump(endpoint), encoding="utf-8")
    wl_path.write_text(yaml.safe_dump(workload), encoding="utf-8")
    return ep_path, wl_path


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "epbench.cli", "run", "--no-progress", *args]


def test_a_run_killed_with_sigkill_is_finished_by_resume_with_every_request_once(tmp_path):
    endpoint, workload = write_inputs(tmp_path)
    out = tmp_path / "runs"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        cli("--endpoint", str(endpoint), "--workload", str(workload), "--out", str(out)),
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        journal = None
        while time.monotonic() < deadline:
            runs = list(out.glob("*/events.jsonl")) if out.exists() else []
            if runs and len(runs[0].read_bytes().splitlines()) >= 25:
                journal = runs[0]
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.02)
        assert journal is not None, "the run never got 25 requests into its journal"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
    run_dir = journal.parent
    before = [r for r in Journal.read(journal) if "request_id" in r]
    # (the run spec and session lines are not requests)
    assert 25 - 2 <= len(before) < 96 and not (run_dir / "result.json").exists()

    with Journal(journal) as damaged:  # a line that parses but lacks fields: skipped, counted
        damaged.append({"request_id": "zz", "point": "c1"})

    # --resume alone: the plan names the endpoint and the workload
    done = subprocess.run(
        cli("--resume", str(run_dir), "--json"),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == str(run_dir / "result.json")
    assert "skipped 1 incomplete journal line" in done.stderr

    plan = json.loads((run_dir / "plan.json").read_text())
    planned = [r["request_id"] for p in plan["points"] for r in p["requests"]]
    lines = Journal.read(journal)
    records = [r for r in lines if "request_id" in r]
    counts = Counter(r["request_id"] for r in records if r["request_id"] != "zz")
    assert len(planned) == 96
    assert set(counts) == set(planned) and max(counts.values()) == 1
    assert all(r["request_id"] in counts for r in before)  # nothing journaled before was redone

    result = json.loads((run_dir / "result.json").read_text())
    assert check_schema(result, "result", "result.json") == []
    assert result["run_id"] == run_dir.name
    assert [p["requests"]["issued"] + p["requests"]["warmup"] for p in result["points"]] == [
        32,
        32,
        32,
    ]


def test_resume_with_another_endpoint_than_the_plan_names_is_an_error(tmp_path):
    endpoint, workload = write_inputs(tmp_path)
    run_dir = tmp_path / "runs" / "0123456789abcdef"
    run_dir.mkdir(parents=True)
    (run_dir / "plan.json").write_text(json.dumps({
        "run_id": run_dir.name, "workload_sha256": "0" * 64,
        "inputs": {"endpoint": str(endpoint), "workload": str(workload)},
    }))
    other = tmp_path / "other.yaml"
    other.write_bytes(endpoint.read_bytes())
    done = subprocess.run(
        cli("--resume", str(run_dir), "--endpoint", str(other)),
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 1
    assert "resume it without --endpoint" in done.stderr and len(done.stderr.splitlines()) == 1


def test_a_torn_last_journal_line_is_dropped_and_cut_before_appending(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"request_id": "a"}\n{"request_id": "b"}\n{"request_id": "c", "cla')
    assert [r["request_id"] for r in Journal.read(path)] == ["a", "b"]
    with Journal(path) as journal:
        journal.append({"request_id": "c"})
    assert [r["request_id"] for r in Journal.read(path)] == ["a", "b", "c"]


def test_a_damaged_line_inside_the_journal_is_an_error(tmp_path):
    from epbench.core.errors import RunError

    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"request_id": "a"}\nnot json\n{"request_id": "b"}\n')
    with pytest.raises(RunError, match="line 2"):
        Journal.read(path)


def test_journal_lines_that_parse_but_lack_fields_are_skipped_and_counted():
    from epbench.core.journal_lines import complete_records

    good = {"request_id": "c1-00000", "point": "c1", "seq": 0, "class": "ok",
            "t_send_ns": 1, "t_done_ns": 2}
    trial = {"type": "trial", "task": "t", "trial": 0, "result": "success"}
    agentic_request = {"type": "request", "task": "t", "request_id": "t-t0-s1-a0"}
    records = [good, {"request_id": "zz", "point": "c1"}, trial,
               {"type": "trial", "task": "t"}, agentic_request, {**good, "seq": "0"}]
    kept, skipped = complete_records(records)
    assert kept == [good, trial, agentic_request] and skipped == 3
