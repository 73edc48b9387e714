"""The build pauses Python's cyclic collector and gives it back as it found it; its validation
workers run it, less often."""

from __future__ import annotations

import gc
import multiprocessing
from typing import Any

import pytest

from epbench.generator.collector import collector_paused


def test_the_collector_is_paused_inside_and_running_again_after() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # an inner block does not restart it early
    assert gc.isenabled()


def test_the_collector_runs_again_after_a_failed_build_and_frees_its_cycles() -> None:
    class Node:
        pass

    with pytest.raises(RuntimeError), collector_paused():
        a, b = Node(), Node()
        a.other, b.other = b, a  # type: ignore[attr-defined]
        del a, b
        raise RuntimeError("a build that failed")
    assert gc.isenabled()
    assert not any(type(o) is Node for o in gc.get_objects())


def test_a_collector_switched_off_by_the_caller_stays_off() -> None:
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


class _Cycle:
    pass


def _cycles_left_in_a_validation_worker(queue: Any) -> None:
    from datetime import UTC, datetime

    from epbench.generator.validate import FileCheck
    from epbench.generator.worker_pool import start_worker

    gc.disable()  # as the build leaves it for its workers
    start_worker(FileCheck(None, datetime(2026, 11, 30, tzinfo=UTC)))
    for _ in range(100_000):
        a, b = _Cycle(), _Cycle()
        a.other, b.other = b, a  # type: ignore[attr-defined]
        del a, b
    queue.put((gc.isenabled(), sum(type(o) is _Cycle for o in gc.get_objects())))


def test_a_validation_worker_collects_reference_cycles_by_itself() -> None:
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    worker = context.Process(target=_cycles_left_in_a_validation_worker, args=(queue,))
    worker.start()
    enabled, left = queue.get(timeout=60)
    worker.join(timeout=60)
    assert enabled
    assert left < 50_000  # of the 200,000 made: the collector ran on its own, more than once
