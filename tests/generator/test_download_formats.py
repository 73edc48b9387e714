"""The downloads' JSON and CSV (the dialect of docs/tables.md, format 2: polars writes the
files from the columns `epbench.generator.downloads.formats` prepares), against a plain
cell-by-cell reference: the same values in JSON (NaN, NA and infinities null, full precision,
integers kept integers, dicts and mixed columns as their text), the cells in CSV (missing
empty, formulas quoted, lists as JSON or joined by "; "), and the parts as slices of rows."""

from __future__ import annotations

import csv
import io
import json
import math
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from epbench.generator import downloads

FORMULA = ("=", "+", "-", "@", "\t", "\r")


def written(frame: pd.DataFrame) -> tuple[bytes, bytes]:
    """The bytes of the frame's two files, as `write_frame` writes them."""
    with tempfile.TemporaryDirectory() as folder:
        stem = Path(folder) / "table"
        downloads.write_frame(frame, stem)
        return stem.with_suffix(".json").read_bytes(), stem.with_suffix(".csv").read_bytes()


def read_back(frame: pd.DataFrame) -> tuple[list[dict[str, Any]], list[list[str]], list[str]]:
    """The frame's files read back: JSON records, CSV cells, CSV header."""
    records, table = written(frame)
    lines = list(csv.reader(io.StringIO(table.decode(), newline="")))
    return json.loads(records), lines[1:], lines[0]


def test_a_small_table_is_written_as_these_exact_bytes() -> None:
    frame = pd.DataFrame({
        "run_id": ["r1", "r2"],
        "provider": pd.Series(["=HYPERLINK(\"x\")", "Acme, Inc."], dtype="str"),
        "rankable": [True, False],
        "points": [6, 0],
        "max_system_tps": [1234.5, float("nan")],
        "tiny": [1e-7, 1e16],
        "flags": [["price.stale"], []],
        "unranked_reasons": [["quick run", "-emulated"], None],
        "pass_hat_k": [{"1": 0.625, "2": 0.5}, None],
        "journal_path": np.array([None, None], dtype=object),
    })
    records, table = written(frame)
    assert records == (
        b'[{"run_id":"r1","provider":"=HYPERLINK(\\"x\\")","rankable":true,"points":6,'
        b'"max_system_tps":1234.5,"tiny":1e-7,"flags":["price.stale"],'
        b'"unranked_reasons":["quick run","-emulated"],'
        b'"pass_hat_k":"{\\"1\\":0.625,\\"2\\":0.5}","journal_path":null},'
        b'{"run_id":"r2","provider":"Acme, Inc.","rankable":false,"points":0,'
        b'"max_system_tps":null,"tiny":1e+16,"flags":[],"unranked_reasons":null,'
        b'"pass_hat_k":null,"journal_path":null}]\n')
    assert table == (
        b"run_id,provider,rankable,points,max_system_tps,tiny,flags,unranked_reasons,"
        b"pass_hat_k,journal_path\n"
        b'r1,"\'=HYPERLINK(""x"")",true,6,1234.5,1e-7,"[""price.stale""]",quick run; -emulated,'
        b'"{""1"":0.625,""2"":0.5}",\n'
        b'r2,"Acme, Inc.",false,0,,1e+16,[],,,\n')


def test_missing_values_nan_and_infinities_are_null_in_json_and_empty_in_csv() -> None:
    frame = pd.DataFrame({
        "x": [1.5, float("nan"), float("inf"), -float("inf"), 0.1 + 0.2],
        "name": pd.Series(["a", None, "b", None, ""], dtype="str"),
        "rate": np.array([None, 2.0, float("nan"), float("inf"), 3.25], dtype=object),
        "count": np.array([None, 1, 2, None, 3], dtype=object),
        "ok": np.array([True, None, False, None, True], dtype=object),
    })
    records, cells, _ = read_back(frame)
    assert [r["x"] for r in records] == [1.5, None, None, None, 0.30000000000000004]
    assert [r["name"] for r in records] == ["a", None, "b", None, ""]
    assert [r["rate"] for r in records] == [None, 2.0, None, None, 3.25]
    assert [r["count"] for r in records] == [None, 1, 2, None, 3]
    assert [r["ok"] for r in records] == [True, None, False, None, True]
    assert cells[1] == ["", "", "2.0", "1", ""]
    assert cells[2] == ["", "b", "", "2", "false"]
    assert written(frame)[1].splitlines()[-1] == b'0.30000000000000004,"",3.25,3,true'
    check(frame)


def test_text_is_escaped_in_json_and_quoted_only_where_needed_in_csv() -> None:
    odd = ['say "hi"', "back\\slash", "line\nbreak", "a,b", "tab\tin", "\x00\x1f", "café ☕",
           "cr\rin", "plain"]
    frame = pd.DataFrame({"text": pd.Series(odd, dtype="str"),
                          "object": np.array(odd, dtype=object)})
    records, cells, _ = read_back(frame)
    assert [r["text"] for r in records] == odd == [r["object"] for r in records]
    assert [c[0] for c in cells] == odd
    table = written(frame)[1]
    assert table.splitlines()[-1] == b"plain,plain"  # no quotes where none are needed
    assert b'"a,b","a,b"\n' in table and b'"say ""hi""","say ""hi"""\n' in table
    check(frame)


