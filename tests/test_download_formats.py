"""The downloads' JSON and CSV (generator/download_formats.py), made column by column, against
a plain cell-by-cell reference: the same values in JSON (NaN, NA and infinities as null, full
precision, integers kept integers), the cells the csv module wrote before in CSV (missing
empty, formulas quoted, lists as JSON or joined by "; "), and the parts as slices of rows."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from epbench.generator import download_formats, downloads
from epbench.generator.download_formats import rows

FORMULA = ("=", "+", "-", "@", "\t", "\r")


def plain(value: Any) -> Any:
    """A cell as JSON reads it back (the reference)."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if value is None or value is pd.NA:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def shown(value: Any, column: str) -> str:
    """A cell as the csv module wrote it before (the reference)."""
    if column == "unranked_reasons" and isinstance(value, list):
        value = "; ".join(str(v) for v in value)
    if isinstance(value, (list, dict)):
        value = json.dumps(value, ensure_ascii=False)
    if isinstance(value, str):
        return "'" + value if value.startswith(FORMULA) else value
    value = plain(value)
    return "" if value is None else str(value)


def written(frame: pd.DataFrame) -> tuple[list[dict[str, Any]], list[list[str]], list[str]]:
    """The frame through `rows`: JSON records, CSV cells, CSV header."""
    made = rows(frame)
    text = b"".join(bytes(p) for p in made.json_part(0, len(frame)))
    table = b"".join(bytes(p) for p in made.csv_part(0, len(frame))).decode()
    lines = list(csv.reader(io.StringIO(table, newline="")))
    return json.loads(text), lines[1:], lines[0]


def check(frame: pd.DataFrame) -> None:
    records, cells, header = written(frame)
    columns = [str(c) for c in frame.columns]
    assert header == columns
    assert len(records) == len(cells) == len(frame)
    for i in range(len(frame)):
        for j, column in enumerate(columns):
            value = frame.iloc[i, j]
            want = plain(value)
            got = records[i][column]
            assert got == want and type(got) is type(want), (column, value, got)
            cell = cells[i][j]
            if isinstance(want, float) and not isinstance(value, (list, dict)):
                assert float(cell) == want, (column, value, cell)  # (5e-324 or 5e-324)
            else:
                assert cell == shown(value, column), (column, value, cell)


def test_missing_values_nan_and_infinities_are_null_in_json_and_empty_in_csv() -> None:
    frame = pd.DataFrame({
        "x": [1.5, float("nan"), float("inf"), -float("inf"), 0.1 + 0.2],
        "name": pd.Series(["a", None, "b", None, "c"], dtype="str"),
        "rate": np.array([None, 2.0, float("nan"), float("inf"), 3.25], dtype=object),
        "count": np.array([None, 1, 2, None, 3], dtype=object),
        "ok": np.array([True, None, False, None, True], dtype=object),
    })
    records, cells, _ = written(frame)
    assert [r["x"] for r in records] == [1.5, None, None, None, 0.30000000000000004]
    assert [r["name"] for r in records] == ["a", None, "b", None, "c"]
    assert [r["rate"] for r in records] == [None, 2.0, None, None, 3.25]
    assert [r["count"] for r in records] == [None, 1, 2, None, 3]
    assert [r["ok"] for r in records] == [True, None, False, None, True]
    assert cells[1] == ["", "", "2.0", "1", ""]
    assert cells[2] == ["", "b", "", "2", "False"]
    check(frame)


def test_text_is_escaped_in_json_and_quoted_only_where_needed_in_csv() -> None:
    odd = ['say "hi"', "back\\slash", "line\nbreak", "a,b", "tab\tin", "\x00\x1f", "café ☕",
           "", "plain"]
    frame = pd.DataFrame({"text": pd.Series(odd, dtype="str"),
                          "object": np.array(odd, dtype=object)})
    records, cells, _ = written(frame)
    assert [r["text"] for r in records] == odd == [r["object"] for r in records]
    assert [c[0] for c in cells] == odd
    made = rows(frame)
    table = b"".join(bytes(p) for p in made.csv_part(0, len(frame))).decode()
    assert table.splitlines()[-1] == "plain,plain"  # no quotes where none are needed
    check(frame)


def test_formula_like_text_is_prefixed_with_a_quote_in_csv_only() -> None:
    risky = ["=HYPERLINK(\"http://evil.example\")", "+1", "-2", "@SUM(A1)", "\tx", "\ry", "a=b"]
    frame = pd.DataFrame({"provider": pd.Series(risky, dtype="str"),
                          "unranked_reasons": [["=bad", "ok"], ["-x"], [], None, ["a"], ["b"],
                                               ["c"]]})
    records, cells, _ = written(frame)
    assert [r["provider"] for r in records] == risky
    assert [c[0] for c in cells] == ["'" + v for v in risky[:-1]] + ["a=b"]
    assert [c[1] for c in cells] == ["'=bad; ok", "'-x", "", "", "a", "b", "c"]
    check(frame)


def test_lists_and_dicts_are_json_and_unranked_reasons_are_joined_in_csv() -> None:
    frame = pd.DataFrame({
        "unranked_reasons": [["quick run", "emulated endpoint"], [], None],
        "flags": [["price.stale"], [], None],
        "empty": [[], [], None],
        "pass_hat_k": [{"1": 0.625, "2": float("nan")}, None, {"1": np.float64(0.5)}],
        "mixed": np.array(["text", 5, 2.5], dtype=object),
    })
    records, cells, _ = written(frame)
    assert records[0]["pass_hat_k"] == {"1": 0.625, "2": None}
    assert records[2]["pass_hat_k"] == {"1": 0.5}
    assert [r["flags"] for r in records] == [["price.stale"], [], None]
    assert [c[0] for c in cells] == ["quick run; emulated endpoint", "", ""]
    assert [c[1] for c in cells] == ['["price.stale"]', "[]", ""]
    assert [r["mixed"] for r in records] == ["text", 5, 2.5]
    assert [c[4] for c in cells] == ["text", "5", "2.5"]


