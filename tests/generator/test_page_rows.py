"""A full build's page workers each make the rows and digests of their own slice of the runs
table: every slice gives exactly what the whole table gives, also where a column's values
differ in kind between slices (texts and NaN in one, lists and numpy numbers in another)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

from epbench.generator.build.page_manifest import page_digests
from epbench.generator.page_rows import FrameRows, RowList, page_columns
from epbench.generator.plain_json import records
from epbench.generator.render import environment, frontier_by_run, result_context
from epbench.generator.tables import build_tables
from tests.browser.site_data import make_project


def tables() -> SimpleNamespace:
    runs = pd.DataFrame({
        "run_id": ["run-aaaa-0001", "run-bbbb-0002", "run-cccc-0003", "run-dddd-0004"],
        "result_path": [f"results/{c}.json" for c in "abcd"],
        "quality": ["fast", float("nan"), ["two", "parts"], np.int64(3)],
        "flags": [[], ["stale"], [], [float("nan")]],
        "disclosure_score": [0.5, float("inf"), float("nan"), 1.0],
        "system_tps": [1000.5, 900.0, float("nan"), 2.0],
    })
    points = pd.DataFrame({
        "run_id": ["run-aaaa-0001", "run-aaaa-0001", "run-bbbb-0002", "run-dddd-0004"],
        "point": ["c1", "c2", "c1", "c8"],
        "on_pareto": [True, True, None, True],
        "system_tps": [1.0, 2.0, 3.0, 4.0],
    })
    return SimpleNamespace(runs=runs, points=points)


SHAS = {f"results/{c}.json": c * 64 for c in "abc"}


def whole() -> tuple[list[dict], list[str | None]]:
    t = tables()
    front = frontier_by_run(t.points)
    rows = [{**r, "frontier": front.get(r["run_id"], [])} for r in records(page_columns(t.runs))]
    return rows, page_digests(t.runs, front, SHAS, "ctx")


def test_slices_of_the_runs_table_give_the_rows_and_digests_of_the_whole_table() -> None:
    rows, digests = whole()
    source = FrameRows.of(tables(), SHAS, "ctx")
    assert len(source) == 4
    for cut in range(5):
        first, second = source.take(0, cut), source.take(cut, 4)
        assert repr(first[0] + second[0]) == repr(rows)  # NaN is not equal to itself
        assert first[1] + second[1] == digests
    assert [type(r["quality"]) for r in rows] == [str, type(None), list, int]
    assert "system_tps" not in rows[0]  # a page reads only its columns; the digest takes all
    assert rows[0]["frontier"] == ["c1", "c2"] and rows[1]["frontier"] == []
    assert digests[3] is None and None not in digests[:3]


def test_without_file_hashes_no_digests_are_made() -> None:
    rows, digests = FrameRows.of(tables(), None, "").take(1, 3)
    assert [r["run_id"] for r in rows] == ["run-bbbb-0002", "run-cccc-0003"]
    assert digests == [None, None]


def test_a_list_of_made_rows_hands_out_its_slices_with_their_digests() -> None:
    rows, digests = whole()
    made = RowList(rows, digests)
    assert len(made) == 4 and made.take(1, 3) == (rows[1:3], digests[1:3])
    assert made.take(1, 3)[0][0] is rows[1]


def test_a_result_page_rendered_from_its_columns_is_the_page_of_its_whole_row(
        tmp_path: Path) -> None:
    project = make_project(tmp_path, generated=6)
    tables = build_tables(project / "results", project)
    front = frontier_by_run(tables.points)
    template = environment().get_template("result.html.j2")
    whole_rows = records(tables.runs)
    rows, _ = FrameRows.of(tables, None, "").take(0, len(tables.runs))
    assert len(rows) == len(whole_rows) == 12  # site_data: 4 samples, 6 made, 1 copy, 1 fleet
    for row, whole_row in zip(rows, whole_rows, strict=True):
        doc = json.loads((project / whole_row["result_path"]).read_text(encoding="utf-8"))
        full = {**whole_row, "frontier": front.get(whole_row["run_id"], [])}
        assert template.render(**result_context(doc, row, root="../../")) == \
            template.render(**result_context(doc, full, root="../../"))