def test_formula_like_text_is_prefixed_with_a_quote_in_csv_only() -> None:
    risky = ["=HYPERLINK(\"http://evil.example\")", "+1", "-2", "@SUM(A1)", "\tx", "\ry", "a=b"]
    frame = pd.DataFrame({"provider": pd.Series(risky, dtype="str"),
                          "model": np.array(risky, dtype=object),
                          "hardware": pd.Categorical(risky),
                          "unranked_reasons": [["=bad", "ok"], ["-x"], [], None, ["a"], ["b"],
                                               ["c"]]})
    records, cells, _ = read_back(frame)
    assert [r["provider"] for r in records] == risky == [r["hardware"] for r in records]
    defused = ["'" + v for v in risky[:-1]] + ["a=b"]
    assert [c[0] for c in cells] == defused == [c[1] for c in cells] == [c[2] for c in cells]
    assert [c[3] for c in cells] == ["'=bad; ok", "'-x", "", "", "a", "b", "c"]
    check(frame)


def test_a_column_mixing_kinds_is_text_and_its_numbers_are_never_prefixed() -> None:
    frame = pd.DataFrame({"mixed": np.array(["text", 5, -2.5, "-x", True, None], dtype=object),
                          "n": range(6)})
    records, cells, _ = read_back(frame)
    assert [r["mixed"] for r in records] == ["text", "5", "-2.5", "-x", "true", None]
    assert [c[0] for c in cells] == ["text", "5", "-2.5", "'-x", "true", ""]


def test_lists_are_arrays_dicts_are_their_json_text_and_unranked_reasons_are_joined() -> None:
    frame = pd.DataFrame({
        "unranked_reasons": [["quick run", "emulated endpoint"], [], None],
        "flags": [["price.stale"], [], None],
        "empty": [[], [], None],
        "pass_hat_k": [{"1": 0.625, "2": float("nan")}, None, {"1": np.float64(0.5)}],
        "bfcl": [[{"category": "simple", "n": 3, "low": None}], None, []],
        "numbers": [[1.5, float("inf")], [], None],
    })
    records, cells, _ = read_back(frame)
    assert [r["unranked_reasons"] for r in records] == [["quick run", "emulated endpoint"],
                                                        [], None]
    assert [r["flags"] for r in records] == [["price.stale"], [], None]
    assert [r["empty"] for r in records] == [[], [], None]
    assert [r["pass_hat_k"] for r in records] == ['{"1":0.625,"2":null}', None, '{"1":0.5}']
    assert json.loads(records[0]["pass_hat_k"]) == {"1": 0.625, "2": None}
    assert [r["bfcl"] for r in records] == ['[{"category":"simple","n":3,"low":null}]', None,
                                            "[]"]
    assert [r["numbers"] for r in records] == [[1.5, None], [], None]
    assert [c[0] for c in cells] == ["quick run; emulated endpoint", "", ""]
    assert [c[1] for c in cells] == ['["price.stale"]', "[]", ""]
    assert [c[2] for c in cells] == ["[]", "[]", ""]
    assert [c[3] for c in cells] == ['{"1":0.625,"2":null}', "", '{"1":0.5}']
    assert [c[5] for c in cells] == ["[1.5,null]", "[]", ""]


def test_whole_numbers_keep_their_type_in_json() -> None:
    frame = pd.DataFrame({"f": [5.0, -0.0, 1e16, 1e-7], "i": [5, 0, 10**16, -(2**63)],
                          "ints": np.array([1, 2, None, 3], dtype=object)})
    records, cells, _ = read_back(frame)
    assert [type(r["f"]) for r in records] == [float] * 4
    assert [r["i"] for r in records] == [5, 0, 10**16, -(2**63)]
    assert [r["ints"] for r in records] == [1, 2, None, 3]
    assert [c[0] for c in cells] == ["5.0", "-0.0", "1e+16", "1e-7"]
    check(frame)


def test_nullable_pandas_types_are_written_like_numpy_ones() -> None:
    frame = pd.DataFrame({"i": pd.array([1, None, 3], dtype="Int64"),
                          "b": pd.array([True, None, False], dtype="boolean"),
                          "f": pd.array([1.5, None, 2.0], dtype="Float64"),
                          "c": pd.Categorical(["x", None, "=y"])})
    records, cells, _ = read_back(frame)
    assert records == [{"i": 1, "b": True, "f": 1.5, "c": "x"},
                       {"i": None, "b": None, "f": None, "c": None},
                       {"i": 3, "b": False, "f": 2.0, "c": "=y"}]
    assert cells == [["1", "true", "1.5", "x"], ["", "", "", ""], ["3", "false", "2.0", "'=y"]]


