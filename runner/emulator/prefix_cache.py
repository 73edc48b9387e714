"""The emulator's prefix cache: fixed-size blocks of prompt tokens, least recently used first out.

A prompt's text (the characters `tokens.message_chars` counts, message by message) is cut
into blocks of `block_tokens * chars_per_token` characters; block k's key hashes block k's
text together with block k-1's key, so a block is found only after the same whole prefix
(vLLM's automatic prefix caching keys its blocks the same way). A request reads the longest
run of leading blocks already cached (those tokens skip prefill) and writes every full block
after it; the partial block at the end is never cached. The cache holds `capacity_blocks`
blocks and evicts the least recently used one when full.

Blocks are written when the request is planned, before its prefill: two requests that share a
prefix and arrive together both see the first one's blocks (a real server that caches a block
only once its prefill is done would miss the second). Message roles are not part of the
text, so two prompts that differ only in who said what share their blocks.
"""

from __future__ import annotations

import collections
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

DEFAULT_BLOCK_TOKENS = 16  # vLLM's default block size
DEFAULT_CAPACITY_BLOCKS = 16_384


@dataclass(frozen=True)
class CacheOutcome:
    """Tokens of one prompt read from the cache and written to it."""

    read: int
    written: int


def prompt_text(messages: Iterable[Any]) -> str:
    """The text of chat messages, in the order and the pieces `message_chars` counts."""
    parts: list[str] = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(p["text"] for p in content
                         if isinstance(p, dict) and isinstance(p.get("text"), str))
        calls = message.get("tool_calls")
        for call in calls if isinstance(calls, list) else ():
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                parts.extend(function[k] for k in ("name", "arguments")
                             if isinstance(function.get(k), str))
    return "".join(parts)


class PrefixCache:
    """Blocks of `block_tokens` tokens keyed by their whole prefix, at most `capacity_blocks`."""

    def __init__(self, block_tokens: int = DEFAULT_BLOCK_TOKENS,
                 capacity_blocks: int = DEFAULT_CAPACITY_BLOCKS,
                 chars_per_token: float = 4.0) -> None:
        self.block_tokens = block_tokens
        self.capacity_blocks = capacity_blocks
        self.block_chars = max(1, round(block_tokens * chars_per_token))
        self._blocks: collections.OrderedDict[bytes, None] = collections.OrderedDict()

    def __len__(self) -> int:
        return len(self._blocks)

    def keys(self, text: str) -> list[bytes]:
        """The key of every full block of `text`, each chained to the one before."""
        out: list[bytes] = []
        previous = b""
        size = self.block_chars
        for start in range(0, len(text) - size + 1, size):
            block = text[start:start + size].encode("utf-8", "replace")
            previous = hashlib.blake2b(previous + block, digest_size=16).digest()
            out.append(previous)
        return out

    def visit(self, text: str) -> CacheOutcome:
        """Read the cached leading blocks of `text` (marking them used), write the rest."""
        keys = self.keys(text)
        hits = 0
        for key in keys:
            if key not in self._blocks:
                break
            self._blocks.move_to_end(key)
            hits += 1
        for key in keys[hits:]:
            self._blocks[key] = None
            if len(self._blocks) > self.capacity_blocks:
                self._blocks.popitem(last=False)
        return CacheOutcome(hits * self.block_tokens, (len(keys) - hits) * self.block_tokens)

    def clear(self) -> None:
        self._blocks.clear()
