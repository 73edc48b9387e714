"""`epbench import mlperf-endpoints`: a submission folder built from the documented layout
(results/<system>/<model>/r<N>/{point.yaml, result_summary.json, system_desc.json})."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from epbench.core.errors import InputError
from epbench.generator.importers import import_results
from epbench.generator.validate import validate_paths
from tests.conftest import ROOT

FIXTURE = ROOT / "tests" / "data" / "mlperf"
CURVE = FIXTURE / "acme-org" / "sub-0001" / "results" / "sys-h100x8-vllm" / "llama3-8b"
WHEN = datetime(2026, 10, 2, 9, 0, tzinfo=UTC)  # the fixture's test_started_at is 0: --date


def test_one_result_per_system_and_model_keeping_their_p90s(tmp_path: Path) -> None:
    written = import_results("mlperf-endpoints", FIXTURE, tmp_path / "results" / "acme", None,
                             when=WHEN)
    assert len(written) == 1
    result = json.loads(written[0].read_text())
    assert result["source"]["format"] == "mlperf-endpoints"
    assert any(u.startswith("pricing") for u in result["source"]["unmapped"])
    points = {p["id"]: p for p in result["points"]}
    assert list(points) == ["c1", "c16", "c64", "c256"]
    c16 = points["c16"]
    assert c16["ttft_ms"]["p90"] == pytest.approx(80.0)  # 80,000,000 ns
    assert c16["tpot_ms"]["p90"] == pytest.approx(10.0)
    assert c16["tps_per_user"] == pytest.approx(100.0)
    assert c16["system_tps"] == pytest.approx(1_536_000 / 1024)
    assert c16["requests"] == {"issued": 12000, "completed": 12000, "failed": 0}
    assert [p["point"] for p in result["pareto"]] == ["c64", "c16", "c1"]
    assert result["endpoint"]["hardware"] == {"accelerator": "NVIDIA H100 SXM", "count": 8,
                                              "engine": "vLLM 0.11.0"}
    assert result["submitter"]["display_name"] == "Acme Org"
    assert result["started_at"] == "2026-10-02T09:00:00Z"  # from --date, never guessed
    unmapped = result["source"]["unmapped"]
    assert "started_at (no test_started_at in the submission; from --date)" in unmapped
    assert "point.yaml: target_cohort" in unmapped  # every key it did not read is listed


def test_without_a_run_date_the_importer_asks_for_date_instead_of_guessing(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"summary\.json: it has no test_started_at.*--date"):
        import_results("mlperf-endpoints", FIXTURE, tmp_path / "results" / "acme", None)


def test_the_imported_result_passes_validation(tmp_path: Path) -> None:
    written = import_results("mlperf-endpoints", FIXTURE, tmp_path / "results" / "acme", None,
                             when=WHEN)
    report = validate_paths(written)
    assert report.findings == [], report.render("text")


def test_reimporting_gives_the_same_run_id(tmp_path: Path) -> None:
    first = import_results("mlperf-endpoints", FIXTURE, tmp_path / "a" / "acme", None, when=WHEN)
    second = import_results("mlperf-endpoints", FIXTURE, tmp_path / "b" / "acme", None, when=WHEN)
    assert json.loads(first[0].read_text())["run_id"] == json.loads(second[0].read_text())["run_id"]


def test_a_folder_without_points_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"point\.yaml"):
        import_results("mlperf-endpoints", tmp_path, tmp_path / "out", "acme")


def test_a_hostile_point_yaml_is_refused_not_executed(tmp_path: Path) -> None:
    copy = tmp_path / "sub"
    shutil.copytree(CURVE, copy / "results" / "sys" / "model")
    bad = copy / "results" / "sys" / "model" / "r16" / "point.yaml"
    bad.write_text("concurrency: !!python/object/apply:os.system ['false']\n")
    with pytest.raises(InputError, match=r"point\.yaml"):
        import_results("mlperf-endpoints", copy, tmp_path / "out" / "acme", None, when=WHEN)


def test_the_cli_imports_the_fixture_and_it_validates(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    root = ROOT
    env = dict(os.environ, PYTHONPATH=str(root))
    out = tmp_path / "results" / "acme"
    done = subprocess.run(
        [sys.executable, "-m", "epbench.cli", "import", "mlperf-endpoints", str(FIXTURE),
         "--out", str(out), "--date", "2026-10-02"],
        capture_output=True, text=True, timeout=120, env=env, cwd=root)
    assert done.returncode == 0, done.stderr
    written = Path(done.stdout.strip())
    assert written.parent.parent == out and written.is_file()
    check = subprocess.run(
        [sys.executable, "-m", "epbench.cli", "validate", str(tmp_path / "results")],
        capture_output=True, text=True, timeout=120, env=env, cwd=root)
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.startswith("ok: 1 files checked: 1 passed")


def test_a_percentile_that_is_not_a_number_is_listed_as_unmapped_not_dropped_silently(
        tmp_path: Path) -> None:
    tree = tmp_path / "mlperf"
    shutil.copytree(FIXTURE, tree)
    curve = tree / CURVE.relative_to(FIXTURE)
    summary_path = curve / "r16" / "result_summary.json"
    summary = json.loads(summary_path.read_text())
    summary["ttft"]["percentiles"]["90.0"] = "80 ms"  # text where a number of ns belongs
    summary_path.write_text(json.dumps(summary))
    written = import_results("mlperf-endpoints", tree, tmp_path / "results" / "acme", None,
                             when=WHEN)
    result = json.loads(written[0].read_text())
    unmapped = result["source"]["unmapped"]
    assert "result_summary.json: ttft.percentiles.90.0 (not a number)" in unmapped
    c16 = next(p for p in result["points"] if p["id"] == "c16")
    assert c16["ttft_ms"]["p90"] is None  # not read, so not shown as a figure
