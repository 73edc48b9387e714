"""One function over many items in a pool of processes, as validation and the build run theirs.

The function is handed to each worker once, when it starts, and keeps its state there (the
validator's workload indexes, say) for every item that worker takes; only the items and what
the function returns cross between processes. Which function runs is the caller's:
`epbench.generator.validate` checks files, `epbench.generator.tables` checks them and makes
their rows, the build (`epbench.generator.build`) writes whole shards of its cache.
"""

from __future__ import annotations

import gc
import os
import pickle
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")
POOL_MIN_FILES = 1500
"""Below this many files a process pool costs more than it saves."""
_TASK: list[Callable[[Any], Any]] = []


def picklable(value: object) -> bool:
    """Whether `value` can be sent to a worker (lambdas and closures cannot)."""
    try:
        pickle.dumps(value)
    except Exception:  # pickling raises whatever the object's reducer raises
        return False
    return True


def start_worker(task: Callable[[Any], Any]) -> None:
    """A worker's start: keep `task`, and set the cyclic collector for the work.

    Forked from a build that paused the collector (epbench.generator.collector); hostile files
    make reference cycles (a schema error and its context), which must not pile up here. What
    the worker inherited is frozen (never scanned again), and the youngest generation is
    collected every 20,000 new containers, not 700: a result allocates thousands, and the
    default made collection about a tenth of a worker's time."""
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)
    gc.enable()
    _TASK[:] = [task]


def _run(item: Any) -> Any:
    return _TASK[0](item)


def in_workers(task: Callable[[T], R], items: Iterable[T], workers: int,
               chunksize: int = 1) -> list[R]:
    """`[task(item) for item in items]`, in order, in `workers` processes."""
    with ProcessPoolExecutor(workers, initializer=start_worker, initargs=(task,)) as pool:
        return list(pool.map(_run, items, chunksize=chunksize))


def each_file(task: Callable[[T], R], files: list[T], workers: int | None = None) -> list[R]:
    """`task` on each file, in order: in a pool of `workers` processes (the machine's cores
    by default) for a large tree and a task that can be sent to them, else in this process."""
    workers = workers if workers is not None else (os.cpu_count() or 1)
    if len(files) >= POOL_MIN_FILES and workers > 1 and picklable(task):
        return in_workers(task, files, workers, chunksize=100)
    return [task(path) for path in files]
