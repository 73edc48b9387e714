"""Token counting without a tokenizer: the emulator's one rule, which clients may share.

    prompt_tokens = ceil(chars / chars_per_token), at least 1

where `chars` counts the characters of every message's text: string `content`, the `text` of
content parts, and an assistant message's tool-call names and arguments. Tool definitions and
role names are not counted. The default `chars_per_token` is 4 (English text under common BPE
vocabularies averages about four characters per token).

Output text is drawn from a fixed vocabulary of short words, each one token.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

# Each entry is one emulated token. Plain ASCII words with a leading space, so that a JSON
# encoding of the delta never needs escaping and the byte templates can be built once.
_WORDS = (
    "the model answers every request with tokens drawn from a small fixed vocabulary so that "
    "streams are cheap to build and easy to count while the timing follows a batching server "
    "with slots queue prefill decode and seeded jitter for each step of generation on loopback"
)
VOCABULARY: tuple[str, ...] = tuple(" " + word for word in _WORDS.split(" "))


def message_chars(messages: Iterable[Any]) -> int:
    """Characters of text in chat messages, as the token rule above counts them."""
    total = 0
    for message in messages:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if isinstance(content, str):
            total += len(content)
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    total += len(part["text"])
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            for call in calls:
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict):
                    for key in ("name", "arguments"):
                        value = function.get(key)
                        if isinstance(value, str):
                            total += len(value)
    return total


def count_prompt_tokens(messages: Iterable[Any], chars_per_token: float = 4.0) -> int:
    """Prompt tokens of a chat request: ceil(chars / chars_per_token), at least 1."""
    return max(1, math.ceil(message_chars(messages) / chars_per_token))
