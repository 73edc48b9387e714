"""YAML files that would hang the loader, refused before loading.

- Alias bombs: a few hundred bytes of anchors and aliases that expand to billions of nodes
  ("billion laughs"). PyYAML's safe loader builds aliases by reference, but anything that walks
  the loaded tree (depth and NaN checks, the schema validator) visits every expanded node and
  never finishes.
- Deep nesting: PyYAML's pure-Python scanner is quadratic in nesting depth (3,000 levels take
  tens of seconds), long before the loader's own depth limit applies.

So before a YAML file is loaded, its event stream is scanned once with libyaml (the C parser,
linear time; the Python one when libyaml is missing), counting the nodes the document would
expand to and its nesting depth.

JSON files take a fast path first (about 5x faster on a result, which matters for 10,000 of
them): the C parser with a duplicate-key hook that works in C, a text scan for number literals
that could overflow to Infinity, and one walk over the containers for depth. Anything unusual
falls back to `epbench.documents.parse_document`, which applies every rule and produces the
finding; the fast path only ever returns documents that the slow one would return too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from epbench.documents import (
    MAX_DEPTH,
    DocumentError,
    LoadProblem,
    parse_document,
    read_bytes_limited,
)

MAX_NODES = 1_000_000


_EVENTS_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def scan_yaml(text: str, limit: int = MAX_NODES) -> tuple[int, int]:
    """(nodes once aliases are resolved, deepest nesting); stops early past either limit.

    Parse errors end the scan early: the loader reports them properly afterwards."""
    sizes: dict[str, int] = {}
    stack: list[list[Any]] = [[None, 0]]  # [anchor, nodes so far] per open collection
    total = 0
    deepest = 0
    try:
        for event in yaml.parse(text, Loader=_EVENTS_LOADER):
            if isinstance(event, yaml.AliasEvent):
                size = sizes.get(event.anchor or "", 1)
                stack[-1][1] += size
                total += size
            elif isinstance(event, yaml.ScalarEvent):
                stack[-1][1] += 1
                total += 1
                if event.anchor:
                    sizes[event.anchor] = 1
            elif isinstance(event, yaml.CollectionStartEvent):
                stack.append([event.anchor, 1])
                total += 1
                deepest = max(deepest, len(stack) - 1)
            elif isinstance(event, yaml.CollectionEndEvent) and len(stack) > 1:
                anchor, size = stack.pop()
                stack[-1][1] += size
                if anchor:
                    sizes[anchor] = size
            if total > limit or deepest > MAX_DEPTH:
                break
    except yaml.YAMLError:
        pass
    return total, deepest


class _Unusual(Exception):
    """The fast JSON path cannot vouch for this file: use the full loader."""


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _Unusual
    return out


def _constant(_: str) -> Any:
    raise _Unusual


def _finite_float(literal: str) -> float:
    value = float(literal)
    if value in (_INF, -_INF):
        raise _Unusual  # a literal like 1e999 overflows to Infinity
    return value


_INF = float("inf")


def _shallow(document: Any) -> bool:
    """True when no container nests deeper than MAX_DEPTH (scalars are not visited twice)."""
    stack = [(document, 1)]
    while stack:
        item, level = stack.pop()
        values = item.values() if isinstance(item, dict) else item
        for value in values:
            if isinstance(value, dict | list):
                if level + 1 >= MAX_DEPTH:  # stricter than the loader: it decides
                    return False
                stack.append((value, level + 1))
    return True


def _fast_json(data: bytes) -> tuple[Any, str]:
    """The document and its text, or _Unusual when any rule might apply (the full loader
    then decides)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _Unusual from None
    if text.startswith("\ufeff"):
        raise _Unusual
    try:
        document = json.loads(text, object_pairs_hook=_unique, parse_constant=_constant,
                              parse_float=_finite_float)
    except (ValueError, RecursionError):
        raise _Unusual from None
    if isinstance(document, dict | list) and not _shallow(document):
        raise _Unusual
    return document, text


def load_untrusted(path: Path) -> Any:
    """epbench.documents.load_document, with YAML alias bombs refused before loading and a
    fast path for ordinary JSON."""
    return load_untrusted_text(path)[0]


def load_untrusted_text(path: Path) -> tuple[Any, str | None]:
    """As load_untrusted, with the JSON text when the fast path read it (None otherwise)."""
    data = read_bytes_limited(path)
    if path.suffix == ".json":
        try:
            return _fast_json(data)
        except _Unusual:
            return parse_document(data, path), None
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = ""
        nodes, depth = scan_yaml(text) if text else (0, 0)
        if nodes > MAX_NODES:
            raise DocumentError(path, LoadProblem(
                "file.aliases",
                f"YAML anchors and aliases expand this file past {MAX_NODES} nodes",
                fix="write the values out instead of nesting aliases of aliases",
            ))
        if depth > MAX_DEPTH:
            raise DocumentError(path, LoadProblem(
                "file.depth", f"nesting deeper than {MAX_DEPTH} levels",
                fix="flatten the document",
            ))
    return parse_document(data, path), None
