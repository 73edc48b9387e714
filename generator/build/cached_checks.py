"""The validator's `Reuse` over the build cache: unchanged result files come back as the
findings an earlier build computed, without being read (epbench.generator.build.build_cache),
and their table rows from the shards' frames (epbench.generator.build.row_store).

Fresh rows are kept as lists in the tables' column order (`Rows` of lists), the form the
shards' frames are built from.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from epbench.generator.build import row_store
from epbench.generator.build.build_cache import (
    JOURNAL_SUFFIX,
    SHARDS,
    BuildCache,
    Stamp,
    findings_of,
    shard_of,
)
from epbench.generator.build.cache_writer import save_in_background, wait_saved
from epbench.generator.build.cold_shards import ShardTask, check_shards
from epbench.generator.build.row_store import assemble
from epbench.generator.collector import collector_paused
from epbench.generator.report import status_for
from epbench.generator.tables import (
    AGENTIC_COLUMNS,
    IDENTITY,
    POINT_COLUMNS,
    RUN_COLUMNS,
    STORED,
    TABLE_COLUMNS,
    RowMaker,
    Rows,
    Tables,
    build_tables,
    tables_from_frames,
)
from epbench.generator.validate import (
    POOL_MIN_FILES,
    Checked,
    Post,
    WorkloadSemantics,
    _picklable,
    check_files,
    validate_documents,
)

_TABLES = (("runs", RUN_COLUMNS), ("points", POINT_COLUMNS), ("agentic", AGENTIC_COLUMNS))


def cached_tables(results_dir: Path, project: Path, cache_dir: Path) -> Tables:
    """`build_tables` with the build cache in `cache_dir`: unchanged results are neither read
    nor validated, and their rows come from the shards' frames
    (`epbench.generator.build.row_store`) of the shards where nothing changed; the cache is
    then saved, and `Tables.sources` holds each file's sha256."""
    if not results_dir.is_dir():
        return build_tables(results_dir, project)
    row_store.prefer_system_allocator()
    wait_saved()  # an earlier build's cache writer, if it is still going
    with collector_paused():
        return _cached_tables(results_dir, project, cache_dir)


def _cached_tables(results_dir: Path, project: Path, cache_dir: Path) -> Tables:
    cache = BuildCache.open(cache_dir, project)
    for _attempt in range(2):
        reuse = CachedChecks(cache, results_dir)
        report, checked = validate_documents([results_dir], None, None,
                                             post=ListedRows(results_dir, project), reuse=reuse)
        shards = reuse.frames()
        if shards is not None:
            break
        cache.forget()  # a shard's frames are gone or altered: check every file again
    else:  # pragma: no cover - a fresh cache always has its frames
        raise RuntimeError("build cache: no frames after checking every file")
    if cache.dirty or cache.rows_dirty:  # a full build's workers wrote every shard already
        save_in_background(cache)  # generator/cache_writer.py: the tables need none of it
    tables = tables_from_frames(assemble(shards, accepted(checked, reuse.rel), TABLE_COLUMNS),
                                report, project)
    tables.sources = {f"results/{rel}": sha for rel, sha in reuse.shas.items()}
    return tables


