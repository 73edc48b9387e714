"""The lean transport takes a free connection slot without yielding to the event loop: under
load (a loop busy with other work between its turns) every request of the asked concurrency
is in flight at once, as vLLM's own client holds them."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from epbench.runner.transport import LeanTransport

CONCURRENCY = 16


def test_a_free_slot_is_taken_without_suspending_the_request() -> None:
    async def main() -> None:
        transport = LeanTransport(max_connections=2)
        step = transport._acquire_slot(5.0)
        with pytest.raises(StopIteration):  # finished on its first step: never suspended
            step.send(None)
        transport._release_slot()

    asyncio.run(main())


def test_under_event_loop_load_the_asked_concurrency_is_in_flight() -> None:
    """Sixteen requests start, then a busy task blocks the loop 20 ms at each of its turns (a
    starved client). At the busy task's first turn all sixteen already hold their slots; with
    a wait before each free slot, none did, and each turn of load delayed them further."""

    async def main() -> tuple[int, int]:
        transport = LeanTransport(max_connections=CONCURRENCY)
        held: list[int] = []

        async def request() -> None:
            await transport._acquire_slot(5.0)
            held.append(1)
            await asyncio.sleep(0.2)
            transport._release_slot()

        async def busy() -> int:
            await asyncio.sleep(0)
            in_flight = len(held)
            for _ in range(5):
                time.sleep(0.02)
                await asyncio.sleep(0)
            return in_flight

        tasks = [asyncio.create_task(request()) for _ in range(CONCURRENCY)]
        at_first_turn = await asyncio.create_task(busy())
        await asyncio.gather(*tasks)
        return at_first_turn, len(held)

    at_first_turn, total = asyncio.run(main())
    assert total == CONCURRENCY
    assert at_first_turn == CONCURRENCY


def test_a_full_pool_still_times_out_by_the_pool_timeout() -> None:
    async def main() -> None:
        transport = LeanTransport(max_connections=1)
        await transport._acquire_slot(1.0)
        with pytest.raises(httpx.PoolTimeout):
            await transport._acquire_slot(0.05)

    asyncio.run(main())
