"""The table rows of the build cache, column-wise: each shard's results' rows as three
Arrow tables (`runs`, `points`, `agentic`, each with the `_file` its rows came from:
`epbench.generator.row_frames.row_tables`), so that a rebuild reads 100,000 results' rows in a
fraction of a second instead of parsing them as JSON and building DataFrames row by row; only
the shards where a file changed are built again, and `row_frames.assemble` puts the shards
together as it does the one part of a build without a cache.

Stored as Arrow IPC files (data, never code: no pickle), each under the sha256 of its bytes
kept in its shard's entry file (`epbench.generator.build.build_cache.body_digest`): a file
that was truncated, damaged or written by another build since is ignored.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import pyarrow as pa

from epbench.generator.build.build_cache import body_digest
from epbench.generator.row_frames import NAMES, RowTable

log = logging.getLogger(__name__)

Shard = dict[str, RowTable]
"""One shard's three tables, by name."""


def prefer_system_allocator() -> None:
    """Arrow allocates with the C library's malloc from now on in this process, unless the
    user chose an allocator (ARROW_DEFAULT_MEMORY_POOL).

    Arrow's default, mimalloc, took 1.5 s for the first `assemble` of 100,000 results' rows
    against 0.6 s with malloc (later calls 0.4 s against 0.45 s): a build assembles once, so
    the first call is the one that counts. Buffers already allocated stay with their pool."""
    if "ARROW_DEFAULT_MEMORY_POOL" not in os.environ:
        pa.set_memory_pool(pa.system_memory_pool())


def save(folder: Path, number: int, shards: Shard) -> dict[str, Any]:
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


def load(folder: Path, number: int, info: Any) -> Shard | None:
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
            shards[name] = RowTable(table, tuple(str(c) for c in entry["containers"]))
        return shards
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException):
        return None


