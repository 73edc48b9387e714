"""One function over many items in a pool of processes, as validation and the build run theirs.

The function is handed to each worker once, when it starts, and keeps its state there (the
validator's workload indexes, say) for every item that worker takes; only the items and what
the function returns cross between processes. Which function runs is the caller's:
`epbench.generator.validate` checks files, `epbench.generator.tables` checks them and makes
their rows, the build (`epbench.generator.build`) writes whole shards of its cache.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import signal
import struct
import sys
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from functools import partial
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


class Forked:
    """`jobs` run one after the other in a forked child while this process goes on with other
    work; each `result()` is what the next job returned, or raises here what it raised (the
    child stops at the first that raises).

    The child has this process's memory as it was at the fork (the tables, say: nothing is
    pickled on the way in) and sends back only return values, each pickled through a pipe
    as soon as its job is done, so this process can take the first while the child goes on
    with the next. It leaves by `os._exit`, so it never flushes a copy of this process's
    buffered stdio (under pytest-xdist stdout is the channel to the controller, and a flushed
    copy corrupted it) and runs no exit handlers (temporary folders stay this process's to
    remove); this process's stdio is flushed before the fork for the same reason. A job must
    not need a thread of this process: threads do not survive a fork (polars' thread pool
    among them, so no downloads are written in a child). `close()` (or leaving the `with`)
    stops a child whose results were not all asked for. Where fork is missing, each job runs
    in its `result()`, in this process."""

    def __init__(self, *jobs: Callable[..., Any], inbox: bool = False) -> None:
        self._inbox: list[Any] = []
        if inbox:  # each job is called with `receive`: what this process `send`s, in order
            jobs = tuple(partial(job, self._receive) for job in jobs)
        self._jobs: list[Callable[[], Any]] = list(jobs)
        self._pid = 0
        self._read = self._write = -1
        if not hasattr(os, "fork"):
            return
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed or odd stream: nothing to flush
                stream.flush()
        read, write = os.pipe()
        to_child, to_here = os.pipe() if inbox else (-1, -1)
        pid = os.fork()
        if pid == 0:  # the child: never returns into the caller's code
            code = 1
            try:
                os.close(read)
                if inbox:
                    os.close(to_here)
                    self._read = to_child  # `_receive` reads what the parent sends
                code = _run_jobs(jobs, write)
            finally:
                os._exit(code)
        os.close(write)
        if inbox:
            os.close(to_child)
        self._pid, self._read, self._write, self._jobs = pid, read, to_here, []

    def send(self, value: Any) -> None:
        """Hand `value` to the child's next `receive()` (a job made with `inbox=True`)."""
        if self._write < 0:  # no fork: the job runs in `result()`, here
            self._inbox.append(value)
            return
        _write_frame(self._write, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))

    def _receive(self) -> Any:
        if self._inbox:
            return self._inbox.pop(0)
        head = self._exactly(_FRAME.size)
        if len(head) < _FRAME.size:
            raise EOFError("the build stopped before it handed this step its work")
        return pickle.loads(self._exactly(_FRAME.unpack(head)[0]))

    def result(self) -> Any:
        if self._jobs:
            return self._jobs.pop(0)()
        if self._read < 0:
            raise RuntimeError("a forked build step was asked for more than it had")
        head = self._exactly(_FRAME.size)
        size = _FRAME.unpack(head)[0] if len(head) == _FRAME.size else -1
        body = self._exactly(size) if size >= 0 else b""
        if size < 0 or len(body) < size:
            status = self._reap()
            raise RuntimeError(f"a forked build step died without an answer (wait status "
                               f"{status})")
        ok, value = pickle.loads(body)
        if not ok:
            self._reap()
            raise value
        return value

    def _exactly(self, size: int) -> bytes:
        chunks, left = [], size
        while left:
            chunk = os.read(self._read, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        if self._pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGTERM)
        self._reap()

    def _reap(self) -> int:
        for end in (self._read, self._write):
            if end >= 0:
                os.close(end)
        self._read = self._write = -1
        status = 0
        if self._pid:
            _, status = os.waitpid(self._pid, 0)
            self._pid = 0
        return status

    def __enter__(self) -> Forked:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


_FRAME = struct.Struct("<Q")
"""A pickle's length before it, on the pipes to and from a forked child."""


def _write_frame(fd: int, payload: bytes) -> None:
    """`payload` as one frame on the pipe `fd`: its length, then its bytes, all written."""
    view = memoryview(_FRAME.pack(len(payload)) + payload)
    while view:
        view = view[os.write(fd, view):]


def _run_jobs(jobs: tuple[Callable[[], Any], ...], write: int) -> int:
    """The forked child's work: each job's result (or its exception) sent as a frame; the
    exit code."""
    for job in jobs:
        try:
            payload, code = pickle.dumps((True, job()), protocol=pickle.HIGHEST_PROTOCOL), 0
        except BaseException as exc:  # everything goes back to the parent
            payload, code = _failure(exc), 1
        _write_frame(write, payload)
        if code:
            return code
    return 0


def _failure(exc: BaseException) -> bytes:
    """A child's exception, pickled as it is where it can be, else as a RuntimeError naming it
    with its traceback."""
    try:
        return pickle.dumps((False, exc), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # an exception that does not pickle
        text = "".join(traceback.format_exception(exc))
        return pickle.dumps((False, RuntimeError(f"a forked build step failed:\n{text}")))
