"""epbench.generator.worker_pool.Forked: a build step in a forked child, beside this process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from epbench.core.errors import InputError
from epbench.generator.worker_pool import Forked
from tests.conftest import need


@pytest.fixture(autouse=True)
def _fork() -> None:
    """These tests are of the forked child: where fork is missing (not POSIX) Forked runs its
    jobs in this process, and they cannot show what they show (a fail under CI=true)."""
    if not hasattr(os, "fork"):
        need("os.fork (POSIX)")


def test_a_forked_job_returns_its_value_from_the_memory_it_was_forked_with() -> None:
    table = {"rows": list(range(100_000))}  # reaches the child by fork, not by pickle
    with Forked(lambda: (os.getpid(), sum(table["rows"]), "x" * 300_000)) as job:
        pid, total, big = job.result()
    assert pid != os.getpid()
    assert total == sum(range(100_000))
    assert big == "x" * 300_000  # more than a pipe holds: read while the child writes


def test_what_the_child_raises_is_raised_here() -> None:
    def fails() -> None:
        raise InputError("results/a.json: broken")

    with Forked(fails) as job, pytest.raises(InputError, match=r"results/a\.json: broken"):
        job.result()


def test_an_exception_that_does_not_pickle_comes_back_as_its_traceback() -> None:
    class Local(Exception):  # a local class: pickle cannot find it by name
        pass

    def fails() -> None:
        raise Local("no pickle")

    with Forked(fails) as job, \
            pytest.raises(RuntimeError, match=r"(?s)forked build step.*no pickle"):
        job.result()


def test_a_child_that_dies_without_an_answer_is_an_error_not_a_hang() -> None:
    with Forked(lambda: os._exit(3)) as job, pytest.raises(RuntimeError, match="died"):
        job.result()


def test_closing_an_unasked_child_stops_it() -> None:
    import time

    job = Forked(lambda: time.sleep(60))
    started = time.monotonic()
    job.close()
    assert time.monotonic() - started < 10


def test_the_child_never_writes_this_process_s_buffered_output_again() -> None:
    # Under pytest-xdist stdout is the worker's channel to its controller: a child that
    # flushed its copy of a half-written buffer sent the same bytes twice and hung the run.
    script = textwrap.dedent("""
        import sys
        from epbench.generator.worker_pool import Forked
        sys.stdout.write("before")  # buffered: stdout is a pipe
        print(Forked(lambda: 41 + 1).result())
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout == "before42\n"


def test_a_child_made_with_an_inbox_works_on_what_this_process_sends_it_later() -> None:
    def job(receive: object) -> str:
        value = receive()  # type: ignore[operator]
        return f"{value['config']} {os.getpid()}"

    with Forked(job, inbox=True) as child:
        late = {"config": "set after the fork"}  # not in the child's memory: it is sent
        child.send(late)
        text = child.result()
    assert text.startswith("set after the fork ") and text != f"set after the fork {os.getpid()}"


def test_a_child_waiting_for_work_it_never_gets_is_stopped_on_close() -> None:
    import time

    child = Forked(lambda receive: receive(), inbox=True)
    started = time.monotonic()
    child.close()
    assert time.monotonic() - started < 10
