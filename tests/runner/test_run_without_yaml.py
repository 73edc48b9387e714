"""A run without YAML: `epbench run --url URL --model M` with the options a user of vllm bench,
GuideLLM or AIPerf expects, against the real emulator. The endpoint and workload files it used
land in the run folder, repeat the run exactly, and the result validates like any other."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from epbench.cli import main
from epbench.generator.validate import validate_paths
from epbench.runner.workload import load_workload_file
from tests.emulator_fixture import running_emulator


def test_a_run_from_options_alone_writes_its_inputs_and_its_result_validates(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with running_emulator() as emu:
        done = CliRunner().invoke(main, [
            "run", "--base-url", emu.base_url, "--model", "emulated-8b", "--concurrency", "1,4",
            "--isl", "64", "--osl", "16", "--requests", "8", "--warmup", "1", "--seed", "5",
            "--no-progress", "--out", str(tmp_path / "runs")])
    assert done.exit_code == 0, done.output
    [result_path] = list((tmp_path / "runs").glob("*/result.json"))
    run_dir = result_path.parent
    result = json.loads(result_path.read_text())
    assert [p["id"] for p in result["points"]] == ["c1", "c4"]
    assert all(p["requests"]["completed"] == 8 for p in result["points"])
    plan = json.loads((run_dir / "plan.json").read_text())
    workload = load_workload_file(run_dir / "workload.yaml")
    assert workload.sha256 == plan["workload_sha256"]
    assert workload.doc["prompts"] == {"input_tokens": {"distribution": "fixed", "value": 64},
                                       "max_tokens": 16, "ignore_eos": True}
    assert workload.doc["seed"] == 5 and workload.doc["load"]["warmup_requests"] == 1
    # any workload a result names must be under the project's workloads/ to validate
    (tmp_path / "workloads" / "serving").mkdir(parents=True)
    shipped = (run_dir / "workload.yaml").read_bytes()
    (tmp_path / "workloads/serving/quick.yaml").write_bytes(shipped)
    report = validate_paths([result_path, run_dir / "endpoint.yaml", run_dir / "workload.yaml"])
    assert not report.blocking, [f.line() for f in report.findings]


def test_rate_and_duration_make_an_open_loop_workload_sized_by_rate_times_duration(
        tmp_path: Path) -> None:
    from epbench.runner.quick_path import QuickRun, write_inputs

    endpoint, workload = write_inputs(
        QuickRun(url="http://127.0.0.1:8000/v1", model="m", rates=(2.0, 8.0), duration_s=30),
        tmp_path)
    doc = load_workload_file(workload).doc
    assert doc["load"] == {"pattern": "poisson", "rates_rps": [2, 8], "requests_per_point": 240,
                           "warmup_requests": 2}
    assert validate_paths([endpoint, workload]).blocking is False


def test_duration_without_rate_and_url_without_model_are_usage_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    done = runner.invoke(main, ["run", "--url", "http://127.0.0.1:9/v1", "--model", "m",
                                "--duration", "10", "--out", str(tmp_path)])
    assert done.exit_code == 1 and "--duration needs --rate" in done.output
    done = runner.invoke(main, ["run", "--url", "http://127.0.0.1:9/v1"])
    assert done.exit_code == 2 and "--url needs --model" in done.output


@pytest.mark.parametrize("division", ["self-hosted", "serviced"])
def test_endpoint_new_writes_a_commented_file_that_validates(tmp_path: Path, division: str):
    path = tmp_path / "mine.yaml"
    done = CliRunner().invoke(main, ["endpoint", "new", str(path), "--division", division,
                                     "--url", "http://10.0.0.5:8000/v1", "--model", "org/m-8b"])
    assert done.exit_code == 0, done.output
    text = path.read_text()
    assert "# the NAME of the variable" in text and f"division: {division}" in text
    report = validate_paths([path])
    assert not report.blocking, [f.line() for f in report.findings]
    again = CliRunner().invoke(main, ["endpoint", "new", str(path)])
    assert again.exit_code == 2 and "exists" in again.output
