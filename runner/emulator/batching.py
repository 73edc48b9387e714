"""The batching model: a fixed number of slots, a FIFO queue beyond them, and the delays.

    TTFT   = queue wait + (ttft_ms + prefill_ms_per_1k_tokens * prompt_tokens / 1000) * J
    step   = tpot_ms * (1 + tpot_growth * (active - 1)) * J       (one output token)
    J      = 1 + jitter * u,  u ~ uniform[-1, 1] from the request's seeded generator

`active` is the number of sequences holding a slot when the step starts, so decode slows as
the batch fills: system throughput active / step rises with load while each user's tokens per
second falls, the trade-off a concurrency sweep traces.

Each sequence keeps its own clock of absolute deadlines (`DecodeClock`): sleeping to the next
deadline rather than for a step's length keeps the long-run rate exact when the event loop is
late, and a sequence that fell behind does not burst to catch up (the next deadline is never
set in the past). The clock also sums what the model asked for (`prefill_ns`, `decode_ns` over
`steps`), with none of the event loop's lateness: the request log carries it, so a test on a
loaded machine can check the model's own times where the wall clock is noisy.
"""

from __future__ import annotations

import asyncio
import collections
import random
import time

from epbench.runner.emulator.settings import EmulatorSettings


class SlotPool:
    """`slots` sequences run at once; more wait in arrival order (FIFO)."""

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self.active = 0
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    @property
    def queued(self) -> int:
        return len(self._waiters)

    async def acquire(self) -> None:
        """Take a slot, waiting behind every earlier request when all are busy."""
        if self.active < self.slots and not self._waiters:
            self.active += 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # the slot was handed over just as the waiter gave up
            else:
                self._waiters.remove(waiter)
            raise

    def release(self) -> None:
        """Give the slot to the longest waiter, or free it."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the slot passes on; `active` is unchanged
                return
        self.active -= 1


class DecodeClock:
    """One sequence's schedule: when its first token is due, then one deadline per step."""

    def __init__(self, settings: EmulatorSettings, rng: random.Random, pool: SlotPool) -> None:
        self._settings = settings
        self._rng = rng
        self._pool = pool
        self.deadline_ns = 0
        self.prefill_ns = 0  # the model's time to the first token (no queue, no lateness)
        self.decode_ns = 0  # the model's decode steps, summed
        self.steps = 0

    def _jitter(self) -> float:
        j = self._settings.jitter
        return 1.0 + j * (2.0 * self._rng.random() - 1.0) if j else 1.0

    def prefill_ms(self, prompt_tokens: int) -> float:
        s = self._settings
        return (s.ttft_ms + s.prefill_ms_per_1k_tokens * prompt_tokens / 1000.0) * self._jitter()

    def step_ms(self) -> float:
        s = self._settings
        active = max(1, self._pool.active)
        return s.tpot_ms * (1.0 + s.tpot_growth * (active - 1)) * self._jitter()

    def start(self, prompt_tokens: int) -> None:
        """Set the first token's deadline from now: the fixed part plus prefill."""
        self.prefill_ns = int(self.prefill_ms(prompt_tokens) * 1e6)
        self.deadline_ns = time.perf_counter_ns() + self.prefill_ns

    def advance(self) -> None:
        """The next token's deadline: one step after the previous, never in the past."""
        step_ns = int(self.step_ms() * 1e6)
        self.decode_ns += step_ns
        self.steps += 1
        self.deadline_ns = max(self.deadline_ns + step_ns, time.perf_counter_ns())

    async def wait(self) -> None:
        """Sleep until the current deadline (no sleep, and no yield, when it has passed)."""
        delay = self.deadline_ns - time.perf_counter_ns()
        if delay > 0:
            await asyncio.sleep(delay / 1e9)
