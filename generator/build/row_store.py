"""The table rows of the build cache, column-wise: each shard's results' rows as three
frames (`runs`, `points`, `agentic`, each with the `_file` its rows came from), so that a
rebuild reads 100,000 results' rows in a fraction of a second instead of parsing them as JSON
and building DataFrames row by row; only the shards where a file changed are built again.

A full build makes the same per-shard frames from its fresh rows and puts them together the
same way (`assemble`), so both give the same tables, dtypes included. Stored as Arrow IPC
files (data, never code: no pickle), each under the sha256 of its bytes kept in its shard's
entry file (`epbench.generator.build.build_cache.body_digest`): a file that was truncated,
damaged or written by another build since is ignored. Columns holding
lists or dicts are kept as JSON text and decoded on reading.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from epbench.generator.build.build_cache import body_digest

log = logging.getLogger(__name__)

NAMES = ("runs", "points", "agentic")
SOURCE = "_file"
"""The column naming the result file (relative to results/) a row came from."""


def prefer_system_allocator() -> None:
    """Arrow allocates with the C library's malloc from now on in this process, unless the
    user chose an allocator (ARROW_DEFAULT_MEMORY_POOL).

    Arrow's default, mimalloc, took 1.5 s for the first `assemble` of 100,000 results' rows
    against 0.6 s with malloc (later calls 0.4 s against 0.45 s): a build assembles once, so
    the first call is the one that counts. Buffers already allocated stay with their pool."""
    if "ARROW_DEFAULT_MEMORY_POOL" not in os.environ:
        pa.set_memory_pool(pa.system_memory_pool())


@dataclass(frozen=True)
class Shard:
    """One table's rows of one shard: an Arrow table, and the columns of it that hold lists
    or dicts as JSON text (decoded once the shards are put together)."""

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


def save(folder: Path, number: int, shards: dict[str, Shard]) -> dict[str, Any]:
    """Write one shard's tables; returns what `load` needs (each file's digest, the container
    columns), for the shard's entry file."""
    info: dict[str, Any] = {}
    for name in NAMES:
        shard = shards[name]
        sink = pa.BufferOutputStream()
        with pa.ipc.new_file(sink, shard.table.schema) as writer:
            writer.write_table(shard.table)
        data = sink.getvalue().to_pybytes()
        path = folder / f"shard-{number:02d}-{name}.arrow"
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.replace(path)
        info[name] = {"mac": body_digest(data), "containers": list(shard.containers)}
    return info


def load(folder: Path, number: int, info: Any) -> dict[str, Shard] | None:
    """One shard's tables, or None when a file is missing or does not match its digest."""
    try:
        shards = {}
        for name in NAMES:
            entry = info[name]
            data = (folder / f"shard-{number:02d}-{name}.arrow").read_bytes()
            if str(entry["mac"]) != body_digest(data):
                log.warning("build cache: shard %02d's %s rows do not match their digest; "
                            "ignored", number, name)
                return None
            table = pa.ipc.open_file(pa.BufferReader(data)).read_all()
            shards[name] = Shard(table, tuple(str(c) for c in entry["containers"]))
        return shards
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException):
        return None


def shard_frames(rows: dict[str, Any], columns: dict[str, list[str]]) -> dict[str, Shard]:
    """One shard's tables from its files' rows (file -> `Rows` of lists in the order of
    `columns`, table -> its columns), files in name order, column by column straight into
    Arrow: the one way both a full and an incremental build make them."""
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
        out[name] = Shard(pa.Table.from_arrays(arrays, names=names), tuple(containers))
    return out


def _as_text(shard: Shard, wanted: set[str]) -> pa.Table:
    """The shard's table with the columns in `wanted` that it did not hold as JSON text
    turned into JSON text too (a column of lists in one shard and all null in another)."""
    table = shard.table
    for column in sorted(wanted - set(shard.containers)):
        where = table.schema.get_field_index(column)
        values = table.column(where).to_pylist()
        text = [None if v is None else json.dumps(v, ensure_ascii=False) for v in values]
        table = table.set_column(where, column, pa.array(text, type=pa.string()))
    return table


def assemble(shards: list[dict[str, Shard]], order: list[str],
             columns: dict[str, list[str]]) -> dict[str, pd.DataFrame]:
    """The tables' rows: every shard's tables together, only the files in `order` (the
    accepted results), in that order, then one conversion to pandas (containers decoded,
    dtypes inferred once over the whole)."""
    position = pd.Index(order)
    out = {}
    for name in NAMES:
        parts = [shard[name] for shard in shards if shard[name].table.num_rows]
        if not parts:
            parts = [shard_frames({}, columns)[name]]
        wanted = {c for part in parts for c in part.containers}
        table = pa.concat_tables([_as_text(part, wanted) for part in parts],
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
