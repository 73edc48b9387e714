"""Running the runner's coroutines: on uvloop when it is installed, in a thread of their own
when the caller already runs an event loop."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine on uvloop when it is installed (less client CPU per read), else asyncio.

    When this thread already runs an event loop (a notebook, or Playwright's sync API in the
    same process), the run gets a thread of its own: a loop cannot be started inside another.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run_on_new_loop(coro)
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="epbench-run") as pool:
        return pool.submit(_run_on_new_loop, coro).result()


def _run_on_new_loop(coro: Coroutine[Any, Any, T]) -> T:
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coro)
