"""The tables' rows as frames: each result's rows (lists in the tables' column order) into
Arrow column by column, then one conversion to pandas over every accepted result.

Every build makes its tables this way, so a full and an incremental build give the same
tables, dtypes included: the build without a cache puts every result's rows into one part
(`frames`); the build cache keeps one part per shard on disk and puts the parts together
(`assemble`, `epbench.generator.build.row_store`). Columns holding lists or dicts are JSON
text inside a part and decoded once, after the parts are put together.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

NAMES = ("runs", "points", "agentic")
SOURCE = "_file"
"""The column naming the result file (relative to results/) a row came from."""


@dataclass(frozen=True)
class RowTable:
    """One table's rows of some result files: an Arrow table, and the columns of it that hold
    lists or dicts as JSON text (decoded once the parts are put together)."""

    table: pa.Table
    containers: tuple[str, ...]


def _column(values: Sequence[Any]) -> tuple[pa.Array, bool]:
    """One column as Arrow (NaN as null, as pandas would), and whether it holds containers
    (lists or dicts: then every value but None is JSON text; equal lists share one text)."""
    try:
        array = pa.array(values, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        array = None  # text and lists mixed, say: kept as JSON text
    if array is not None and not pa.types.is_nested(array.type):
        return array, False
    memo: dict[Any, str] = {}  # most cells repeat a few lists (reasons, flags)
    out: list[str | None] = []
    for value in values:
        key = tuple(value) if isinstance(value, list) and all(
            isinstance(v, str) for v in value) else None
        if key is None:
            out.append(None if value is None else json.dumps(value, ensure_ascii=False))
        else:
            if key not in memo:
                memo[key] = json.dumps(value, ensure_ascii=False)
            out.append(memo[key])
    return pa.array(out, type=pa.string()), True


def row_tables(rows: dict[str, Any], columns: dict[str, list[str]]) -> dict[str, RowTable]:
    """The tables of some files' rows (file -> `Rows` of lists in the order of `columns`,
    table -> its columns), files in name order, column by column straight into Arrow: the one
    way every build makes them."""
    out = {}
    files = sorted(rows)
    for name in NAMES:
        names = [*columns[name], SOURCE]
        flat = [row for rel in files for row in getattr(rows[rel], name)]
        values: list[tuple[Any, ...]] = (list(zip(*flat, strict=True)) if flat
                                         else [()] * len(columns[name]))
        values.append(tuple(rel for rel in files for _ in getattr(rows[rel], name)))
        arrays, containers = [], []
        for column, cells in zip(names, values, strict=True):
            array, container = _column(cells)
            arrays.append(array)
            if container:
                containers.append(column)
        out[name] = RowTable(pa.Table.from_arrays(arrays, names=names), tuple(containers))
    return out


def _as_text(part: RowTable, wanted: set[str]) -> pa.Table:
    """The part's table with the columns in `wanted` that it did not hold as JSON text
    turned into JSON text too (a column of lists in one part and all null in another)."""
    table = part.table
    for column in sorted(wanted - set(part.containers)):
        where = table.schema.get_field_index(column)
        values = table.column(where).to_pylist()
        text = [None if v is None else json.dumps(v, ensure_ascii=False) for v in values]
        table = table.set_column(where, column, pa.array(text, type=pa.string()))
    return table


def assemble(parts: list[dict[str, RowTable]], order: list[str],
             columns: dict[str, list[str]]) -> dict[str, pd.DataFrame]:
    """The tables' rows: every part's tables together, only the files in `order` (the
    accepted results), in that order, then one conversion to pandas (containers decoded,
    dtypes inferred once over the whole)."""
    position = pd.Index(order)
    out = {}
    for name in NAMES:
        tables = [part[name] for part in parts if part[name].table.num_rows]
        if not tables:
            tables = [row_tables({}, columns)[name]]
        wanted = {c for part in tables for c in part.containers}
        table = pa.concat_tables([_as_text(part, wanted) for part in tables],
                                 promote_options="permissive")
        source = table.column(SOURCE).cast(pa.string())
        files = pa.compute.dictionary_encode(source).combine_chunks()
        where = position.get_indexer(files.dictionary.to_numpy(zero_copy_only=False))[
            files.indices.to_numpy(zero_copy_only=False)]  # each distinct file looked up once
        keep = where >= 0  # -1: not accepted
        picked = table.take(pa.array(np.flatnonzero(keep)[np.argsort(where[keep],
                                                                      kind="stable")]))
        frame = picked.drop_columns([SOURCE]).to_pandas()
        for column in sorted(wanted):
            frame[column] = _decoded(frame[column])
        out[name] = frame.infer_objects()
    return out


def _decoded(series: pd.Series) -> pd.Series:
    """JSON text cells decoded, each distinct text once (equal cells share one object, which
    the build only ever replaces, never changes in place)."""
    codes, texts = pd.factorize(series.to_numpy(dtype=object), use_na_sentinel=True)
    values = np.empty(len(texts) + 1, dtype=object)
    values[:-1] = [json.loads(text) for text in texts]
    values[-1] = None
    return pd.Series(values[codes], index=series.index, dtype=object)


def frames(rows: dict[str, Any], order: list[str],
           columns: dict[str, list[str]]) -> dict[str, pd.DataFrame]:
    """The tables' rows of the files in `order` from their rows in memory, as one part."""
    return assemble([row_tables(rows, columns)], order, columns)
