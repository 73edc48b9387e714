"""Shards of the build cache that hold no file yet (every file of a full build) are checked,
made into rows and written by one worker each.

The usual path sends every checked file's rows back to the parent, which keeps them, builds
each shard's Arrow tables and writes the cache, one process on one core, seconds at 100,000
results. A shard none of whose files the cache knows needs nothing of the parent: a worker
checks its files, builds its tables (`epbench.generator.build.row_store`) and writes its three
parts, and sends back only what the report and the tables need (each file's findings and
identity, the shard's entries and the digests of its tables). The parent then reads the tables
from disk, as it reads those of unchanged shards. Both paths give the same entries and tables:
the worker runs the parent's own `CachedChecks.keep` and `row_frames.row_tables` on its shard.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from epbench.generator.build import row_store
from epbench.generator.build.build_cache import BuildCache, Stamp
from epbench.generator.build.outcome import CacheCheck, InStore, Outcome
from epbench.generator.row_frames import row_tables
from epbench.generator.tables import TABLE_COLUMNS, Rows
from epbench.generator.worker_pool import in_workers


class Keeper(Protocol):
    """What of `epbench.generator.build.cached_checks.CachedChecks` a shard's worker uses (its
    class is handed in with the task, so this module does not import it back)."""

    fresh: dict[str, Rows | None]
    shas: dict[str, str]

    def __init__(self, cache: BuildCache, results_dir: Path) -> None: ...

    def expect(self, path: Path, rel: str, stamp: Stamp) -> None: ...

    def keep(self, outcomes: list[Outcome]) -> None: ...

    def adopt(self, number: int, entries: dict[str, Any], frames: dict[str, Any],
              shas: dict[str, str]) -> None: ...


@dataclass(frozen=True)
class ShardTask:
    number: int
    files: list[tuple[Path, str, Stamp]]
    """(path, path relative to the results folder, its stamp from `split`), in file order."""
    folder: Path
    context: str
    root: str
    keeper: type[Keeper]
    """`CachedChecks`, whose own `keep` the worker runs."""


@dataclass(frozen=True)
class ShardDone:
    number: int
    outcomes: list[Outcome]
    entries: dict[str, Any]
    frames: dict[str, Any]
    shas: dict[str, str]


def check_shards(reuse: Keeper, tasks: list[ShardTask], check: CacheCheck,
                 workers: int) -> dict[Path, Outcome]:
    """Run the tasks in a process pool, each file checked by `check`; the parent's cache
    takes each shard's entries and digests (not its rows: they are on disk). Path -> its
    outcome."""
    out: dict[Path, Outcome] = {}
    for done in in_workers(ShardCheck(check), tasks, workers):
        reuse.adopt(done.number, done.entries, done.frames, done.shas)
        out.update((outcome.checked.path, outcome) for outcome in done.outcomes)
    return out


@dataclass(frozen=True)
class ShardCheck:
    """The task of a cold shard's worker: every file of a shard checked by `check`, kept in a
    cache of this one shard, its tables built and its parts written."""

    check: CacheCheck

    def __call__(self, task: ShardTask) -> ShardDone:
        cache = BuildCache.view(task.folder, task.context, task.number)
        reuse = task.keeper(cache, Path(task.root))
        outcomes = []
        for path, rel, stamp in task.files:
            reuse.expect(path, rel, stamp)
            outcomes.append(self.check(path))
        reuse.keep(outcomes)
        rows = {rel: r for rel, r in reuse.fresh.items() if r is not None}
        frames = row_tables(rows, TABLE_COLUMNS)
        cache.frames[task.number] = row_store.save(task.folder, task.number, frames)
        cache.dirty.add(task.number)
        cache.rows_dirty.add(task.number)
        cache.save()
        for outcome in outcomes:
            if isinstance(outcome.rows, Rows):
                outcome.rows = InStore(task.number)  # in the shard's tables on disk now
        return ShardDone(task.number, outcomes, cache.shards.get(task.number, {}),
                         cache.frames[task.number], reuse.shas)