def test_whole_numbers_keep_their_type_in_json() -> None:
    frame = pd.DataFrame({"f": [5.0, -0.0, 1e16, 1e-7], "i": [5, 0, 10**16, -(2**63)],
                          "mix": np.array([1, 2.0, None, 3], dtype=object),
                          "flag_and_float": np.array([True, 1.5, None, 2.0], dtype=object)})
    records, _, _ = written(frame)
    assert [type(r["f"]) for r in records] == [float] * 4
    assert [r["i"] for r in records] == [5, 0, 10**16, -(2**63)]
    assert [r["mix"] for r in records] == [1, 2.0, None, 3]
    assert [type(r["mix"]) for r in records] == [int, float, type(None), int]
    assert [r["flag_and_float"] for r in records] == [True, 1.5, None, 2.0]
    check(frame)


def test_nullable_pandas_types_are_written_like_numpy_ones() -> None:
    frame = pd.DataFrame({"i": pd.array([1, None, 3], dtype="Int64"),
                          "b": pd.array([True, None, False], dtype="boolean"),
                          "f": pd.array([1.5, None, 2.0], dtype="Float64"),
                          "c": pd.Categorical(["x", None, "=y"])})
    records, cells, _ = written(frame)
    assert records == [{"i": 1, "b": True, "f": 1.5, "c": "x"},
                       {"i": None, "b": None, "f": None, "c": None},
                       {"i": 3, "b": False, "f": 2.0, "c": "=y"}]
    assert cells == [["1", "True", "1.5", "x"], ["", "", "", ""], ["3", "False", "2.0", "'=y"]]


def test_a_part_is_a_slice_of_the_rows_and_an_empty_frame_writes_an_empty_array() -> None:
    frame = pd.DataFrame({"a": [1, 2, 3, 4], "b": ["w", "x", "y", "z"]})
    made = rows(frame)
    middle = json.loads(b"".join(bytes(p) for p in made.json_part(1, 3)))
    assert middle == [{"a": 2, "b": "x"}, {"a": 3, "b": "y"}]
    assert b"".join(bytes(p) for p in made.csv_part(3, 4)) == b"a,b\n4,z\n"
    empty = rows(frame.iloc[:0])
    assert b"".join(bytes(p) for p in empty.json_part(0, 0)) == b"[]\n"
    assert b"".join(bytes(p) for p in empty.csv_part(0, 0)) == b"a,b\n"


def test_a_table_written_in_small_blocks_gives_the_same_bytes(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    days = ["2026-11-0" + str(1 + i % 5) for i in range(40)]
    frame = pd.DataFrame({"date": days, "run_id": [f"r{i}" for i in range(40)],
                          "value": np.linspace(0, 1, 40)})
    positions = downloads.part_keys(frame)
    order = sorted(positions)
    whole = downloads._write_parts(frame, positions, order, tmp_path / "whole")
    monkeypatch.setattr(downloads, "BLOCK", 7)
    assert len(downloads._blocks(order, positions)) == 5  # 8 rows a part: one part a block
    monkeypatch.setattr(downloads, "BLOCK", 17)
    assert len(downloads._blocks(order, positions)) == 3
    small = downloads._write_parts(frame, positions, order, tmp_path / "small")
    assert [p.read_bytes() for p in whole] == [p.read_bytes() for p in small]


# --- any frame: the reference, cell by cell ---------------------------------------------------

TEXT = st.text(st.characters(codec="utf-8"), max_size=8) | st.sampled_from(
    ["=1", "-x", "@a", "\tb", 'q"', "a,b", "l\nm", "", "\\"])
FLOAT = st.floats(allow_nan=True, allow_infinity=True)
INT = st.integers(-(2**63), 2**63 - 1)


@st.composite
def frames(draw: st.DrawFn) -> pd.DataFrame:
    size = draw(st.integers(0, 6))

    def cells(strategy: st.SearchStrategy[Any]) -> list[Any]:
        return draw(st.lists(strategy, min_size=size, max_size=size))

    def objects(strategy: st.SearchStrategy[Any]) -> np.ndarray:
        column = np.empty(size, dtype=object)  # (np.array would nest lists of lists)
        column[:] = cells(strategy)
        return column

    columns: dict[str, Any] = {
        "f": np.array(cells(FLOAT), dtype=float),
        "i": np.array(cells(INT), dtype=np.int64),
        "b": np.array(cells(st.booleans()), dtype=bool),
        "s": pd.Series(cells(st.none() | TEXT), dtype="str"),
        "text": objects(st.none() | TEXT),
        "maybe_float": objects(st.none() | FLOAT),
        "maybe_int": objects(st.none() | INT),
        "maybe_bool": objects(st.none() | st.booleans()),
        "unranked_reasons": objects(st.none() | st.lists(TEXT, max_size=3)),
        "flags": objects(st.none() | st.lists(TEXT, max_size=3)),
        "numbers": objects(st.none() | st.lists(FLOAT | INT, max_size=3)),
        "dicts": objects(st.none() | st.dictionaries(TEXT, FLOAT, max_size=2)),
        "mixed": objects(st.none() | TEXT | FLOAT | INT | st.booleans()),
    }
    return pd.DataFrame(columns)


@given(frames())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_frame_reads_back_as_the_cell_by_cell_reference(frame: pd.DataFrame) -> None:
    check(frame)


def test_the_module_names_the_one_joined_column() -> None:
    assert download_formats.JOINED == "unranked_reasons"
