"""What the emulator remembers: counters for /emulator/stats and one record per request.

Times are `time.perf_counter_ns()` (CLOCK_MONOTONIC on Linux), the clock epbench's client
journals with, so server and client times compare directly on one machine.
"""

from __future__ import annotations

import collections
import hashlib
import math
import random
from dataclasses import asdict, dataclass
from typing import Any

from epbench.runner.emulator.agentic import Player
from epbench.runner.emulator.batching import SlotPool
from epbench.runner.emulator.faults import FAULT_KINDS, FaultDrawer
from epbench.runner.emulator.prefix_cache import CacheOutcome, PrefixCache, prompt_text
from epbench.runner.emulator.settings import Distribution, EmulatorSettings

MAX_RECORDS = 200_000  # the request log keeps the newest this many (a long soak stays bounded)
MAX_SEEN = 1_000_000  # bodies remembered for retry draws; past it the memory starts afresh
AGENTIC_KINDS = ("invalid_json", "unknown_tool", "wrong_arguments", "missing_id", "skip_call")


@dataclass(slots=True)
class RequestRecord:
    """The server's own view of one chat-completions request."""

    request_id: str
    t_recv_ns: int
    t_admit_ns: int | None = None  # when a slot was granted (queue wait = admit - recv)
    t_first_byte_ns: int | None = None  # just before the first content-bearing chunk is sent
    t_last_byte_ns: int | None = None  # just before the last content-bearing chunk is sent
    status: int = 0
    fault: str | None = None
    prompt_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens read from the prefix cache (prompt_cache on)
    completion_tokens: int = 0  # content-bearing chunks (or script tokens) actually sent
    stream: bool = False
    disconnected: bool = False  # the client went away before the response was complete
    model_prefill_ns: int = 0  # what the batching model set, free of the event loop's lateness:
    model_decode_ns: int = 0  # time to the first token, and the decode steps summed
    model_steps: int = 0


class EmulatorState:
    """Settings, the slot pool, the fault drawer, counters and the request log of one server."""

    def __init__(self, settings: EmulatorSettings, player: Player | None = None) -> None:
        self.settings = settings
        self.player = player
        self.pool = SlotPool(settings.slots)
        self.drawer = FaultDrawer(settings.faults)
        self.reset()

    def reset(self) -> None:
        """Forget counters and records (the slot pool and the rate-limit bucket go on)."""
        self.requests = 0
        self.faults: dict[str, int] = dict.fromkeys(FAULT_KINDS, 0)
        self.agentic: dict[str, int] = dict.fromkeys(AGENTIC_KINDS, 0)
        self.records: collections.deque[RequestRecord] = collections.deque(maxlen=MAX_RECORDS)
        self._seen: dict[bytes, int] = {}
        s = self.settings
        self.prefix_cache = PrefixCache(s.cache_block_tokens, s.prompt_cache_blocks,
                                        s.chars_per_token)
        self.cache_counts = {"prompt_tokens": 0, "read_tokens": 0, "written_tokens": 0}
        self._next_id = 0

    def visit_cache(self, messages: list[Any], prompt_tokens: int) -> CacheOutcome:
        """The prompt's blocks read from and written to the prefix cache (counted for stats;
        never more than the prompt's own token count)."""
        outcome = self.prefix_cache.visit(prompt_text(messages))
        read = min(outcome.read, prompt_tokens)
        written = min(outcome.written, prompt_tokens - read)
        counts = self.cache_counts
        counts["prompt_tokens"] += prompt_tokens
        counts["read_tokens"] += read
        counts["written_tokens"] += written
        return CacheOutcome(read, written)

    def next_request_id(self) -> str:
        self._next_id += 1
        return f"emu-{self._next_id:06d}"

    def request_rng(self, body: bytes) -> random.Random:
        """The request's own generator: from the seed, the body, and how often it was seen.

        Keyed by content rather than arrival order, so concurrent clients get the same draws
        whatever order their requests land in; a retry of the same body gets fresh draws.
        """
        digest = hashlib.blake2b(body, digest_size=16).digest()
        if len(self._seen) >= MAX_SEEN:
            self._seen.clear()
        seen = self._seen.get(digest, 0)
        self._seen[digest] = seen + 1
        return random.Random(f"{self.settings.seed}/{digest.hex()}/{seen}")

    def stats(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "faults": dict(self.faults),
            "agentic": dict(self.agentic),
            "active": self.pool.active,
            "queued": self.pool.queued,
            "prefix_cache": {**self.cache_counts, "blocks": len(self.prefix_cache)},
        }

    def records_json(self) -> list[dict[str, Any]]:
        return [asdict(record) for record in self.records]


def draw_length(dist: Distribution, rng: random.Random) -> int:
    """One draw from an output-length distribution, rounded, clipped to [min, max], >= 1."""
    if dist.kind == "uniform":
        value = rng.uniform(dist.low or 0.0, dist.high if dist.high is not None else dist.mean)
    elif dist.kind == "normal":
        value = rng.gauss(dist.mean, dist.stddev)
    elif dist.kind == "lognormal":
        # mean and stddev are of the length itself, not of its logarithm
        sigma2 = math.log(1.0 + (dist.stddev / dist.mean) ** 2) if dist.mean > 0 else 0.0
        mu = math.log(dist.mean) - sigma2 / 2.0 if dist.mean > 0 else 0.0
        value = rng.lognormvariate(mu, math.sqrt(sigma2))
    else:
        value = dist.value
    if dist.low is not None:
        value = max(value, dist.low)
    if dist.high is not None:
        value = min(value, dist.high)
    return max(1, round(value))
