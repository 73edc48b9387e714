"""The incremental build's tables: unchanged result files come back as the findings an
earlier build computed, without being read (epbench.generator.build.build_cache), and their
table rows from the shards' frames (epbench.generator.build.row_store); the other files are
checked and their rows made by the tables' own task (`epbench.generator.tables.RowCheck`,
wrapped in `outcome.CacheCheck`), which this module composes with the validator's steps
(`files_to_check`, `report_on`): the validator knows nothing of the cache.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from epbench.core.provenance import BUNDLE_SUFFIX
from epbench.generator.build import row_store
from epbench.generator.build.build_cache import (
    JOURNAL_SUFFIX,
    SHARDS,
    BuildCache,
    Stamp,
    findings_of,
    shard_of,
    stat_key,
)
from epbench.generator.build.cache_writer import save_in_background, wait_saved
from epbench.generator.build.cold_shards import ShardTask, check_shards
from epbench.generator.build.outcome import CacheCheck, InStore, Outcome
from epbench.generator.collector import collector_paused
from epbench.generator.report import status_for
from epbench.generator.row_frames import assemble, row_tables
from epbench.generator.tables import (
    IDENTITY,
    TABLE_COLUMNS,
    Rows,
    Tables,
    build_tables,
    row_check,
    tables_from_frames,
)
from epbench.generator.validate import Checked, files_to_check, report_on
from epbench.generator.worker_pool import POOL_MIN_FILES, Forked, each_file, picklable

SPLIT_FORK_MIN = 20_000
"""Files from which `CachedChecks.split` shares its looking with a forked process."""


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
    files, known = files_to_check([results_dir], None)
    cache.read_shards()
    with ThreadPoolExecutor(1) as loader:
        # the frames of every shard, read (and their digests checked) by a thread while this
        # one splits the files: file reads, sha256 and Arrow's reader release the GIL, and a
        # rebuild needs the frames of every shard where nothing changed (0.4 s at 100,000)
        ahead = loader.submit(_frames_ahead, cache.folder, dict(cache.frames))
        return _tables_with(cache, results_dir, project, files, known, ahead)


def _frames_ahead(folder: Path, infos: dict[int, Any]) -> dict[int, row_store.Shard | None]:
    return {number: row_store.load(folder, number, info)
            for number, info in sorted(infos.items()) if isinstance(info, dict)}


def _tables_with(cache: BuildCache, results_dir: Path, project: Path, files: list[Path],
                 known: list[Checked],
                 ahead: Future[dict[int, row_store.Shard | None]]) -> Tables:
    for attempt in range(2):
        reuse = CachedChecks(cache, results_dir, ahead if attempt == 0 else None)
        outcomes = reuse.outcomes(files, CacheCheck(row_check(results_dir, project)))
        report = report_on([o.checked for o in outcomes] + known, [results_dir], None)
        shards = reuse.frames()
        if shards is not None:
            break
        cache.forget()  # a shard's frames are gone or altered: check every file again
    else:  # pragma: no cover - a fresh cache always has its frames
        raise RuntimeError("build cache: no frames after checking every file")
    if cache.dirty or cache.rows_dirty:  # a full build's workers wrote every shard already
        save_in_background(cache)  # generator/cache_writer.py: the tables need none of it
    tables = tables_from_frames(assemble(shards, accepted(outcomes, reuse.rel), TABLE_COLUMNS),
                                report, project)
    tables.sources = {f"results/{rel}": sha for rel, sha in reuse.shas.items()}
    return tables


class CachedChecks:
    """Splits a results tree into files the cache still describes and files to check."""

    def __init__(self, cache: BuildCache, results_dir: Path,
                 ahead: Future[dict[int, row_store.Shard | None]] | None = None) -> None:
        self.cache = cache
        self.ahead = ahead
        """Shards' frames read ahead from the entries' frame records as the build opened the
        cache (`_frames_ahead`), for the shards where nothing changed."""
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

    def outcomes(self, files: list[Path], task: CacheCheck) -> list[Outcome]:
        """Each file's outcome, in order: from the cache where it still describes the file,
        else checked by `task` (and kept)."""
        known, todo = self.split(files)
        fresh = iter(self.check(todo, task))  # in the order of the files left to check
        return [item if item is not None else next(fresh) for item in known]

    def split(self, files: list[Path]) -> tuple[list[Outcome | None], list[Path]]:
        """For each file what the cache still knows of it (None: check it), and the files to
        check, in order. For a large tree a forked process looks at most of the
        files meanwhile (a stat and an entry each: half of a rebuild's tables at 100,000
        results); what it found is recorded here."""
        known: list[Outcome | None] = []
        todo: list[Path] = []
        if len(files) < SPLIT_FORK_MIN:
            self._record(files, self._look_all(files), known, todo)
            return known, todo
        self.cache.read_shards()  # once, here, before the fork
        # this process records what both found: it looks at two fifths and records them while
        # the forked process looks at the rest, then records those
        ours = len(files) * 2 // 5
        with Forked(partial(_flat, self._look_all, files[ours:])) as other:
            self._record(files[:ours], self._look_all(files[:ours]), known, todo)
            self._record(files[ours:], _unflat(other.result()), known, todo)
        return known, todo

    def _record(self, files: list[Path], looked: _Looked, known: list[Outcome | None],
                todo: list[Path]) -> None:
        """What `_look_all` found of `files` recorded in the cache; each file's outcome
        appended to `known` (None: to check, appended to `todo` too)."""
        frames = self.cache.frames
        for path, mark in zip(files, looked, strict=True):
            if mark is None:
                known.append(None)
                todo.append(path)  # the checker says what is wrong with it
                continue
            stamp: Stamp | None
            if isinstance(mark, int):  # untouched, as the forked process found (`_flat`)
                rel, number, stamp, verdict = self.rel(path), mark, None, "same"
            else:
                rel, number, stamp, verdict = mark
            entry = self.cache.take(rel, number, stamp, verdict)
            item = _from_entry(path, entry, number) if entry is not None else None
            if item is not None and isinstance(item.rows, InStore) \
                    and not isinstance(frames.get(number), dict):
                item = None  # rows said to be in frames its shard does not have
            known.append(item)
            if item is None:
                self._stamps[path] = (rel, stamp if stamp is not None else Stamp.of_entry(
                    self.cache.shards[number][rel]))
                todo.append(path)
            else:
                self.shas[rel] = str(entry["sha"])  # type: ignore[index]

    def _look_all(self, files: list[Path]) -> _Looked:
        """Each file's (path in the results folder, shard, stamp, verdict) as
        `BuildCache.look` reads it, or None for what is not a regular file; nothing is
        recorded (this may run in a forked process)."""
        out: _Looked = []
        listed: dict[str, set[str]] = {}  # folder -> its names: journals without a stat each
        for path in files:
            text = os.fspath(path)
            rel = self.rel(text)
            try:
                info = os.lstat(text)
            except OSError:
                info = None
            if info is None or not stat.S_ISREG(info.st_mode):
                out.append(None)
                continue
            folder, _, name = text.rpartition(os.sep)  # os.path.split's answer, but at "/x"
            folder = folder or (os.sep if text.startswith(os.sep) else "")
            if folder not in listed:
                try:
                    listed[folder] = set(os.listdir(folder or "."))
                except OSError:
                    listed[folder] = set()
            stem = name.removesuffix(".json")
            journal = stem + JOURNAL_SUFFIX in listed[folder]
            bundle = stem + BUNDLE_SUFFIX in listed[folder]
            number = shard_of(rel)
            now, verdict = self.cache.look(path, rel, stat_key(info),
                                           None if journal else False, number,
                                           None if bundle else False)
            out.append((rel, number, now, verdict))
        return out

    def check(self, todo: list[Path], task: CacheCheck) -> list[Outcome]:
        """Check the files `split` left, in their order: the files of shards the cache holds
        nothing of by one worker a shard (`epbench.generator.build.cold_shards`, a full build),
        the others with `task` (in the validation workers for many files) and `keep`."""
        workers = os.cpu_count() or 1
        cold: dict[int, list[tuple[Path, str, Stamp]]] = {}
        for path in todo:
            if path in self._stamps:
                rel, stamp = self._stamps[path]
                number = shard_of(rel)
                if not self.cache.shards.get(number):
                    cold.setdefault(number, []).append((path, rel, stamp))
        if (sum(len(files) for files in cold.values()) < POOL_MIN_FILES or workers < 2
                or not picklable(task)):
            cold = {}
        done: dict[Path, Outcome] = {}
        if cold:
            tasks = [ShardTask(number, files, self.cache.folder, self.cache.context,
                               self.root, type(self))
                     for number, files in sorted(cold.items())]
            done = check_shards(self, tasks, task, workers)
        rest = [path for path in todo if path not in done]
        fresh = each_file(task, rest, workers)
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

    def keep(self, outcomes: list[Outcome]) -> None:
        """Keep the outcomes of files checked in this build: their entries, and their rows for
        the frames."""
        for outcome in outcomes:
            item = outcome.checked
            rel = self._stamps[item.path][0] if item.path in self._stamps else self.rel(item.path)
            rows = outcome.rows if isinstance(outcome.rows, Rows) else None
            self.fresh[rel] = rows
            if item.path not in self._stamps:
                continue
            stamp = self._stamps[item.path][1]
            if item.digest is not None:  # the bytes the checker read are the entry's key
                stamp.sha = item.digest
                stamp.journal_sha = outcome.journal_sha if stamp.journal_stat is not None else None
            if self.cache.store(rel, stamp, item.kind, item.findings, item.run_id,
                                dict(item.identity), None if rows is None else _pack(rows)) \
                    and stamp.sha is not None:
                self.shas[rel] = stamp.sha

    def frames(self) -> list[row_store.Shard] | None:
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
                read = self.ahead.result() if self.ahead is not None else {}
                frames = read[number] if number in read else row_store.load(
                    self.cache.folder, number, self.cache.frames.get(number))
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
            frames = row_tables(rows, TABLE_COLUMNS)
            self.cache.frames[number] = row_store.save(self.cache.folder, number, frames)
            self.cache.dirty.add(number)
            out.append(frames)
        return out


_Looked = list[tuple[str, int, Stamp, str] | int | None]
"""What `CachedChecks._look_all` found of each file: (path in the results folder, shard,
stamp, verdict); only the shard for a file whose entry stands untouched, as the forked process
sends it; None for what is not a regular file."""


def _flat(look: Callable[[list[Path]], _Looked], files: list[Path]) -> list[Any]:
    """`look(files)` as the forked process sends it: the shard alone for a file whose entry
    stands untouched (its stamp is the entry's: `_untouched`), each other stamp as a plain
    tuple; a fifth of the pickling."""
    out: list[Any] = []
    for mark in look(files):
        if mark is None or isinstance(mark, int):
            out.append(mark)
            continue
        _rel, number, stamp, verdict = mark
        if verdict == "same" and stamp.settled and stamp.bundle_sha is None:
            out.append(number)
        else:
            out.append((*mark[:2], verdict, stamp.stat, stamp.sha, stamp.journal_stat,
                        stamp.journal_sha, stamp.bundle_sha, stamp.settled))
    return out


def _unflat(flat: list[Any]) -> _Looked:
    return [m if m is None or isinstance(m, int) else (m[0], m[1], Stamp(*m[3:]), m[2])
            for m in flat]


def accepted(outcomes: list[Outcome], rel: Any) -> list[str]:
    """The files whose rows reach the tables (results not rejected), in checked order."""
    return [rel(o.checked.path) for o in outcomes if o.checked.kind == "result"
            and o.rows is not None and status_for(o.checked.findings) != "rejected"]


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


def _from_entry(path: Path, entry: dict[str, Any], shard: int) -> Outcome | None:
    """The outcome an entry of `shard` describes; None when the entry is not in the expected
    shape."""
    try:
        checked = Checked(path, str(path), entry["kind"], findings_of(entry),
                          run_id=entry["run_id"], identity=dict(entry["identity"]))
        return Outcome(checked, InStore(shard) if entry["rows"] is True else None)
    except (KeyError, TypeError, ValueError, IndexError):
        return None
