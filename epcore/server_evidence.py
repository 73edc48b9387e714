"""What the server said about each answer: its own id and a fixed allow-list of headers.

A journal is the client's account of a run; these fields are the provider's, so an auditor
can match each request with the provider's own logs (billing, request logs, rate-limit
dashboards). The runner writes them (runner/client.py), the validator checks their shape
(generator/checks/evidence.py) and a run page shows its first request's (`first_answer`); all
three use this module.

    response_id     chat `id`, Responses `response.id`, Anthropic `message.id` (or the
                    top-level `id` of a non-streamed body); null when the server sent none
    server_headers  {lower-case name: value} for the names in `ALLOWED` the response had

Only the names below are ever kept: nothing that can carry a credential or a session
(`set-cookie`, `authorization`, `x-api-key`, `www-authenticate`, ...) is on the list, and a
server cannot add a name to it. A value is kept when it is printable ASCII of at most
`MAX_VALUE` characters and does not look like a credential (epbench.core.credentials): for ids,
which are random by design (an OpenAI `chatcmpl-…` has the entropy of a key), only a known
key shape or the run's own key is refused; any other value is refused when it looks like a
credential at all. A refused value is dropped, never rewritten, so what is kept is what the
server sent.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from epbench.core.credentials import has_key_shape, looks_like_secret
from epbench.core.journal_lines import SERVER_FIELDS

MAX_VALUE = 128
MAX_LINE_CHARS = 1024 * 1024  # a first request line is a few KB; a longer one is not read on
_PRINTABLE = re.compile(r"[ -~]+")
_ID_SHAPE = re.compile(r"[!-~]+")  # no spaces in an id

# Ids the provider assigns to the request (random by design).
ID_HEADERS = frozenset({
    "x-request-id", "request-id", "x-amzn-requestid", "apim-request-id", "x-ms-request-id",
    "cf-ray", "x-cloud-trace-context", "x-trace-id", "x-correlation-id",
})
# When and how long, by the server's clock.
TIME_HEADERS = frozenset({
    "date", "openai-processing-ms", "x-envoy-upstream-service-time", "server-timing",
})
# What the server said about its limits, at the moment of this answer.
RATE_LIMIT_HEADERS = frozenset({
    "retry-after", "retry-after-ms",
    "x-ratelimit-limit-requests", "x-ratelimit-limit-tokens",
    "x-ratelimit-remaining-requests", "x-ratelimit-remaining-tokens",
    "x-ratelimit-reset-requests", "x-ratelimit-reset-tokens",
    "anthropic-ratelimit-requests-limit", "anthropic-ratelimit-requests-remaining",
    "anthropic-ratelimit-requests-reset",
    "anthropic-ratelimit-tokens-limit", "anthropic-ratelimit-tokens-remaining",
    "anthropic-ratelimit-tokens-reset",
    "anthropic-ratelimit-input-tokens-limit", "anthropic-ratelimit-input-tokens-remaining",
    "anthropic-ratelimit-input-tokens-reset",
    "anthropic-ratelimit-output-tokens-limit", "anthropic-ratelimit-output-tokens-remaining",
    "anthropic-ratelimit-output-tokens-reset",
})
ALLOWED = ID_HEADERS | TIME_HEADERS | RATE_LIMIT_HEADERS
_ALLOWED_BYTES = frozenset(name.encode() for name in ALLOWED)


def clean_id(value: Any, known: Iterable[str] = ()) -> str | None:
    """An id as the journal keeps it, or None when it is not one (or could be a key)."""
    if not isinstance(value, str) or not 0 < len(value) <= MAX_VALUE:
        return None
    if not _ID_SHAPE.fullmatch(value) or has_key_shape(value) or _holds_key(value, known):
        return None
    return value


def clean_value(name: str, value: str, known: Iterable[str] = ()) -> str | None:
    """One allow-listed header's value as the journal keeps it, or None (dropped)."""
    if name in ID_HEADERS:
        return clean_id(value, known)
    if not 0 < len(value) <= MAX_VALUE or not _PRINTABLE.fullmatch(value):
        return None
    if looks_like_secret(value) or _holds_key(value, known):
        return None
    return value


def _holds_key(value: str, known: Iterable[str]) -> bool:
    """The value holds the run's own key, or is a piece of it of 8+ characters."""
    return any(
        len(key) >= 8 and (key in value or (len(value) >= 8 and value in key)) for key in known
    )


def server_headers(
    raw: Iterable[tuple[bytes, bytes]], known: Iterable[str] = ()
) -> dict[str, str]:
    """The allow-listed headers of a response (raw name/value pairs), cleaned; the first
    of a repeated name wins."""
    kept: dict[str, str] = {}
    known = tuple(known)
    for name, value in raw:
        lower = name.lower()
        if lower not in _ALLOWED_BYTES:
            continue
        text = lower.decode("ascii")
        if text in kept:
            continue
        cleaned = clean_value(text, value.decode("latin-1").strip(), known)
        if cleaned is not None:
            kept[text] = cleaned
    return kept


def line_problem(record: Mapping[str, Any]) -> str | None:
    """What is wrong with a journal line's `response_id` and `server_headers`, or None.

    Both are optional (journals written before them have neither); when present they must be
    what `clean_id` and `server_headers` would have kept."""
    for field, kind in SERVER_FIELDS.items():
        if field in record and not isinstance(record[field], kind):
            return f"{field} is a {type(record[field]).__name__}, not a string, object or null"
    value = record.get("response_id")
    if value is not None and clean_id(value) != value:
        return "response_id is not an id of at most 128 printable characters"
    headers = record.get("server_headers")
    if headers:
        if len(headers) > len(ALLOWED):
            return "server_headers holds more headers than the allow-list names"
        for name, value in headers.items():
            if name not in ALLOWED:
                return f"server_headers holds {name[:40]!r}, which is not on the allow-list"
            if not isinstance(value, str) or clean_value(name, value) != value:
                return f"server_headers[{name!r}] is not a value the runner keeps"
    return None


@dataclass(frozen=True)
class FirstAnswer:
    """What the server said about a journal's first request: for its run page."""

    request_id: str
    response_id: str | None
    headers: tuple[tuple[str, str], ...]


def first_answer(journal: Path, max_lines: int = 16) -> FirstAnswer | None:
    """The server's side of the first request line of a gzipped journal, or None (no such
    line in its first `max_lines`, or one whose fields are not what the runner keeps).

    Reads a few capped lines, never the whole journal: a page needs one request."""
    try:
        with gzip.open(journal, "rt", encoding="utf-8") as lines:
            for _ in range(max_lines):
                line = lines.readline(MAX_LINE_CHARS)
                if not line:
                    return None
                record = json.loads(line)
                if not isinstance(record, dict) or record.get("type", "request") != "request":
                    continue
                if line_problem(record) is not None or not isinstance(
                    record.get("request_id"), str
                ):
                    return None
                headers = record.get("server_headers") or {}
                return FirstAnswer(record["request_id"][:MAX_VALUE], record.get("response_id"),
                                   tuple(sorted(headers.items())))
    except (OSError, EOFError, ValueError):
        return None
    return None
