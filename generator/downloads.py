"""The public downloads: every table as JSON and CSV, the dated tables in one part per run
date, written only where a part changed.

Layout (docs/tables.md, "Downloads"): `data/index.json` lists every table with its columns,
its row count and its parts; `runs`, `points`, `agentic` and `history` are folders of daily
parts, `data/<table>/<YYYY-MM-DD>.json|csv` (rows without a date: `undated`), each part in
the table's own row order; `endpoints` is one file, `data/endpoints.json|csv`. Concatenating
the parts gives every row of the table.

A continuous benchmark adds results to today's part: one new result rewrites the parts of its
day, not the 800 MB of every table. A part's digest is what its rows are made from: each
run's result path and file sha256, the code and data context of the build cache, and the
columns that a build computes across files (rankability, the quality gate, flags), so a part
is written again when any of them changed and kept otherwise (the manifest lives in the build
cache folder; a part counts only while its files are still there).

The files are written by polars (`write_json`; `write_csv` quoting only where needed) from
two frames a block of rows is turned into, column by column (`formats`): what the download
dialect (docs/tables.md, "What the files hold") asks beyond a plain writer is done there, in
compiled code except for the rare cells that are JSON values. JSON: NaN and infinities null;
lists of text or numbers as arrays; a dict, a list of dicts or a column mixing kinds as text
(its JSON, strings as they are). CSV: the same, missing values empty, every list as its JSON
text except `unranked_reasons` joined by "; ", and text that a spreadsheet would run as a
formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage return) prefixed with `'`
(CSV injection).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    from epbench.generator.tables import Tables

FORMAT = 2
"""The download format, `format` in `data/index.json`: 2 since polars writes the files (the
dialect of docs/tables.md); 1 was the hand-written writer's."""
DATED = ("runs", "points", "agentic", "history")
WHOLE = ("endpoints",)
UNDATED = "undated"
BLOCK = 50_000
"""Rows converted together (`formats`), so that the memory of a build stays bounded; a
smaller block pays more per column call than it saves."""
JOINED = "unranked_reasons"
"""The one list column a CSV cell shows as its items joined by "; " (a reader's sentence),
not as JSON."""
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet runs as a formula when a cell starts with it."""
_FORMULA = r"^([=+\-@\t\r])"
_JSON = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS
_ACROSS_FILES = ("rankable", "unranked_reasons", "flags", "quality", "quality_below", "bfcl",
                 "journal_path", "tier", "tier_reason", "confirmation", "confirmed_by")
"""Run columns a build computes from more than the run's own file (from other files, the
clock, or the journal beside it)."""
_AGENTIC_ACROSS = ("quality", "quality_reference_run", "quality_reference_rate",
                   "quality_reference_low", "quality_reference_high", "quality_p",
                   "quality_below")


def part_of(day: Any) -> str:
    """The part a row with this `date` lands in."""
    return str(day) if isinstance(day, str) and day else UNDATED


def parts(tables: Tables) -> dict[str, list[str]]:
    """Table -> its part names, oldest first (what the index and the pages list)."""
    out: dict[str, list[str]] = {}
    for name in DATED:
        frame: pd.DataFrame = getattr(tables, name)
        days = {part_of(d) for d in frame["date"].tolist()} if not frame.empty else set()
        out[name] = sorted(days, key=_order)
    return out


def _order(part: str) -> tuple[bool, str]:
    return part != UNDATED, part


def write_frame(frame: pd.DataFrame, stem: Path) -> list[Path]:
    """`<stem>.json` (records, NaN -> null) and `<stem>.csv` of one whole frame."""
    return _write_parts(frame, {stem.name: np.arange(len(frame))}, [stem.name], stem.parent)


def _write_parts(frame: pd.DataFrame, positions: dict[str, np.ndarray], todo: list[str],
                 folder: Path) -> list[Path]:
    """Write the parts in `todo` (each the rows at its `positions`, in the frame's order),
    converting only those rows, once, in blocks of whole parts of about `BLOCK` rows
    (`formats`)."""
    if not todo:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for block in _blocks(todo, positions):
        where = np.concatenate([positions[p] for p in block])
        same = len(where) == len(frame) and bool((where == np.arange(len(frame))).all())
        records, cells = formats(frame if same else frame.iloc[where])
        start = 0
        for part in block:
            length = len(positions[part])
            json_path, csv_path = folder / f"{part}.json", folder / f"{part}.csv"
            with json_path.open("wb") as handle:
                records.slice(start, length).write_json(handle)
                handle.write(b"\n")
            cells.slice(start, length).write_csv(csv_path, quote_style="necessary")
            written += [json_path, csv_path]
            start += length
    return written


def _blocks(todo: list[str], positions: dict[str, np.ndarray]) -> list[list[str]]:
    """`todo` in runs of whole parts of at most `BLOCK` rows (a larger part alone)."""
    blocks: list[list[str]] = [[]]
    size = 0
    for part in todo:
        if blocks[-1] and size + len(positions[part]) > BLOCK:
            blocks.append([])
            size = 0
        blocks[-1].append(part)
        size += len(positions[part])
    return blocks


# --- the dialect: the columns polars writes ------------------------------------------------

def formats(frame: pd.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The frame as the two frames its JSON records and its CSV are written from."""
    records, cells = [], []
    for i, name in enumerate(str(c) for c in frame.columns):
        record, cell = _column(frame.iloc[:, i], name)
        records.append(record.alias(name))
        cells.append(cell.alias(name))
    return pl.DataFrame(records, height=len(frame)), pl.DataFrame(cells, height=len(frame))


def _column(series: pd.Series, name: str) -> tuple[pl.Series, pl.Series]:
    """One column as its JSON and its CSV cells."""
    values = series.to_numpy() if series.dtype == object else None
    try:
        array = pa.array(values if values is not None else series, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):  # a mix of kinds
        return _as_text(values if values is not None else series.to_numpy(dtype=object))
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    kind = array.type
    if pa.types.is_floating(kind):  # NaN is null already (from_pandas)
        array = pc.if_else(pc.is_finite(array), array, None)
    if pa.types.is_list(kind) and pa.types.is_null(kind.value_type):  # only [] and None
        array, kind = array.cast(pa.list_(pa.string())), pa.list_(pa.string())
    if pa.types.is_list(kind) and _scalar(kind.value_type):
        record = pl.Series(array)  # (write_json writes NaN inside a list as null)
        if name == JOINED and pa.types.is_string(kind.value_type):
            return record, _defused(record.list.join("; "))
        shown = _json_texts(values if values is not None else array.to_pylist())
        return record, pl.Series(shown, dtype=pl.String)
    if not _scalar(kind):  # dicts, lists of dicts, ...
        return _as_text(values if values is not None else series.to_numpy(dtype=object))
    record = pl.Series(array)
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return record, _defused(record)
    return record, record


def _scalar(kind: pa.DataType) -> bool:
    return (pa.types.is_null(kind) or pa.types.is_boolean(kind) or pa.types.is_integer(kind)
            or pa.types.is_floating(kind) or pa.types.is_string(kind)
            or pa.types.is_large_string(kind))


def _defused(text: pl.Series) -> pl.Series:
    """Text with a quote before what a spreadsheet would run as a formula."""
    return text.str.replace(_FORMULA, "'$1")


def _as_text(values: np.ndarray) -> tuple[pl.Series, pl.Series]:
    """Cells of a column polars holds no type for (dicts, a mix of kinds), one by one, as
    text: strings as they are (a formula quoted in the CSV), anything else as its JSON
    (NaN and infinities null); missing is null."""
    texts = _json_texts(values)
    record = [v if isinstance(v, str) else t for v, t in zip(values, texts, strict=True)]
    shown = ["'" + v if isinstance(v, str) and v.startswith(FORMULA_START) else t
             for v, t in zip(values, record, strict=True)]
    return pl.Series(record, dtype=pl.String), pl.Series(shown, dtype=pl.String)


def _json_texts(values: Any) -> list[str | None]:
    """Each value's compact JSON (NaN and infinities null, also inside); missing is None."""
    out: list[str | None] = []
    for value in values:
        token = orjson.dumps(value, option=_JSON, default=_missing).decode()
        out.append(None if token == "null" else token)
    return out


def _missing(value: Any) -> None:
    if value is pd.NA or value is pd.NaT:
        return None
    raise TypeError(f"a download cell cannot be written as JSON: {type(value).__name__}")


# --- the parts, and which of them changed ---------------------------------------------------

def part_keys(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """Part name -> positions of its rows (ascending)."""
    if frame.empty:
        return {}
    dates = frame["date"].astype(object)
    keys = dates.where(dates.notna() & (dates != ""), UNDATED).astype(str)
    return {str(k): np.asarray(v) for k, v in keys.groupby(keys, sort=False).indices.items()}


def day_digests(tables: Tables, context: str) -> dict[str, str] | None:
    """Part name -> what the rows of that day are made from: each run's id, result path and
    file sha256 with its columns computed across files (and the agentic quality columns of
    the day), under the build context. None when a file's sha256 is unknown."""
    sources: dict[str, str] = getattr(tables, "sources", {}) or {}
    runs: pd.DataFrame = tables.runs
    if runs.empty:
        return {}
    shas = runs["result_path"].astype(object).map(sources)
    if bool(shas.isna().any()):
        return None
    across = _row_hashes(runs, ("run_id", "result_path", *_ACROSS_FILES))
    agentic = _row_hashes(tables.agentic, ("run_id", *_AGENTIC_ACROSS))
    agentic_days = part_keys(tables.agentic)
    ids, sha_values = runs["run_id"].astype(str).to_numpy(), shas.to_numpy()
    out: dict[str, str] = {}
    for day, where in part_keys(runs).items():
        digest = hashlib.sha256(f"{FORMAT}\0{context}\0".encode())
        digest.update("\0".join(ids[where]).encode())
        digest.update("\0".join(sha_values[where]).encode())
        digest.update(across[where].tobytes())
        if day in agentic_days:
            digest.update(agentic[agentic_days[day]].tobytes())
        out[day] = digest.hexdigest()
    return out


def _row_hashes(frame: pd.DataFrame, columns: Iterable[str]) -> np.ndarray:
    """One 64-bit hash per row of these columns (containers by their repr)."""
    present = [c for c in columns if c in frame.columns]
    if frame.empty or not present:
        return np.zeros(len(frame), dtype=np.uint64)
    flat = pd.DataFrame({c: _texts(frame[c].to_numpy()) if frame[c].dtype == object
                         else frame[c] for c in present})
    return pd.util.hash_pandas_object(flat, index=False).to_numpy()


def _texts(cells: np.ndarray) -> list[str]:
    """Each cell as text: a string as it is, anything else by its repr, made once for each
    object (the tables' equal containers share one object: epbench.generator.row_frames)."""
    made: dict[int, str] = {}  # by id: every cell stays alive in `cells` meanwhile
    out = []
    for cell in cells:
        if isinstance(cell, str):
            out.append(cell)
            continue
        text = made.get(id(cell))
        if text is None:
            text = made[id(cell)] = repr(cell)
        out.append(text)
    return out


class _Manifest:
    """Part file -> digest of what it was written from, for one output folder."""

    def __init__(self, cache_dir: Path | None, data_dir: Path) -> None:
        self.path: Path | None = None
        self.parts: dict[str, str] = {}
        if cache_dir is None:
            return
        name = hashlib.sha256(os.path.abspath(data_dir).encode()).hexdigest()[:16]
        self.path = cache_dir / f"downloads-{name}.json"
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(data, dict) and data.get("format") == FORMAT \
                and isinstance(data.get("parts"), dict):
            self.parts = {str(k): str(v) for k, v in data["parts"].items()}

    def save(self, parts: dict[str, str]) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"format": FORMAT, "parts": parts}), encoding="utf-8")
        tmp.replace(self.path)


