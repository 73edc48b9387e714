"""The run page marks the frontier the board shows: epbench.core's, over the points the validator
kept, not the list the file states."""

from __future__ import annotations

from pathlib import Path

from epbench.generator.render import POINT_COLUMNS, frontier_by_run, result_context
from epbench.generator.tables import build_tables
from tests.generator.checks.test_validate_results import SERVICED, load, make_project, save


def test_a_rejected_point_on_the_stated_frontier_is_marked_on_neither_page(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    doc = load(project, SERVICED)
    assert {e["point"] for e in doc["pareto"]} == {"c1", "c8"}
    doc["points"][1]["requests"]["failed"] = 9  # derived.failed-count rejects point c8
    save(project, SERVICED, doc)
    tables = build_tables(project / "results", project)
    points = tables.points[tables.points["run_id"] == doc["run_id"]]
    assert list(points["point"]) == ["c1"] and list(points["on_pareto"]) == [True]
    on_front = frontier_by_run(tables.points)
    assert on_front[doc["run_id"]] == ["c1"]
    row = {"run_id": doc["run_id"], "frontier": on_front[doc["run_id"]]}
    frontier = POINT_COLUMNS.index("on frontier")
    marks = {p[0]: p[frontier] for p in result_context(doc, row, root="../../")["points"]}
    assert marks == {"c1": True, "c8": False}


def test_every_run_page_marks_exactly_the_points_tables_frontier(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    tables = build_tables(project / "results", project)
    on_front = frontier_by_run(tables.points)
    board = {(r, p) for r, p, on in zip(tables.points["run_id"], tables.points["point"],
                                        tables.points["on_pareto"], strict=True) if on}
    assert board and board == {(r, p) for r, ids in on_front.items() for p in ids}
