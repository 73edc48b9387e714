"""The build pauses Python's cyclic collector and gives it back as it found it."""

from __future__ import annotations

import gc

import pytest

from generator.collector import collector_paused


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