def write_tables(tables: Tables, out_dir: Path, cache_dir: Path | None = None,
                 context: str = "", days: dict[str, str] | None = None) -> list[Path]:
    """Write every table into `out_dir` (the layout of the module docstring) and the index;
    with `cache_dir`, parts whose digest did not change since the last build into the same
    folder are kept (`days`: `day_digests(tables, context)` when the caller has them).
    Returns the files written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest = _Manifest(cache_dir, out_dir)
    if cache_dir is None:
        days = None
    elif days is None:
        days = day_digests(tables, context)
    written: list[Path] = []
    done: dict[str, str] = {}
    index: dict[str, Any] = {"format": FORMAT, "tables": {}}
    for name in DATED:
        frame: pd.DataFrame = getattr(tables, name)
        columns = [str(c) for c in frame.columns]
        folder = out_dir / name
        folder.mkdir(parents=True, exist_ok=True)
        positions = part_keys(frame)
        order = sorted(positions, key=_order)
        todo = []
        for part in order:
            rel = f"{name}/{part}"
            digest = None if days is None or part not in days else hashlib.sha256(
                f"{name}\0{json.dumps(columns)}\0{days[part]}".encode()).hexdigest()
            if digest is None or manifest.parts.get(rel) != digest or not all(
                    (out_dir / f"{rel}{ext}").is_file() for ext in (".json", ".csv")):
                todo.append(part)
            if digest is not None:
                done[rel] = digest
        written += _write_parts(frame, positions, todo, folder)
        keep = {f"{part}{ext}" for part in order for ext in (".json", ".csv")}
        for stale in folder.iterdir():
            if stale.name not in keep and stale.is_file():
                stale.unlink()
        index["tables"][name] = {
            "columns": columns, "rows": len(frame),
            "parts": [{"part": part, "rows": len(positions[part]), "json": f"{name}/{part}.json",
                       "csv": f"{name}/{part}.csv"} for part in order]}
    for name in WHOLE:
        frame = getattr(tables, name)
        written += write_frame(frame, out_dir / name)
        index["tables"][name] = {
            "columns": [str(c) for c in frame.columns], "rows": len(frame),
            "parts": [{"part": "all", "rows": len(frame), "json": f"{name}.json",
                       "csv": f"{name}.csv"}]}
    layout = {"index.json", *(f"{n}{ext}" for n in WHOLE for ext in (".json", ".csv"))}
    for stale in out_dir.iterdir():  # files of an older layout (data/points.json, ...)
        if stale.is_file() and stale.name not in layout:
            stale.unlink()
    path = out_dir / "index.json"
    path.write_bytes(orjson.dumps(index, option=orjson.OPT_INDENT_2) + b"\n")
    written.append(path)
    manifest.save(done)
    return written


def read_table(data_dir: Path, name: str) -> list[dict[str, Any]]:
    """Every row of one downloaded table (its JSON parts in the index's order)."""
    index = json.loads((data_dir / "index.json").read_text(encoding="utf-8"))
    rows: list[dict[str, Any]] = []
    for part in index["tables"][name]["parts"]:
        rows += json.loads((data_dir / part["json"]).read_text(encoding="utf-8"))
    return rows


def read_csv(data_dir: Path, name: str) -> list[dict[str, str]]:
    """Every row of one downloaded table as CSV text cells (its CSV parts in order)."""
    index = json.loads((data_dir / "index.json").read_text(encoding="utf-8"))
    rows: list[dict[str, str]] = []
    for part in index["tables"][name]["parts"]:
        with (data_dir / part["csv"]).open(encoding="utf-8", newline="") as handle:
            rows += list(csv.DictReader(handle))
    return rows
