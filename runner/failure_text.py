"""Why requests failed, in words a user can act on: the first error text of each error class,
redacted and shortened, and a prompt over the endpoint's context named as such with the limit
the endpoint reported (vLLM and OpenAI: "maximum context length is N tokens"; llama.cpp:
"exceeds the available context size", with `n_ctx` in newer versions)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from epbench.core.credentials import redact
from epbench.core.journal_file import Journal

MAX_TEXT = 160
_CONTEXT_WORDS = ("maximum context length", "exceeds the available context size",
                  "context_length_exceeded", "exceed_context_size_error",
                  "longer than the model's context length", "prompt is too long")
_LIMITS = (re.compile(r"maximum context length is (\d+)"), re.compile(r'"n_ctx"\s*:\s*(\d+)'),
           re.compile(r"context length (?:is|of) (\d+)"))


def context_overflow(text: str) -> tuple[bool, int | None]:
    """(the endpoint said the prompt is over its context, the limit in tokens if it said)."""
    lowered = text.lower()
    if not any(word in lowered for word in _CONTEXT_WORDS):
        return False, None
    for pattern in _LIMITS:
        found = pattern.search(lowered)
        if found:
            return True, int(found.group(1))
    return True, None


def explain(text: str, secrets: Iterable[str] = ()) -> str:
    """One failed response's error text for a terminal: redacted, on one line, shortened; a
    context overflow leads with what it is."""
    line = " ".join(redact(text, secrets).split())
    if len(line) > MAX_TEXT:
        line = line[:MAX_TEXT - 3] + "..."
    over, limit = context_overflow(text)
    if over:
        said = f"{limit} tokens" if limit else "not given"
        return (f"prompt over the endpoint's context (limit {said}; shorten the prompts or "
                f"raise the server's context size): {line}")
    return line


def first_errors(journal: Path) -> dict[str, dict[str, Any]]:
    """Per error class in a run's journal: how many requests, and the first one's text."""
    out: dict[str, dict[str, Any]] = {}
    for line in Journal.read(journal) if journal.is_file() else []:
        cls = line.get("class")
        if line.get("type") != "request" or not isinstance(cls, str) or cls == "ok":
            continue
        row = out.setdefault(cls, {"count": 0, "first": ""})
        row["count"] += 1
        if not row["first"] and isinstance(line.get("error"), str):
            row["first"] = explain(line["error"])
    return out