@dataclass(frozen=True)
class ListedRows(RowMaker):
    """`RowMaker` whose rows come back as lists in column order, made in the worker."""

    def __call__(self, item: Checked) -> Rows | None:
        rows = super().__call__(item)
        return None if rows is None else as_lists(rows)


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
        self.fresh: dict[str, Rows | None] = {}
        """Relative path -> rows (lists) of each file checked in this build."""

    def rel(self, path: Path | str) -> str:
        text = os.fspath(path)
        if text.startswith(self.root + os.sep) and os.sep + ".." not in text:
            return text[len(self.root) + 1:].replace(os.sep, "/")
        return os.path.relpath(os.path.abspath(text), self.root).replace(os.sep, "/")

    def split(self, files: list[Path]) -> tuple[list[Checked | None], list[Path]]:
        known: list[Checked | None] = []
        todo: list[Path] = []
        listed: dict[str, set[str]] = {}  # folder -> its names: journals without a stat each
        frames = self.cache.frames
        for path in files:
            text = os.fspath(path)
            rel = self.rel(text)
            try:
                info = os.lstat(text)
            except OSError:
                info = None
            if info is None or not stat.S_ISREG(info.st_mode):
                known.append(None)
                todo.append(path)  # the checker says what is wrong with it
                continue
            folder, name = os.path.split(text)
            if folder not in listed:
                try:
                    listed[folder] = set(os.listdir(folder or "."))
                except OSError:
                    listed[folder] = set()
            journal = name.removesuffix(".json") + JOURNAL_SUFFIX in listed[folder]
            number = shard_of(rel)
            stamp, entry = self.cache.stamp(path, rel, [info.st_size, info.st_mtime_ns],
                                            journal=None if journal else False, number=number)
            item = _from_entry(path, entry) if entry is not None else None
            if item is not None and item.derived is STORED \
                    and not isinstance(frames.get(number), dict):
                item = None  # rows said to be in frames its shard does not have
            known.append(item)
            if item is None:
                self._stamps[path] = (rel, stamp)
                todo.append(path)
            else:
                self.shas[rel] = str(entry["sha"])  # type: ignore[index]
        return known, todo

    def check(self, todo: list[Path], workload_semantics: WorkloadSemantics | None,
              now: datetime, workers: int, post: Post | None) -> list[Checked]:
        """Check the files `split` left, in their order: the files of shards the cache holds
        nothing of by one worker a shard (`epbench.generator.build.cold_shards`, a full build), the
        others with `check_files` and `keep`."""
        cold: dict[int, list[tuple[Path, str, Stamp]]] = {}
        for path in todo:
            if path in self._stamps:
                rel, stamp = self._stamps[path]
                number = shard_of(rel)
                if not self.cache.shards.get(number):
                    cold.setdefault(number, []).append((path, rel, stamp))
        if (sum(len(files) for files in cold.values()) < POOL_MIN_FILES or workers < 2
                or not _picklable(workload_semantics) or not _picklable(post)):
            cold = {}
        done: dict[Path, Checked] = {}
        if cold:
            tasks = [ShardTask(number, files, self.cache.folder, self.cache.context,
                               self.root, type(self))
                     for number, files in sorted(cold.items())]
            done = check_shards(self, tasks, workload_semantics, now, workers, post)
        rest = [path for path in todo if path not in done]
        fresh = check_files(rest, workload_semantics, now, workers, post)
        self.keep(fresh)
        by_path = dict(zip(rest, fresh, strict=True))
        return [done[path] if path in done else by_path[path] for path in todo]

    def expect(self, path: Path, rel: str, stamp: Stamp) -> None:
        """A file to check whose stamp the parent's `split` took (a cold shard's worker)."""
        self._stamps[path] = (rel, stamp)
        self.cache.seen.add(rel)

    def adopt(self, number: int, entries: dict[str, Any], frames: dict[str, Any],
              shas: dict[str, str]) -> None:
        """A shard a worker checked and wrote whole: its entries and table digests, kept as
        they are on disk (not written again by this process)."""
        self.cache.shards[number] = entries
        self.cache.frames[number] = frames
        self.cache.rows.pop(number, None)
        self.cache.dirty.discard(number)
        self.cache.rows_dirty.discard(number)
        self.shas.update(shas)

    def keep(self, checked: list[Checked]) -> None:
        for item in checked:
            rel = self._stamps[item.path][0] if item.path in self._stamps else self.rel(item.path)
            rows = as_lists(item.derived) if isinstance(item.derived, Rows) else None
            self.fresh[rel] = rows
            if item.path not in self._stamps:
                continue
            stamp = self._stamps[item.path][1]
            if item.digests[0] is not None:  # the bytes the checker read are the entry's key
                stamp.sha = item.digests[0]
                stamp.journal_sha = item.digests[1] if stamp.journal_stat is not None else None
            if item.derived is not None and rows is None:
                continue  # something this cache does not know how to keep
            if self.cache.store(rel, stamp, item.kind, item.findings, item.run_id,
                                dict(item.identity), None if rows is None else _pack(rows)) \
                    and stamp.sha is not None:
                self.shas[rel] = stamp.sha

    def frames(self) -> list[dict[str, row_store.Shard]] | None:
        """Every shard's frames: read where nothing changed, built again from the rows the
        cache keeps and this build's fresh rows where something did. None when a shard's
        frames or rows are missing or altered."""
        self.cache.drop_gone()
        fresh_by_shard: dict[int, dict[str, Rows]] = {}
        for rel, fresh_rows in self.fresh.items():
            if fresh_rows is not None:
                fresh_by_shard.setdefault(shard_of(rel), {})[rel] = fresh_rows
        changed = self.cache.rows_dirty | {shard_of(rel) for rel in self.fresh}
        out = []
        for number in range(SHARDS):
            entries = self.cache.shards.get(number, {})
            if number not in changed:
                if not any(e.get("rows") for e in entries.values()):
                    continue
                frames = row_store.load(self.cache.folder, number,
                                        self.cache.frames.get(number))
                if frames is None:
                    return None
                out.append(frames)
                continue
            kept = self.cache.rows_of(number)
            rows: dict[str, Rows] = {}
            for rel, entry in entries.items():
                if entry.get("rows") and rel not in self.fresh:
                    packed = kept.get(rel)
                    unpacked = _unpack(packed) if isinstance(packed, list) else None
                    if unpacked is None:
                        return None
                    rows[rel] = unpacked
            rows.update(fresh_by_shard.get(number, {}))
            frames = row_store.shard_frames(rows, TABLE_COLUMNS)
            self.cache.frames[number] = row_store.save(self.cache.folder, number, frames)
            self.cache.dirty.add(number)
            out.append(frames)
        return out


def accepted(checked: list[Checked], rel: Any) -> list[str]:
    """The files whose rows reach the tables (results not rejected), in checked order."""
    return [rel(item.path) for item in checked if item.kind == "result"
            and item.derived is not None and status_for(item.findings) != "rejected"]


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
    if len(rows) != 4:
        return None
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
        return Checked(path, str(path), entry["kind"], findings_of(entry),
                       run_id=entry["run_id"], identity=dict(entry["identity"]),
                       derived=STORED if entry["rows"] is True else None)
    except (KeyError, TypeError, ValueError, IndexError):
        return None
