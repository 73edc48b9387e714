"""Resuming honestly: a run killed mid-point and resumed measures what an uninterrupted run
of the same seed measures, because its window counts only the time the runner was sending; the
resume is listed in the result, and the result still recomputes from its journal."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from epbench.generator.validate import validate_paths
from tests.conftest import ROOT
from tests.emulator_fixture import emulator_endpoint, running_emulator

GAP_S = 3.0


def files(tmp_path: Path, base_url: str) -> tuple[Path, Path]:
    endpoint = {k: v for k, v in emulator_endpoint().items() if k != "emulator"}
    endpoint["base_url"] = base_url
    endpoint_path = tmp_path / "emulator.yaml"
    endpoint_path.write_text(yaml.safe_dump(endpoint), encoding="utf-8")
    workload = {
        "kind": "serving-workload", "schema_version": 1, "id": "resume-test", "version": "1.0",
        "description": "one closed-loop point, long enough to be killed in the middle",
        "seed": 5,
        "prompts": {"input_tokens": {"distribution": "normal", "mean": 64, "stddev": 8,
                                     "min": 32, "max": 96},
                    "max_tokens": 24, "ignore_eos": True},
        "load": {"pattern": "concurrency", "concurrency": [8], "requests_per_point": 64},
        "slo": {"ttft_ms": 2000, "tpot_ms": 100},
        "timeout_s": 60,
    }
    workload_path = tmp_path / "resume-test.yaml"
    workload_path.write_text(yaml.safe_dump(workload), encoding="utf-8")
    return endpoint_path, workload_path


def command(endpoint: Path, workload: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "epbench.cli", "run", "--endpoint", str(endpoint),
            "--workload", str(workload), "--out", str(out), "--no-progress", *extra]


def env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT))


def requests_in(journal: Path) -> int:
    if not journal.exists():
        return 0
    return sum(1 for line in journal.read_bytes().splitlines() if b'"request_id"' in line)


def result_of(out: Path) -> tuple[Path, dict[str, Any]]:
    (path,) = out.glob("*/result.json")
    return path, json.loads(path.read_text())


def test_a_killed_and_resumed_run_measures_what_an_uninterrupted_run_does(tmp_path: Path) -> None:
    # Slow tokens (40 ms): on a loaded machine a sleep overshoots by a millisecond or two, which
    # would be noise of 20-30% on the shipped 6 ms and is a few percent of 40 ms; fewer events
    # a second also leave the client and the emulator less to fight for on a busy machine.
    with running_emulator({"tpot_ms": 40, "ttft_ms": 60}) as emulator:
        endpoint, workload = files(tmp_path, emulator.base_url)
        whole_out = tmp_path / "whole"
        done = subprocess.run(command(endpoint, workload, whole_out), env=env(), cwd=ROOT,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        _, whole = result_of(whole_out)

        cut_out = tmp_path / "cut"
        process = subprocess.Popen(command(endpoint, workload, cut_out), env=env(), cwd=ROOT,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                journals = list(cut_out.glob("*/events.jsonl"))
                if journals and requests_in(journals[0]) >= 32:
                    break
                time.sleep(0.05)
            # Mid-point, between two rounds: the emulator answers the 8 requests of a round in
            # near lock-step, so a kill inside a round would leave the resumed session one
            # partial round at its end (a closed-loop tail the uninterrupted 8 x 8 run does not
            # have, up to 12% here): a real difference between the two runs, not the window's.
            os.kill(process.pid, signal.SIGKILL)
        finally:
            process.wait(timeout=60)
        (run_dir,) = [p.parent for p in cut_out.glob("*/events.jsonl")]
        assert 32 <= requests_in(run_dir / "events.jsonl") < 64
        assert not (run_dir / "result.json").exists()
        time.sleep(GAP_S)
        resumed = subprocess.run(
            command(endpoint, workload, cut_out, "--resume", str(run_dir)),
            env=env(), cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert resumed.returncode == 0, resumed.stderr
    path, cut = result_of(cut_out)
    (point_whole,), (point_cut,) = whole["points"], cut["points"]
    assert point_cut["requests"]["completed"] == point_whole["requests"]["completed"] == 64
    ratio = point_cut["system_tps"] / point_whole["system_tps"]
    print(f"system_tps resumed {point_cut['system_tps']} uninterrupted "
          f"{point_whole['system_tps']} ratio {ratio:.4f}")
    assert abs(ratio - 1) < 0.05, (point_cut["system_tps"], point_whole["system_tps"])
    (resume,) = cut["resumes"]
    assert resume["gap_s"] >= GAP_S and resume["at"] > cut["started_at"]
    assert "resumes" not in whole
    # the resumed result is still exactly what its journal says
    report = validate_paths([path])
    assert not [f for f in report.findings if f.check.startswith("evidence.")], \
        report.render("text")
