"""A fast path for ordinary JSON files (about 5x faster on a result, which matters for
10,000 of them): the C parser with a duplicate-key hook, number literals that would overflow
to Infinity refused, text with a run of 19 digits (an integer that may be past 64 bits) left
to the full loader, and one walk over the containers for depth.

It only ever returns documents that the full loader (`epcore.documents.parse_document`)
would return too; anything unusual raises `Unusual`, and the full loader then decides and
produces the finding.
"""

from __future__ import annotations

import json
import re
from typing import Any

_INF = float("inf")
_LONG_DIGITS = re.compile(r"\d{19}")  # an integer that may be past 64 bits (or a digest)


class Unusual(Exception):
    """The fast path cannot vouch for this file: use the full loader."""


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise Unusual
    return out


def _constant(_: str) -> Any:
    raise Unusual


def _finite_float(literal: str) -> float:
    value = float(literal)
    if value in (_INF, -_INF):
        raise Unusual  # a literal like 1e999 overflows to Infinity
    return value


def _shallow(document: Any, max_depth: int) -> bool:
    """True when no container nests deeper than max_depth (scalars are not visited twice)."""
    stack = [(document, 1)]
    while stack:
        item, level = stack.pop()
        values = item.values() if isinstance(item, dict) else item
        for value in values:
            if isinstance(value, dict | list):
                if level + 1 >= max_depth:  # stricter than the full loader: it decides
                    return False
                stack.append((value, level + 1))
    return True


def fast_json(data: bytes, max_depth: int) -> tuple[Any, str]:
    """The document and its text, or Unusual when any rule might apply."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Unusual from None
    if text.startswith("\ufeff") or _LONG_DIGITS.search(text):
        raise Unusual
    try:
        document = json.loads(text, object_pairs_hook=_unique, parse_constant=_constant,
                              parse_float=_finite_float)
    except (ValueError, RecursionError):
        raise Unusual from None
    if isinstance(document, dict | list) and not _shallow(document, max_depth):
        raise Unusual
    return document, text
