"""The site tables: exact columns, valid results only, costs as hand-computed, flags carried,
the imported MLPerf fixture with its Pareto points, and plain JSON/CSV on disk."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from epbench.generator.downloads import read_csv, read_table, write_tables
from epbench.generator.importers import import_results
from epbench.generator.tables import build_tables
from tests.conftest import ROOT
from tests.generator.checks.test_validate_results import (
    AGENTIC,
    EMULATED,
    SELF_HOSTED,
    SERVICED,
    load,
    make_project,
    save,
)

TABLES_DOC = ROOT / "docs" / "tables.md"
TAGS = ("productive", "repair", "recovery", "transport")


def documented_columns() -> dict[str, list[str]]:
    """Column names per table from docs/tables.md (the contract the site codes against)."""
    out: dict[str, list[str]] = {}
    table = None
    for line in TABLES_DOC.read_text().splitlines():
        heading = re.match(r"^## (\w+)", line)
        if heading:
            table = heading.group(1)
            out[table] = []
            continue
        cell = re.match(r"^\| ([^|]+) \|", line)
        if table and cell and cell.group(1).strip() not in ("column", "---"):
            previous = ""
            for name in re.split(r",\s*|\s*/\s*", cell.group(1).strip()):
                name = name.strip()
                if name.startswith("_") and previous:  # retry_<tag>_requests / _tokens
                    name = previous.rsplit("_", 1)[0] + name
                if re.fullmatch(r"[a-z0-9_<>]+", name):
                    previous = name
                    out[table] += [name.replace("<tag>", tag) for tag in TAGS] \
                        if "<tag>" in name else [name]
    return out


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = make_project(tmp_path)
    endpoint = load(project, SERVICED)["endpoint"]
    endpoint["pricing"] = [  # the price history: the card the results pinned, then a cut
        endpoint["pricing"],
        {"input_usd_per_mtok": 0.05, "output_usd_per_mtok": 0.10,
         "effective_date": "2026-11-25", "source_url": "https://acme.example/p"},
    ]
    (project / "endpoints" / "acme-llama-8b.yaml").write_text(json.dumps(endpoint))
    return project


def test_every_documented_column_is_in_its_table(project: Path) -> None:
    tables = build_tables(project / "results", project)
    documented = documented_columns()
    assert set(documented) == {"runs", "points", "agentic", "endpoints", "history"}
    for name, columns in documented.items():
        frame = getattr(tables, name)
        missing = [c for c in columns if c not in frame.columns]
        assert not missing, (name, missing)
    assert "retry_repair_usd" in documented["agentic"]
    assert len(documented["runs"]) >= 43


def test_runs_carry_hand_computed_costs_at_run_time_and_today(project: Path) -> None:
    runs = build_tables(project / "results", project).runs.set_index("run_id")
    serviced = runs.loc["a1b2c3d4-serviced-0001"]
    assert serviced["usd_per_mtok_output"] == pytest.approx(0.102784 / 113_920 * 1e6)
    assert serviced["blended_usd_per_mtok"] == pytest.approx(0.125)
    assert serviced["usd_per_1k_requests"] == pytest.approx(0.102784 / 890 * 1000)
    assert serviced["usd_per_mtok_output_today"] == pytest.approx(0.056392 / 113_920 * 1e6)
    assert serviced["max_system_tps"] == pytest.approx(1011.2)
    assert serviced["tps_per_user_at_max_tps"] == pytest.approx(100.0)
    assert serviced["best_tps_per_user"] == pytest.approx(125.0)
    assert serviced["ttft_p90_ms_best"] == pytest.approx(150.0)
    assert serviced["error_rate"] == pytest.approx(10 / 900)
    hosted = runs.loc["b2c3d4e5-selfhost-0001"]
    assert hosted["usd_per_mtok_output"] == pytest.approx(5.0)
    assert hosted["tokens_per_kwh"] == pytest.approx(1_440_000)
    assert hosted["usd_per_mtok_output_today"] == pytest.approx(5.0)  # its card is unchanged
    agentic = runs.loc["c3d4e5f6-agentic-0001"]
    assert agentic["usd_per_successful_task"] == pytest.approx(0.008)
    assert agentic["success_rate"] == pytest.approx(0.625)
    assert agentic["usd_per_mtok_output"] == pytest.approx(0.04 / 1600 * 1e6)
    assert not runs.loc["d4e5f6a7-emulated-0001"]["rankable"]
    assert "emulated endpoint" in runs.loc["d4e5f6a7-emulated-0001"]["unranked_reasons"]
    # the samples were written before results carried their journal or an attestation:
    # shown, never ranked, self-reported with that reason
    assert not runs.loc["a1b2c3d4-serviced-0001"]["rankable"]
    assert runs.loc["a1b2c3d4-serviced-0001"]["unranked_reasons"] == [
        "self-reported: no attestation bundle", "no evidence (no journal submitted)"]
    assert (serviced["tier"], serviced["tier_reason"]) == ("self-reported",
                                                           "no attestation bundle")
    assert serviced["result_path"] == f"results/{SERVICED}"
    assert serviced["page"] == "runs/a1b2c3d4-serviced-0001/"
    assert serviced["disclosure_score"] == 1.0


def test_runs_carry_the_cost_at_their_point_of_max_throughput_beside_the_sweep_average(
        project: Path) -> None:
    tables = build_tables(project / "results", project)
    serviced = tables.runs.set_index("run_id").loc["a1b2c3d4-serviced-0001"]
    # c8, its busiest point: 600,000 uncached input at $0.10, 200,000 cached at $0.05 and
    # 101,120 output at $0.20 per M tokens, over its 101,120 output tokens
    at_c8 = (0.6 * 0.1 + 0.2 * 0.05 + 0.10112 * 0.2) / 101_120 * 1e6
    assert serviced["usd_per_mtok_output_at_max_tps"] == pytest.approx(at_c8)
    assert serviced["usd_per_mtok_output"] == pytest.approx(0.102784 / 113_920 * 1e6)
    points = tables.points.set_index(["run_id", "point"])
    assert points.loc[("a1b2c3d4-serviced-0001", "c8"), "usd_per_mtok_output"] == \
        serviced["usd_per_mtok_output_at_max_tps"]  # the same figure, to the last bit
    agentic = tables.runs.set_index("run_id").loc["c3d4e5f6-agentic-0001"]
    assert math.isnan(agentic["usd_per_mtok_output_at_max_tps"])  # no point to stand at


def test_agentic_rows_split_spend_by_retry_tag(project: Path) -> None:
    row = build_tables(project / "results", project).agentic.iloc[0]
    assert row["usd_per_task"] == pytest.approx(0.005)
    assert row["retry_spend_share"] == pytest.approx(0.25)
    assert row["retry_transport_usd"] == pytest.approx(0.002)
    assert row["retry_repair_requests"] == 3
    assert row["calls_invalid_json"] == 2
    assert row["pass_hat_k"] == {"1": 0.625, "2": pytest.approx(1 / 3)}
    assert row["usd_per_successful_task_today"] == pytest.approx(0.00136 / 5)


def test_rejected_files_never_reach_the_tables_and_flags_are_carried(project: Path) -> None:
    broken = load(project, SELF_HOSTED)
    broken["started_at"] = "2999-01-01T00:00:00Z"
    save(project, SELF_HOSTED, broken)
    flagged = load(project, EMULATED)
    del flagged["points"][0]["ttft_ms"]["insufficient"]
    save(project, EMULATED, flagged)
    point_bad = load(project, SERVICED)
    point_bad["points"][0]["system_tps"] = 5000.0
    point_bad["pareto"] = [{"point": "c1", "tps_per_user": 125.0, "system_tps": 5000.0}]
    save(project, SERVICED, point_bad)
    tables = build_tables(project / "results", project)
    runs = tables.runs.set_index("run_id")
    assert "b2c3d4e5-selfhost-0001" not in runs.index
    assert {f.status for f in tables.report.files if "selfhost" in f.path or "b2c3d4e5" in f.path} \
        == {"rejected"}
    assert runs.loc["d4e5f6a7-emulated-0001"]["flags"] == ["dist.sufficiency-unstated"]
    # the point whose derived value is wrong is dropped; the run keeps its other point
    assert "derived.system-tps" in runs.loc["a1b2c3d4-serviced-0001"]["flags"]
    assert runs.loc["a1b2c3d4-serviced-0001"]["points"] == 1
    kept = tables.points[tables.points.run_id == "a1b2c3d4-serviced-0001"]
    assert list(kept.point) == ["c8"]
    assert "b2c3d4e5-selfhost-0001" not in set(tables.history.run_id)


def test_the_imported_mlperf_fixture_appears_with_its_pareto_points(project: Path) -> None:
    from datetime import UTC, datetime

    written = import_results("mlperf-endpoints", ROOT / "tests" / "data" / "mlperf",
                             project / "results" / "acme", submitter=None,
                             when=datetime(2026, 10, 2, tzinfo=UTC))
    assert len(written) == 1
    tables = build_tables(project / "results", project)
    run = tables.runs[tables.runs.source_format == "mlperf-endpoints"].iloc[0]
    assert run["flags"] == []
    assert not run["rankable"] and "imported without journal" in run["unranked_reasons"]
    assert run["endpoint_id"] == "mlperf-sys-h100x8-vllm-llama3-8b"
    assert run["hardware"] == "8x NVIDIA H100 SXM"
    assert math.isnan(run["usd_per_mtok_output"])  # MLPerf has no price card: unknown, not free
    points = tables.points[tables.points.run_id == run["run_id"]].set_index("point")
    assert list(points.index) == ["c1", "c16", "c64", "c256"]
    assert points["on_pareto"].to_dict() == {"c1": True, "c16": True, "c64": True, "c256": False}
    # their P90 TTFT and TPOT are kept: tps_per_user = 1000 / p90 TPOT
    assert points.loc["c16", "ttft_ms_p90"] == pytest.approx(80.0)
    assert points.loc["c16", "tpot_ms_p90"] == pytest.approx(10.0)
    assert points.loc["c64", "tps_per_user"] == pytest.approx(50.0)
    assert points.loc["c64", "system_tps"] == pytest.approx(3000.0)


def test_write_tables_writes_plain_json_and_csv(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "data"
    written = write_tables(build_tables(project / "results", project), out)
    index = json.loads((out / "index.json").read_text())
    assert sorted(index["tables"]) == ["agentic", "endpoints", "history", "points", "runs"]
    dated = [part["json"] for name in ("runs", "points", "agentic", "history")
             for part in index["tables"][name]["parts"]]
    assert dated and all(re.fullmatch(r"(runs|points|agentic|history)/\d{4}-\d\d-\d\d\.json", p)
                         for p in dated)
    assert sorted(p.relative_to(out).as_posix() for p in written) == sorted(
        [*dated, *(p.removesuffix(".json") + ".csv" for p in dated), "index.json",
         "endpoints.json", "endpoints.csv"])
    for name in ("runs", "points"):
        text = "".join((out / part["json"]).read_text() for part in index["tables"][name]["parts"])
        assert "NaN" not in text and "Infinity" not in text
    rows = read_table(out, "runs")
    assert len(rows) == 4 and index["tables"]["runs"]["rows"] == 4
    hosted = next(r for r in rows if r["run_id"] == "b2c3d4e5-selfhost-0001")
    assert hosted["usd_per_mtok_output_today"] == pytest.approx(5.0)
    assert hosted["flags"] == []
    assert len(read_csv(out, "points")) == 5
    endpoints = json.loads((out / "endpoints.json").read_text())
    assert [e["endpoint_id"] for e in endpoints] == ["acme-llama-8b", "alice-h100-vllm"]
    assert endpoints[0]["blended_usd_per_mtok"] == pytest.approx((3 * 0.05 + 0.10) / 4)


def test_spreadsheet_formulas_from_files_are_neutralised_in_csv(project: Path,
                                                                tmp_path: Path) -> None:
    doc = load(project, SERVICED)
    doc["endpoint"]["provider"] = "=HYPERLINK(\"http://evil.example\")"
    save(project, SERVICED, doc)
    endpoint_file = project / "endpoints" / "acme-llama-8b.yaml"  # the identity must match
    endpoint = json.loads(endpoint_file.read_text())
    endpoint["provider"] = doc["endpoint"]["provider"]
    endpoint_file.write_text(json.dumps(endpoint))
    write_tables(build_tables(project / "results", project), tmp_path)
    providers = {row["provider"] for row in read_csv(tmp_path, "runs")}
    assert "'=HYPERLINK(\"http://evil.example\")" in providers
    reasons = {row["run_id"]: row["unranked_reasons"] for row in read_csv(tmp_path, "runs")}
    assert reasons["d4e5f6a7-emulated-0001"] == (
        "self-reported: no attestation bundle; emulated endpoint; "
        "no evidence (no journal submitted)")
    rows = read_table(tmp_path, "runs")
    assert "=HYPERLINK(\"http://evil.example\")" in {r["provider"] for r in rows}


def test_an_empty_results_folder_gives_empty_tables_with_every_column(tmp_path: Path) -> None:
    (tmp_path / "results").mkdir()
    tables = build_tables(tmp_path / "results", tmp_path)
    assert tables.runs.empty and "usd_per_mtok_output" in tables.runs.columns
    assert tables.points.empty and "on_pareto" in tables.points.columns
    assert not tables.report.blocking
    _ = AGENTIC


def test_a_folder_without_endpoint_files_lists_the_shipped_endpoints_as_run_finds_them(
        tmp_path: Path) -> None:
    # `epbench demo` in an empty folder runs the shipped emulator endpoints: the Cost page
    # must show their price cards, not "No endpoint files"
    (tmp_path / "results").mkdir()
    endpoints = build_tables(tmp_path / "results", tmp_path).endpoints
    assert {"emulator", "emulator-messages", "emulator-responses"} <= set(endpoints["endpoint_id"])
    (tmp_path / "endpoints").mkdir()  # a project's own folder wins, even when it is empty
    assert build_tables(tmp_path / "results", tmp_path).endpoints.empty


def test_result_paths_are_what_path_relative_to_gives(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from epbench.generator.tables import _Builder, _result_path_slow
    monkeypatch.chdir(tmp_path)
    for root in (tmp_path / "results", Path("results"), Path("./results/"), Path("/")):
        builder = _Builder(root, tmp_path, build=1)
        for path in (root / "a" / "b.json", root / "x" / ".." / "c.json", root,
                     tmp_path / "resultsX" / "d.json", Path("elsewhere/e.json"),
                     Path("results/../results/f.json"), Path("/tmp/g.json")):
            assert builder.result_path(path) == _result_path_slow(path, root), (root, path)


def test_a_row_takes_the_later_of_two_getters_of_one_name_and_none_where_no_getter_fills(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from epbench.generator import tables

    monkeypatch.setitem(tables.TABLE_COLUMNS, "t", ["b", "a", "unfilled", "c"])
    first = (("a", None), ("b", None))
    second = (("a", None), ("c", None))
    order = tables._Order.of("t", first, second)  # type: ignore[arg-type]
    assert order.row(["a1", "b", "a2", "c"]) == ["b", "a2", None, "c"]
    one = tables._Order.of("points", (("point", None),))  # type: ignore[arg-type]
    assert one.row([7])[tables.POINT_COLUMNS.index("point")] == 7
    assert one.row([7]).count(None) == len(tables.POINT_COLUMNS) - 1
