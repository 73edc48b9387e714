"""JSON pointers into a workload's state, and the `{arg}` templates that tools are written in.

Templates are filled by a small regular expression, never by `str.format` (which would let a
workload reach Python attributes through `{0.__class__}`): `{name}` is the call's argument of
that name, `{state:/a/b}` the state at a pointer. A string that is exactly one `{name}` keeps
the argument's JSON type.
"""

from __future__ import annotations

import json
import re
from typing import Any

_PLACEHOLDER = re.compile(r"\{(state:(?:/[^{}]*)*|[A-Za-z_][A-Za-z0-9_]*)\}")
_MISSING = object()


class PointerError(KeyError):
    """A pointer that does not resolve in a document."""


def split(pointer: str) -> list[str]:
    """The unescaped reference tokens of an RFC 6901 pointer ("" is the whole document)."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PointerError(pointer)
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer[1:].split("/")]


def escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _step(node: Any, token: str) -> Any:
    if isinstance(node, dict):
        return node.get(token, _MISSING)
    if isinstance(node, list) and token.isdigit() and int(token) < len(node):
        return node[int(token)]
    return _MISSING


def resolve(document: Any, pointer: str) -> Any:
    """The value at `pointer`; PointerError when a part of it is missing."""
    node = document
    for token in split(pointer):
        node = _step(node, token)
        if node is _MISSING:
            raise PointerError(pointer)
    return node


def exists(document: Any, pointer: str) -> bool:
    try:
        resolve(document, pointer)
    except PointerError:
        return False
    return True


def parent_exists(document: Any, pointer: str) -> bool:
    """True when everything but the last token resolves to an object or list."""
    tokens = split(pointer)
    if not tokens:
        return True
    parent = "".join("/" + escape(t) for t in tokens[:-1])
    return exists(document, parent) and isinstance(resolve(document, parent), dict | list)


def assign(document: Any, pointer: str, value: Any) -> None:
    """Set the value at `pointer` (its parent must exist; `-` appends to a list)."""
    tokens = split(pointer)
    if not tokens:
        raise PointerError("cannot replace the whole state")
    parent = document
    for token in tokens[:-1]:
        parent = _step(parent, token)
        if parent is _MISSING:
            raise PointerError(pointer)
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list) and last == "-":
        parent.append(value)
    elif isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        parent[int(last)] = value
    else:
        raise PointerError(pointer)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def fill_text(template: str, arguments: dict[str, Any], state: Any) -> Any:
    """A template string filled in; exactly `{name}` returns the value itself (any JSON type)."""
    whole = _PLACEHOLDER.fullmatch(template)
    if whole:
        return _lookup(whole.group(1), arguments, state)

    def one(match: re.Match[str]) -> str:
        return _text(_lookup(match.group(1), arguments, state))

    return _PLACEHOLDER.sub(one, template)


def _lookup(name: str, arguments: dict[str, Any], state: Any) -> Any:
    if name.startswith("state:"):
        try:
            return resolve(state, name[len("state:") :])
        except PointerError:
            return None
    return arguments.get(name)


def fill(value: Any, arguments: dict[str, Any], state: Any) -> Any:
    """A JSON value with every string in it filled in as a template."""
    if isinstance(value, str):
        return fill_text(value, arguments, state)
    if isinstance(value, list):
        return [fill(v, arguments, state) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, arguments, state) for k, v in value.items()}
    return value


def fill_pointer(pointer: str, arguments: dict[str, Any]) -> str:
    """A state pointer with `{arg}` placeholders replaced by escaped argument text."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name.startswith("state:"):
            return match.group(0)
        return escape(_text(arguments.get(name, "")))

    return _PLACEHOLDER.sub(one, pointer)


def placeholders(text: str) -> list[str]:
    """The argument names a template or pointer refers to (not `state:` lookups)."""
    return [m for m in _PLACEHOLDER.findall(text) if not m.startswith("state:")]


def static_prefix(path: str) -> str:
    """The part of a pointer template before its first placeholder token, plus one token
    (so that `/orders/{id}/status` checks that `/orders` holds records)."""
    tokens = path.split("/")[1:] if path else []
    kept = []
    for token in tokens:
        if "{" in token:
            kept.append("x")  # stands for "some record": its parent must exist
            break
        kept.append(token)
    return "".join("/" + t for t in kept)


def pointer_text(parts: list[str | int]) -> str:
    """An RFC 6901 pointer from keys and indexes."""
    return "".join("/" + escape(str(p)) for p in parts)
