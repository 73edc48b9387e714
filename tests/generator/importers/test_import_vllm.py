"""`epbench import vllm-bench`: the JSON `vllm bench serve --save-result` writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from epbench.core.errors import InputError
from epbench.generator.importers import import_results
from epbench.generator.validate import validate_paths
from tests.conftest import ROOT

FIXTURE = next((ROOT / "tests" / "data" / "vllm").glob("*.json"))


def test_the_saved_result_becomes_one_concurrency_point(tmp_path: Path) -> None:
    written = import_results("vllm-bench", FIXTURE, tmp_path / "results" / "alice", None)
    result = json.loads(written[0].read_text())
    (point,) = result["points"]
    assert point["id"] == "c16" and point["concurrency"] == 16
    assert point["requests"] == {"issued": 1000, "completed": 995, "failed": 5}
    assert point["system_tps"] == pytest.approx(127_360 / 250)
    assert point["tps_per_user"] == pytest.approx(1000 / 25.0)
    assert point["ttft_ms"]["p90"] == 80.0 and point["ttft_ms"]["p50"] == 58.0
    assert point["e2e_ms"]["n"] == 0  # e2el percentiles were not saved
    assert result["started_at"] == "2026-11-15T10:25:50Z"  # date is the end; minus 250 s
    assert result["source"]["format"] == "vllm-bench"
    assert result["endpoint"]["model"]["name"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert not validate_paths(written).blocking


def test_default_percentiles_leave_tps_per_user_unknown_but_valid(tmp_path: Path) -> None:
    doc = json.loads(FIXTURE.read_text())
    for key in [k for k in doc if k.startswith(("p50_", "p90_", "p95_"))]:
        del doc[key]
    source = tmp_path / "bench.json"
    source.write_text(json.dumps(doc))
    written = import_results("vllm-bench", source, tmp_path / "results" / "alice", None)
    result = json.loads(written[0].read_text())
    assert result["points"][0]["tps_per_user"] is None
    assert result["points"][0]["ttft_ms"]["p99"] == 120.0
    assert any("tps_per_user" in u for u in result["source"]["unmapped"])
    report = validate_paths(written)
    assert not report.blocking, report.render("text")


def test_a_file_that_is_not_a_vllm_result_is_one_clear_error(tmp_path: Path) -> None:
    source = tmp_path / "x.json"
    source.write_text('{"hello": 1}')
    with pytest.raises(InputError, match="not a vLLM benchmark result"):
        import_results("vllm-bench", source, tmp_path / "out" / "alice", None)


def test_a_file_without_a_date_needs_date_and_never_gets_its_modification_time(
    tmp_path: Path,
) -> None:
    from datetime import UTC, datetime

    doc = json.loads(FIXTURE.read_text())
    del doc["date"]
    doc["tokenizer_id"] = "x"  # a key the importer does not read
    source = tmp_path / "bench.json"
    source.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"bench\.json: the file has no `date`.*--date"):
        import_results("vllm-bench", source, tmp_path / "results" / "alice", None)
    when = datetime(2026, 11, 3, 12, 0, tzinfo=UTC)
    written = import_results("vllm-bench", source, tmp_path / "results" / "alice", None, when)
    result = json.loads(written[0].read_text())
    assert result["finished_at"] == "2026-11-03T12:00:00Z"
    assert "date (not in the file; the run's end is the --date given)" in result["source"][
        "unmapped"]
    assert "unread key: tokenizer_id" in result["source"]["unmapped"]


def test_a_metric_that_is_not_a_number_is_listed_as_ignored_not_dropped_silently(
    tmp_path: Path,
) -> None:
    doc = json.loads(FIXTURE.read_text())
    doc["p90_ttft_ms"] = "80"  # a string: the importer cannot use it
    source = tmp_path / "bench.json"
    source.write_text(json.dumps(doc))
    written = import_results("vllm-bench", source, tmp_path / "results" / "alice", None)
    result = json.loads(written[0].read_text())
    assert result["points"][0]["ttft_ms"]["p90"] is None
    assert "p90_ttft_ms (not a finite number: ignored)" in result["source"]["unmapped"]
