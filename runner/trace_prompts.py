"""Prompts for a Mooncake trace replay: equal hash ids give identical 512-token blocks, as the
endpoint counts tokens, and different ids give different blocks.

The runner has no tokenizer, so a block is words, sized with the endpoint's calibration
(epbench.runner.calibrate: tokens = overhead + tokens_per_word x words). Block k of a prompt
ends where the prompt reaches (k + 1) x 512 tokens, the chat template and system prompt
(`overhead`) included, which is where a server's prefix cache cuts it:

    end_words(k) = round(((k + 1) x 512 - overhead) / tokens_per_word)

and block k is words end_words(k - 1) to end_words(k). Its words are the first ones of a
stream seeded by (workload seed, hash id), so every request holding id h at place k sends the
same text there; the trace's ids are hashes of the whole prefix, so an id has one place. A
request's last block is cut where its own length ends; words past its hash ids (a length
rounded up) are unique to the request. The prompt is a pure function of (seed, request id,
hash ids, length, calibration), so `--resume` rebuilds it.
"""

from __future__ import annotations

import functools
import random

from epbench.core.trace_file import BLOCK_TOKENS
from epbench.runner.prompts import WORDS


@functools.lru_cache(maxsize=8192)
def block_text(seed: int, hash_id: int, words: int) -> str:
    """The first `words` words of hash id `hash_id`'s block."""
    rng = random.Random(f"{seed}:block:{hash_id}")
    return " ".join(rng.choices(WORDS, k=max(0, words)))


def block_ends(blocks: int, tokens_per_word: float, overhead: float) -> list[int]:
    """Where each block ends, in words of the user message (increasing, the first at least 1)."""
    ends: list[int] = []
    for k in range(blocks):
        end = round(((k + 1) * BLOCK_TOKENS - overhead) / tokens_per_word)
        ends.append(max(end, ends[-1] + 1 if ends else 1))
    return ends


def trace_prompt(seed: int, request_id: str, hash_ids: list[int] | tuple[int, ...], words: int,
                 tokens_per_word: float, overhead: float) -> str:
    """A prompt of `words` words laid out on the request's hash-id blocks."""
    parts: list[str] = []
    start = 0
    for hash_id, end in zip(hash_ids, block_ends(len(hash_ids), tokens_per_word, overhead),
                            strict=True):
        take = min(end, words) - start
        if take <= 0:
            break
        parts.append(block_text(seed, int(hash_id), take))
        start += take
    if start < words:  # past the trace's blocks: this request's own words
        rng = random.Random(f"{seed}:{request_id}")
        parts.append(" ".join([request_id, *rng.choices(WORDS, k=words - start - 1)]))
    return " ".join(parts)
