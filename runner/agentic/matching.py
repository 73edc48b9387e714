"""Whether one call's arguments are what a task expects (the checks' `match` rules).

An expected call names a tool and, per argument, the accepted values: a list means any one of
them. `Match` says how values compare: the string rule (`casefold`, `bfcl`, `exact`), the
number rule (`value`: 1 equals 1.0; `strict`: an argument declared `integer` must be written
as an integer, one declared `number` accepts an integer; `bfcl`: BFCL's type check, see
`bfcl_typed`) and the argument rule (`listed`: the
named arguments must be given unless `optional`; `exact`: and nothing else). These are the
rules BFCL's checker applies, written as data so that a workload states them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from epbench.core.bfcl_literals import literal_accepts
from epbench.runner.agentic.model import ExpectedCall, Match

DEFAULT_MATCH = Match()
_BFCL_DROPPED = re.compile(r"[ ,./\-_*^]")


def normalize_string(text: str, rule: str) -> str:
    """A string as the rule compares it."""
    if rule == "bfcl":
        return _BFCL_DROPPED.sub("", text).lower().replace("'", '"')
    if rule == "exact":
        return text
    return " ".join(text.split()).casefold()


def _norm(value: Any, rule: str) -> Any:
    if isinstance(value, bool):
        return ("bool", value)  # so that true never equals 1
    if value is None:
        return None
    if isinstance(value, str):
        return normalize_string(value, rule)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, list):
        return [_norm(v, rule) for v in value]
    if isinstance(value, dict):
        return {k: _norm(v, rule) for k, v in value.items()}
    return value


def equal(a: Any, b: Any, rule: str = "casefold") -> bool:
    """Equal under the string rule, numbers by value, booleans only to booleans."""
    return bool(_norm(a, rule) == _norm(b, rule))


def accepts(accepted: Any, actual: Any, match: Match = DEFAULT_MATCH) -> bool:
    """True when `actual` equals the accepted value, or one of them when `accepted` is a list."""
    candidates = accepted if isinstance(accepted, list) else [accepted]
    actual_n = _norm(actual, match.strings)
    return any(
        (_norm(c, match.strings) == actual_n and type(c) is not bool) or c is actual
        for c in candidates
    )


def integer_typed(schema: Any, value: Any) -> bool:
    """False when `value` (or an item or property in it) is a float where `schema` declares
    `integer`; the schema's own validity is the tool classifier's business."""
    if not isinstance(schema, dict):
        return True
    kind = schema.get("type")
    if kind == "integer" and isinstance(value, float):
        return False
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return all(integer_typed(schema["items"], v) for v in value)
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        props = schema["properties"]
        return all(integer_typed(props.get(k), v) for k, v in value.items())
    return True


def _number_kind(value: Any) -> type | None:
    return type(value) if type(value) in (int, float) else None


def _first_kind(candidate: Any) -> type | None:
    """The number type BFCL reads an accepted list's items as: its first item's."""
    if isinstance(candidate, list) and candidate:
        return _number_kind(candidate[0])
    return None


def bfcl_typed(
    parameters: dict[str, Any], arguments: dict[str, Any], expected: ExpectedCall
) -> bool:
    """BFCL's type check of numbers (`numbers: bfcl`), one level deep as BFCL's checker does it.

    A top-level argument declared `number` accepts an integer (BFCL widens it); one declared
    `integer` refuses a float unless the first accepted value is itself a float (BFCL's
    "variable" reading). The items of an array declared with `integer` or `number` items must
    be of that type (an integer is not a float there), or of the type of the first item of an
    accepted list; an argument that may be omitted skips the item check (BFCL's answer lists
    the omission marker, which is no list to check items against). Numbers deeper down, and in
    objects, compare by value."""
    props = parameters.get("properties") if isinstance(parameters, dict) else None
    if not isinstance(props, dict):
        return True
    for key, value in arguments.items():
        schema = props.get(key)
        if not isinstance(schema, dict):
            continue
        accepted = expected.arguments.get(key)
        candidates = accepted if isinstance(accepted, list) else [accepted]
        kind = schema.get("type")
        if kind == "integer" and type(value) is float and (
                not candidates or _number_kind(candidates[0]) is not float):
            return False
        items = schema.get("items")
        if kind != "array" or not isinstance(value, list) or not isinstance(items, dict):
            continue
        want = {"integer": int, "number": float}.get(str(items.get("type")))
        if want is None or key in expected.optional:
            continue
        if not any(all(type(v) is want or (_first_kind(c) is not None and type(v) is
                                            _first_kind(c)) for v in value)
                   for c in candidates if isinstance(c, list)):
            return False
    return True


def call_matches(
    expected: ExpectedCall,
    name: str,
    arguments: dict[str, Any],
    match: Match = DEFAULT_MATCH,
    parameters: dict[str, Any] | None = None,
) -> bool:
    """The call is the expected one: same tool, every argument accepted under `match`.

    `parameters` (the tool's JSON Schema) is needed for `numbers: strict` and `bfcl`."""
    if expected.tool != name:
        return False
    for key, value in expected.arguments.items():
        if key not in arguments:
            if key in expected.optional:
                continue
            return False
        literal = expected.literals.get(key)
        if literal is not None:
            if not literal_accepts(literal, value, arguments[key], key in expected.optional,
                                   lambda a, v: accepts(a, v, match)):
                return False
        elif not accepts(value, arguments[key], match):
            return False
    if match.arguments == "exact" and any(k not in expected.arguments for k in arguments):
        return False
    if match.numbers == "strict" and parameters is not None:
        return integer_typed(parameters, arguments)
    if match.numbers == "bfcl" and parameters is not None:
        return bfcl_typed(parameters, arguments, expected)
    return True


def describe(expected: ExpectedCall) -> str:
    """An expected call as one readable line."""
    args = ", ".join(
        f"{k}{'?' if k in expected.optional else ''}={json.dumps(v, ensure_ascii=False)}"
        for k, v in expected.arguments.items()
    )
    return f"{expected.tool}({args})"
