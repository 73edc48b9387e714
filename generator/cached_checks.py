"""The validator's `Reuse` over the build cache: unchanged result files come back as the
findings and table rows an earlier build computed, without being read (generator.build_cache).

Rows are kept as lists in the tables' column order (`Rows` of lists), the form
`generator.tables.tables_from_checked` builds its DataFrames from.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from generator.build_cache import BuildCache, Stamp, findings_of
from generator.tables import (
    AGENTIC_COLUMNS,
    IDENTITY,
    POINT_COLUMNS,
    RUN_COLUMNS,
    Rows,
    Tables,
    build_tables,
)
from generator.validate import Checked

_TABLES = (("runs", RUN_COLUMNS), ("points", POINT_COLUMNS), ("agentic", AGENTIC_COLUMNS))


def cached_tables(results_dir: Path, project: Path, cache_dir: Path) -> Tables:
    """`build_tables` with the build cache in `cache_dir`: unchanged results are neither read
    nor validated; the cache is then saved, and `Tables.sources` holds each file's sha256."""
    reuse = CachedChecks(BuildCache.open(cache_dir, project), results_dir)
    tables = build_tables(results_dir, project, reuse)
    reuse.cache.save()
    tables.sources = {f"results/{rel}": sha for rel, sha in reuse.shas.items()}
    return tables


def as_lists(rows: Rows) -> Rows:
    """Rows of dicts as rows of lists in column order (lists pass through)."""
    out = []
    for name, columns in _TABLES:
        out.append([r if isinstance(r, list) else [r.get(c) for c in columns]
                    for r in getattr(rows, name)])
    return Rows(*out)


class CachedChecks:
    """Splits a results tree into files the cache still describes and files to check."""

    def __init__(self, cache: BuildCache, results_dir: Path) -> None:
        self.cache = cache
        self.root = os.path.abspath(results_dir)
        self._stamps: dict[Path, tuple[str, Stamp]] = {}
        self.shas: dict[str, str] = {}
        """Relative path -> sha256 of every file known to be unchanged or freshly kept."""

    def _rel(self, path: Path) -> str:
        text = os.fspath(path)
        if text.startswith(self.root + os.sep) and os.sep + ".." not in text:
            return text[len(self.root) + 1:].replace(os.sep, "/")
        return os.path.relpath(os.path.abspath(text), self.root).replace(os.sep, "/")

    def split(self, files: list[Path]) -> tuple[dict[Path, Checked], list[Path]]:
        known: dict[Path, Checked] = {}
        todo: list[Path] = []
        for path in files:
            rel = self._rel(path)
            try:
                info = os.lstat(path)
            except OSError:
                info = None
            if info is None or not stat.S_ISREG(info.st_mode):
                todo.append(path)  # the checker says what is wrong with it
                continue
            stamp, entry = self.cache.stamp(path, rel, [info.st_size, info.st_mtime_ns])
            item = _from_entry(path, entry) if entry is not None else None
            if item is None:
                self._stamps[path] = (rel, stamp)
                todo.append(path)
            else:
                known[path] = item
                self.shas[rel] = str(entry["sha"])  # type: ignore[index]
        return known, todo

    def keep(self, checked: list[Checked]) -> None:
        for item in checked:
            if item.path not in self._stamps:
                continue
            rel, stamp = self._stamps[item.path]
            rows = as_lists(item.derived) if isinstance(item.derived, Rows) else None
            if item.derived is not None and rows is None:
                continue  # something this cache does not know how to keep
            if stamp.sha is not None:
                self.shas[rel] = stamp.sha
            self.cache.store(rel, stamp, item.kind, item.findings, item.run_id,
                             dict(item.identity), None if rows is None else _pack(rows))


_N = len(IDENTITY)


def _pack(rows: Rows) -> list[Any]:
    """Point and agentic rows without the identity columns every row of a result repeats
    (they are kept once): the cache is a third smaller and parses faster."""
    first = rows.points[0] if rows.points else rows.agentic[0] if rows.agentic else None
    if first is None:
        return [rows.runs, [], [], None]
    identity = first[:_N]
    if any(r[:_N] != identity for part in (rows.points, rows.agentic) for r in part):
        return [rows.runs, rows.points, rows.agentic, None]  # not expected; kept whole
    return [rows.runs, [r[_N:] for r in rows.points], [r[_N:] for r in rows.agentic],
            identity]


def _unpack(rows: list[Any]) -> Rows | None:
    runs, points, agentic, identity = rows
    if not all(isinstance(r, list) for part in (runs, points, agentic) for r in part):
        return None
    if identity is None:
        return Rows(runs, points, agentic)
    if not isinstance(identity, list) or len(identity) != _N:
        return None
    return Rows(runs, [identity + r for r in points], [identity + r for r in agentic])


def _from_entry(path: Path, entry: dict[str, Any]) -> Checked | None:
    """The Checked an entry describes; None when the entry is not in the expected shape."""
    try:
        rows = entry["rows"]
        derived = None if rows is None else _unpack(rows)
        if rows is not None and derived is None:
            return None
        return Checked(path, str(path), entry["kind"], findings_of(entry),
                       run_id=entry["run_id"], identity=dict(entry["identity"]),
                       derived=derived)
    except (KeyError, TypeError, ValueError, IndexError):
        return None
