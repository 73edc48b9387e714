"""The one JSON decoder for untrusted text: no duplicate key, no NaN or Infinity, bounded nesting.

    decode(data, max_depth)   fast: orjson, the depth and duplicate keys read from the text
                              (`shape`); Refused otherwise, and whatever orjson refuses.
                              Used for every journal line (epbench.core.journal_file) and
                              by epbench.core.fast_json
    loads_text(text)          exact: the standard parser with the same rules as hooks, its
                              JSONDecodeError saying line and column. Used by
                              epbench.core.documents, and by `decode` to say why orjson
                              refused a text

orjson refuses NaN, Infinity and a literal that overflows to Infinity by itself, and keeps the
last of duplicate keys silently: a parsed document holding fewer object members than its text
writes had a duplicate key. `loads_text` with `finite=False` parses an overflowing literal
(1e999) to inf so that its caller can name where it is (documents: `value.non-finite` with a
JSON pointer); `decode` refuses it.

The text's shape is read once, on the bytes at C speed: with escaped backslashes and quotes
removed, the remaining quotes delimit strings (UTF-8 never puts these ASCII bytes inside a
multi-byte character), so what lies outside strings is left once strings are cut out. There,
every colon is one object member, and the depth is the number of rounds that strip empty
`{}`/`[]` pairs from the brackets. orjson then parses the text (a fifth of the time of the
standard parser with the hooks); the parsed document is dumped again and its colons outside
strings counted the same way.
"""

from __future__ import annotations

import json
import re
from typing import Any, NoReturn

import orjson

_INF = float("inf")
_NOT_SHAPE = bytes(set(range(256)) - set(b'"[]{}:'))
_EMPTY_PAIR = re.compile(rb"\{\}|\[\]")


class Refused(ValueError):
    """The text is not JSON under the rules; `reason` is one of syntax, depth, duplicate,
    non-finite, and the message says it in words ("is not JSON", "repeats a key", ...)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):  # rare: find the first repeated key to name it
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise Refused("duplicate", f"duplicate key {key!r}")
            seen.add(key)
    return out


def reject_constant(name: str) -> Any:
    raise Refused("non-finite", f"{name} is not a number JSON allows")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if value in (_INF, -_INF):
        raise Refused("non-finite", f"{literal[:40]} overflows to Infinity")
    return value


def loads_text(text: str, *, finite: bool = True) -> Any:
    """The document in `text` under the rules (json.JSONDecodeError for bad syntax, Refused
    for a duplicate key or NaN/Infinity; with finite=False a literal past the float range is
    inf). Nesting is bounded by the caller (RecursionError past Python's limit)."""
    hooks: dict[str, Any] = {"object_pairs_hook": no_duplicates, "parse_constant": reject_constant}
    if finite:
        hooks["parse_float"] = _finite_float
    return json.loads(text, **hooks)


def decode(data: bytes, max_depth: int) -> Any:
    """The document in `data`, nesting at most `max_depth` containers deep; Refused otherwise."""
    try:
        nesting, written = shape(data)
    except ValueError:
        raise Refused("syntax", "is not JSON") from None
    if nesting > max_depth:
        raise Refused("depth", f"nests deeper than {max_depth} levels")
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        _exactly(data)  # what orjson refuses: say why
    if written and _lost_members(data, document, written):
        raise Refused("duplicate", "repeats a key (duplicate keys are refused)")
    return document


def _lost_members(data: bytes, document: Any, written: int) -> bool:
    """Whether the parsed document holds fewer object members than the text writes (a key
    repeated). Only a `\\u` escape can write a colon without one in the text, so in a text
    with none, every colon of the document's dump stands for one of the text's: the two counts
    of all colons differ exactly when a member (its colon, and any in its strings) was lost,
    and the dump need not be cut to what lies outside its strings."""
    dump = orjson.dumps(document)
    if b"\\u" not in data:
        return dump.count(b":") != data.count(b":")
    return _outside_strings(dump).count(b":") != written


def _exactly(data: bytes) -> NoReturn:
    """Why orjson refused `data`: a rule's Refused, else syntax (what only the standard
    parser reads, an integer past 64 bits or a lone surrogate, is refused too)."""
    try:
        loads_text(data.decode("utf-8"))
    except Refused:
        raise
    except (ValueError, RecursionError):  # JSONDecodeError, UnicodeDecodeError
        pass
    raise Refused("syntax", "is not JSON")


def depth(data: bytes) -> int:
    """How deeply the containers of this well-formed JSON text nest (0 for a scalar);
    ValueError when its brackets do not pair up (text that is not JSON)."""
    return shape(data)[0]


def shape(data: bytes) -> tuple[int, int]:
    """(depth, members) of this well-formed JSON text: how deeply its containers nest and how
    many object members it writes (duplicates included); ValueError when its brackets do not
    pair up (text that is not JSON)."""
    kept = _outside_strings(data)
    members = kept.count(b":")
    brackets = kept.replace(b":", b"") if members else kept
    rounds = 0
    while brackets:
        inner = _EMPTY_PAIR.sub(b"", brackets)
        if len(inner) == len(brackets):
            raise ValueError("unbalanced brackets: not well-formed JSON")
        brackets = inner
        rounds += 1
    return rounds, members


def members(document: Any) -> int:
    """How many object members the parsed document holds (a duplicate key counts once): the
    colons outside strings of its compact dump."""
    return _outside_strings(orjson.dumps(document)).count(b":")


def _outside_strings(data: bytes) -> bytes:
    """The brackets and colons of well-formed JSON text that lie outside its strings."""
    if b"\\" in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    # Two quotes side by side are a string with no bracket or colon in it, or the end of one
    # string and the start of the next with none between: dropping them keeps every bracket
    # and colon on its side.
    kept = data.translate(None, _NOT_SHAPE).replace(b'""', b"")
    if b'"' in kept:
        kept = b"".join(kept.split(b'"')[::2])  # even pieces lie outside strings
    return kept