def test_the_parts_of_a_table_are_its_rows_in_order_and_an_empty_part_is_an_empty_array(
        tmp_path: Path) -> None:
    frame = pd.DataFrame({"date": ["2026-11-01", "", "2026-11-02", "2026-11-01"],
                          "a": [1, 2, 3, 4], "b": ["w", "x", "y", "z"]})
    positions = downloads.part_keys(frame)
    downloads._write_parts(frame, positions, sorted(positions), tmp_path)
    assert (tmp_path / "2026-11-01.json").read_bytes() == (
        b'[{"date":"2026-11-01","a":1,"b":"w"},{"date":"2026-11-01","a":4,"b":"z"}]\n')
    assert (tmp_path / "2026-11-02.csv").read_bytes() == b"date,a,b\n2026-11-02,3,y\n"
    assert (tmp_path / "undated.csv").read_bytes() == b'date,a,b\n"",2,x\n'
    assert written(frame.iloc[:0]) == (b"[]\n", b"date,a,b\n")


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


def test_a_written_table_reads_back_through_read_table_and_read_csv(tmp_path: Path) -> None:
    runs = pd.DataFrame({"date": ["2026-11-02", "2026-11-01"], "run_id": ["b", "a"],
                         "provider": ["-1 Cloud", "Acme"], "rankable": [False, True],
                         "unranked_reasons": [["quick run"], []]})
    tables = type("Tables", (), {name: runs.iloc[:0] for name in ("points", "agentic",
                                                                   "history", "endpoints")})()
    tables.runs = runs
    downloads.write_tables(tables, tmp_path)
    index = json.loads((tmp_path / "index.json").read_text())
    assert index["format"] == downloads.FORMAT == 2
    assert [p["part"] for p in index["tables"]["runs"]["parts"]] == ["2026-11-01", "2026-11-02"]
    assert downloads.read_table(tmp_path, "runs") == [
        {"date": "2026-11-01", "run_id": "a", "provider": "Acme", "rankable": True,
         "unranked_reasons": []},
        {"date": "2026-11-02", "run_id": "b", "provider": "-1 Cloud", "rankable": False,
         "unranked_reasons": ["quick run"]}]
    assert downloads.read_csv(tmp_path, "runs") == [
        {"date": "2026-11-01", "run_id": "a", "provider": "Acme", "rankable": "true",
         "unranked_reasons": ""},
        {"date": "2026-11-02", "run_id": "b", "provider": "'-1 Cloud", "rankable": "false",
         "unranked_reasons": "quick run"}]
    assert downloads.read_table(tmp_path, "points") == []


# --- any frame: the reference, cell by cell ---------------------------------------------------

def plain(value: Any) -> Any:
    """A value as JSON reads it back (the reference): NaN, NA and infinities null."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if value is None or value is pd.NA:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def as_text(value: Any) -> str | None:
    """A cell of a dict or mixed column: text as it is, anything else its JSON (orjson's)."""
    if isinstance(value, str):
        return value
    token = orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY).decode()
    return None if token == "null" else token


def defused(text: str) -> str:
    return "'" + text if text.startswith(FORMULA) else text


TEXTUAL = ("dicts", "mixed")
"""The reference's columns written as text (dicts; a mix of kinds)."""


def record_of(value: Any, column: str) -> Any:
    return as_text(value) if column in TEXTUAL else plain(value)


def cell_of(value: Any, column: str) -> str:
    """A CSV cell as the dialect writes it (the reference)."""
    if column in TEXTUAL:
        text = as_text(value)
        return "" if text is None else defused(text) if isinstance(value, str) else text
    value = plain(value)
    if value is None:
        return ""
    if column == "unranked_reasons":
        return defused("; ".join(value))
    if isinstance(value, list):
        return orjson.dumps(value).decode()
    if isinstance(value, bool):
        return "true" if value else "false"
    return defused(value) if isinstance(value, str) else str(value)


def check(frame: pd.DataFrame) -> None:
    records, cells, header = read_back(frame)
    columns = [str(c) for c in frame.columns]
    assert header == columns
    assert len(records) == len(cells) == len(frame)
    for i in range(len(frame)):
        for j, column in enumerate(columns):
            value = frame.iloc[i, j]
            want = record_of(value, column)
            got = records[i][column]
            assert got == want and type(got) is type(want), (column, value, got)
            cell = cells[i][j]
            if isinstance(want, float):
                assert float(cell) == want, (column, value, cell)  # (polars' float form)
            else:
                assert cell == cell_of(value, column), (column, value, cell)


TEXT = st.text(st.characters(codec="utf-8"), max_size=8) | st.sampled_from(
    ["=1", "-x", "@a", "\tb", "\rc", 'q"', "a,b", "l\nm", "", "\\"])
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

    mixed = objects(st.none() | TEXT | FLOAT | INT | st.booleans())
    mixed[:2] = ["text", 5][:size]  # (text and a number: always a mix)
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
        "numbers": objects(st.none() | st.lists(FLOAT, max_size=3)),
        "dicts": objects(st.none() | st.dictionaries(TEXT, FLOAT, max_size=2)),
        "mixed": mixed,
    }
    return pd.DataFrame(columns)


@given(frames())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_frame_reads_back_as_the_cell_by_cell_reference(frame: pd.DataFrame) -> None:
    check(frame)


def test_the_module_names_the_one_joined_column() -> None:
    assert downloads.JOINED == "unranked_reasons"
