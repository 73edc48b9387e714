"""Imported results are held to the physical bounds of what they carry, as flags: real importer
inputs from tests/data, each edited to break one bound, import, stay loadable, and build into
the tables with the flag (and onto the run page)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from epbench.generator.importers import import_results
from epbench.generator.validate import validate_paths
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data"
VLLM = next((DATA / "vllm").glob("*.json"))
MLPERF = DATA / "mlperf"
CURVE = MLPERF / "acme-org" / "sub-0001" / "results" / "sys-h100x8-vllm" / "llama3-8b"
WHEN = datetime(2026, 10, 2, 9, 0, tzinfo=UTC)  # the MLPerf fixture has no test_started_at


def import_vllm(tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    doc = json.loads(VLLM.read_text())
    edit(doc)
    tmp_path.mkdir(parents=True, exist_ok=True)
    source = tmp_path / "bench.json"
    source.write_text(json.dumps(doc))
    (written,) = import_results("vllm-bench", source, tmp_path / "results" / "alice", None)
    return written


def import_mlperf(tmp_path: Path, point: str, edit: Callable[[dict[str, Any]], None]) -> Path:
    copy = tmp_path / "mlperf"
    shutil.copytree(MLPERF, copy)
    summary = copy / CURVE.relative_to(MLPERF) / point / "result_summary.json"
    doc = json.loads(summary.read_text())
    edit(doc)
    summary.write_text(json.dumps(doc))
    (written,) = import_results("mlperf-endpoints", copy, tmp_path / "results" / "acme", None,
                                when=WHEN)
    return written


def only_flags(written: Path) -> list[tuple[str, str, str]]:
    """(check, pointer, message) of each finding; every one must be a flag naming the file."""
    report = validate_paths([written])
    assert not report.blocking, report.render("text")
    assert all(f.severity == "flag" and f.file == str(written) for f in report.findings)
    return [(f.check, f.pointer, f.message) for f in report.findings]


def test_the_unedited_inputs_import_without_a_flag(tmp_path: Path) -> None:
    assert only_flags(import_vllm(tmp_path / "v", lambda doc: None)) == []
    assert only_flags(import_mlperf(tmp_path / "m", "r64", lambda doc: None)) == []


def test_an_end_to_end_latency_below_the_ttft_is_flagged(tmp_path: Path) -> None:
    def edit(doc: dict[str, Any]) -> None:
        doc.update(median_e2el_ms=50.0, p99_e2el_ms=100.0)  # TTFT: p50 58 ms, p99 120 ms

    (flag,) = only_flags(import_vllm(tmp_path, edit))
    assert flag[:2] == ("plausible.imported-e2e-below-ttft", "/points/0/e2e_ms/p50")
    assert "e2e_ms.p50 is 50 ms, below ttft_ms.p50 (58 ms)" in flag[2]


def test_a_window_too_short_for_the_concurrency_is_flagged_by_littles_law(
    tmp_path: Path,
) -> None:
    # 995 requests of 62.5 ms mean TTFT at concurrency 16 need 3.9 s; 0.5 s is longer than
    # every single latency, so only the concurrency bound sees it (system_tps 254,720 tok/s).
    (flag,) = only_flags(import_vllm(tmp_path, lambda doc: doc.update(duration=0.5)))
    assert flag[:2] == ("plausible.imported-throughput", "/points/0/window_s")
    assert "995 requests with a mean ttft_ms of 62.5 ms need at least 3.88672 s" in flag[2]


def test_a_window_shorter_than_a_carried_ttft_is_flagged_without_e2e_figures(
    tmp_path: Path,
) -> None:
    written = import_mlperf(tmp_path, "r64", lambda doc: doc.update(duration_ns=100_000_000))
    flags = {check: (pointer, message) for check, pointer, message in only_flags(written)}
    pointer, message = flags["plausible.imported"]  # no e2e: the TTFT p99 (300 ms) is used
    assert pointer == "/points/2/window_s"
    assert "window_s is 0.1 s, shorter than the point's ttft_ms.p99 (300 ms)" in message


def test_a_zero_time_is_a_flag_and_the_point_stays(tmp_path: Path) -> None:
    def edit(doc: dict[str, Any]) -> None:
        doc["ttft"]["percentiles"]["50.0"] = 0

    written = import_mlperf(tmp_path, "r64", edit)
    (flag,) = only_flags(written)
    assert flag[:2] == ("plausible.imported-timing", "/points/2/ttft_ms/p50")
    from epbench.generator.tables import build_tables

    tables = build_tables(tmp_path / "results", tmp_path)
    (run,) = tables.runs.to_dict("records")
    assert run["points"] == 4 and run["flags"] == ["plausible.imported-timing"]
    from epbench.generator.render import environment, result_context

    page = environment().get_template("result.html.j2").render(
        **result_context(json.loads(written.read_text()), run, root="../../"))
    assert "<code>plausible.imported-timing</code>" in page


def test_a_zero_inter_token_gap_is_flagged(tmp_path: Path) -> None:
    (flag,) = only_flags(import_vllm(tmp_path, lambda doc: doc.update(median_itl_ms=0.0,
                                                                      p50_itl_ms=0.0)))
    assert flag[:2] == ("plausible.imported-timing", "/points/0/itl_ms/p50")


def test_a_round_trip_the_submitter_writes_bounds_nothing(tmp_path: Path) -> None:
    def edit(doc: dict[str, Any]) -> None:
        del doc["median_ttft_ms"], doc["p50_ttft_ms"]  # p90 (80 ms) is the smallest left

    written = import_vllm(tmp_path, edit)
    result = json.loads(written.read_text())
    # no importer carries a round trip; a hand-written one (above every latency) is the
    # submitter's word, not a round trip the runner journaled: no flag
    result["client"]["rtt_ms"] = 95.0
    written.write_text(json.dumps(result))
    assert only_flags(written) == []


def test_tps_per_user_above_the_fastest_inter_token_figure_is_flagged(tmp_path: Path) -> None:
    # The importers derive tps_per_user = 1000 / TPOT p90 themselves, so only an edited result
    # can break this: 40.3 passes derived.tps-per-user (1%) but no token came faster than 25 ms.
    def edit(doc: dict[str, Any]) -> None:
        for key in [k for k in doc if k.endswith(("_tpot_ms", "_itl_ms"))]:
            doc[key] = 25.0

    written = import_vllm(tmp_path, edit)
    result = json.loads(written.read_text())
    result["points"][0]["tps_per_user"] = 40.3
    result["pareto"][0]["tps_per_user"] = 40.3
    written.write_text(json.dumps(result))
    (flag,) = only_flags(written)
    assert flag[:2] == ("plausible.imported-speed", "/points/0/tps_per_user")
    assert "allows at most 40" in flag[2]


def test_system_tps_above_tokens_over_the_window_is_flagged(tmp_path: Path) -> None:
    written = import_vllm(tmp_path, lambda doc: None)
    result = json.loads(written.read_text())
    point = result["points"][0]
    point["system_tps"] = point["system_tps"] * 1.005  # inside derived's 1%, above the tokens
    result["pareto"][0]["system_tps"] = point["system_tps"]
    written.write_text(json.dumps(result))
    (flag,) = only_flags(written)
    assert flag[:2] == ("plausible.imported-throughput", "/points/0/system_tps")


def test_the_bounds_leave_epbench_results_to_the_journal_checks(tmp_path: Path) -> None:
    from epbench.generator.checks.plausible.imported import check_imported

    result = json.loads(import_vllm(tmp_path, lambda doc: doc.update(duration=0.5)).read_text())
    assert check_imported(result, "x.json") != []
    result["source"]["format"] = "epbench"
    assert check_imported(result, "x.json") == []


def test_an_imported_result_that_names_a_known_endpoint_is_held_to_its_file(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    shutil.copytree(DATA / "endpoints", project / "endpoints")
    (project / "workloads").mkdir()
    written = import_vllm(tmp_path / "in", lambda doc: None)
    doc = json.loads(written.read_text())
    doc["endpoint"].update(id="acme-llama-8b", provider="Not Acme")  # a real endpoint's id
    target = project / "results" / "alice" / "acme-llama-8b" / written.name
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(doc))
    (finding,) = [f for f in validate_paths([target]).findings if f.severity == "reject"]
    assert (finding.check, finding.pointer) == ("endpoint.identity", "/endpoint/provider")
    own = project / "results" / "alice" / "vllm-own" / written.name
    doc["endpoint"]["id"] = "vllm-own"  # an id of its own, with no file: accepted
    target.unlink()  # (one run id per results tree)
    own.parent.mkdir(parents=True)
    own.write_text(json.dumps(doc))
    assert not validate_paths([own]).blocking
