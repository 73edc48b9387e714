"""A fast yes/no schema check, so that 10,000 valid results validate in seconds.

jsonschema walks a result's nested `$ref`s through the `referencing` registry and spends
~15-60 ms per result on this machine; a tree of 10,000 results would take minutes. This module
compiles our schemas once into plain Python closures that answer only "certainly valid?".
When the answer is yes, jsonschema would find nothing; when it is no (or the schema uses
anything this compiler does not know), `epbench.core.schema.check_schema` runs as before and
produces the findings with their pointers. The fast path is never more lenient: every keyword
it does not implement makes it answer no, and a property test compares both on mutated files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sized
from datetime import date, datetime
from functools import cache
from typing import Any, cast

from epbench.core.paths import schemas_dir
from epbench.core.schema import KINDS, ecma_regex

Check = Callable[[Any], bool]
_ANNOTATIONS = frozenset({
    "$schema", "$id", "$comment", "$defs", "title", "description", "schema_version",
    "default", "examples", "deprecated", "readOnly", "writeOnly",
})
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATE_TIME = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
)


def _never(_: Any) -> bool:
    return False


def _always(_: Any) -> bool:
    return True


_OBJECT_KEYWORDS = frozenset({"properties", "required", "additionalProperties",
                              "patternProperties"})
_SIZES: dict[str, type] = {
    "minItems": list, "maxItems": list, "minLength": str, "maxLength": str,
    "minProperties": dict, "maxProperties": dict,
}


_NUMERIC = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})


def _scalar_node(schema: dict[str, Any]) -> Check | None:
    """One closure for the common scalar shapes (a number with bounds, a nullable number, an
    integer count, a string with a pattern and length), or None for anything else."""
    keys = schema.keys() - _ANNOTATIONS
    if "type" not in keys:
        return None
    types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    nullable = "null" in types
    rest = set(types) - {"null"}
    if rest in ({"number"}, {"integer"}) and keys <= {"type"} | _NUMERIC:
        integer = rest == {"integer"}
        low = schema.get("minimum")
        high = schema.get("maximum")
        low_x = schema.get("exclusiveMinimum")
        high_x = schema.get("exclusiveMaximum")

        check_number = _number_check(nullable, integer, low, high, low_x, high_x)
        return check_number
    if rest == {"string"} and keys <= {"type", "pattern", "minLength", "maxLength"}:
        regex = ecma_regex(schema["pattern"]) if "pattern" in schema else None
        shortest = schema.get("minLength", 0)
        longest = schema.get("maxLength")

        def check_string(value: Any) -> bool:
            if value is None:
                return nullable
            if not isinstance(value, str):
                return False
            if len(value) < shortest or (longest is not None and len(value) > longest):
                return False
            return regex is None or regex.search(value) is not None

        return check_string
    return None


_SIMPLE_NUMBERS: dict[Check, tuple[tuple[type, ...], Any, bool]] = {}
"""Number closures with no bound or only a minimum: (exact types, minimum, nullable), so that
an object closure can test such properties inline (most values of a result are these)."""


def _number_check(nullable: bool, integer: bool, low: Any, high: Any, low_x: Any,
                  high_x: Any) -> Check:
    """A number (or integer) within bounds, or null when nullable. Only exact int and float
    values pass (bool is not a number; a subclass is left to jsonschema). The common shapes,
    no bound or only a minimum, get closures of their own."""
    kinds: tuple[type, ...] = (int,) if integer else (int, float)

    if high is None and low_x is None and high_x is None:
        if low is None:
            def check_unbounded(value: Any) -> bool:
                if type(value) in kinds:
                    return True
                return value is None and nullable
            _SIMPLE_NUMBERS[check_unbounded] = (kinds, None, nullable)
            return check_unbounded

        def check_minimum(value: Any) -> bool:
            if type(value) in kinds:
                return bool(value >= low)
            return value is None and nullable
        _SIMPLE_NUMBERS[check_minimum] = (kinds, low, nullable)
        return check_minimum

    def check_number(value: Any) -> bool:
        if type(value) in kinds:
            return ((low is None or value >= low) and (high is None or value <= high)
                    and (low_x is None or value > low_x) and (high_x is None or value < high_x))
        return value is None and nullable

    return check_number


def _all_of(checks: list[Check]) -> Check:
    if len(checks) == 1:
        return checks[0]

    def check_all(value: Any) -> bool:
        for check in checks:  # noqa: SIM110 - a plain loop is faster than all(genexpr) here
            if not check(value):
                return False
        return True

    return check_all


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_SINGLE: dict[str, Check] = {
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
    "string": lambda value: isinstance(value, str),
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
    "integer": _is_integer,
    "number": _is_number,
}


def _type_check(names: tuple[str, ...]) -> Check:
    if len(names) == 1:
        return _SINGLE.get(names[0], _never)
    if set(names) == {"number", "null"}:
        return lambda value: value is None or _is_number(value)
    return lambda value: any(_is_type(value, name) for name in names)


def _enum_check(options: tuple[Any, ...]) -> Check:
    if all(type(option) is str for option in options):
        names = frozenset(options)  # _equal on two exact strings is ==
        return lambda value: type(value) is str and value in names
    return lambda value: any(_equal(value, option) for option in options)


def _items_check(each: Check, skip: int) -> Check:
    def check_items(value: Any) -> bool:
        if not isinstance(value, list):
            return True
        for item in value[skip:] if skip else value:  # noqa: SIM110 - speed, as above
            if not each(item):
                return False
        return True

    return check_items


def _prefix_check(firsts: list[Check]) -> Check:
    return lambda value: not isinstance(value, list) or all(
        check(item) for check, item in zip(firsts, value, strict=False))


def _size_check(kind: type, low: bool, limit: int) -> Check:
    def check_size(value: Any) -> bool:
        if not isinstance(value, kind):
            return True
        size = len(cast(Sized, value))
        return size >= limit if low else size <= limit

    return check_size


def _pattern_check(regex: re.Pattern[str]) -> Check:
    return lambda value: not isinstance(value, str) or regex.search(value) is not None


def _unique_check(value: Any) -> bool:
    if not isinstance(value, list) or len(value) < 2:
        return True
    if all(type(item) is str for item in value):  # _equal on two exact strings is ==
        return len(set(value)) == len(value)
    return all(not _equal(value[i], value[j])
               for i in range(len(value)) for j in range(i + 1, len(value)))


def _combine(keyword: str, subs: list[Check]) -> Check:
    if keyword == "oneOf":
        return lambda value: sum(1 for sub in subs if sub(value)) == 1
    if keyword == "anyOf":
        return lambda value: any(sub(value) for sub in subs)
    return _all_of(subs) if subs else _always


def _not_check(sub: Check) -> Check:
    return lambda value: not sub(value)


def _is_type(value: Any, name: str) -> bool:
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return False


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is not type(b) and not (
        isinstance(a, int | float) and isinstance(b, int | float)
    ):
        return False
    return bool(a == b)


def _format(name: str) -> Check:
    if name == "date":
        def check_date(value: Any) -> bool:
            if not isinstance(value, str):
                return True
            if not _DATE.match(value):
                return False
            try:
                date.fromisoformat(value)
            except ValueError:
                return False
            return True
        return check_date
    if name == "date-time":
        def check_date_time(value: Any) -> bool:
            if not isinstance(value, str):
                return True
            if not _DATE_TIME.match(value):
                return False
            try:
                datetime.fromisoformat(value.replace("z", "Z").replace("t", "T"))
            except ValueError:
                return False
            return True
        return check_date_time
    return _never


class _Compiler:
    """Compiles (file, JSON pointer) schema locations to closures, resolving `$ref`s."""

    def __init__(self) -> None:
        self.documents: dict[str, Any] = {}
        self.compiled: dict[tuple[str, str], Check] = {}

    def document(self, file: str) -> Any:
        if file not in self.documents:
            self.documents[file] = json.loads((schemas_dir() / file).read_text("utf-8"))
        return self.documents[file]

    def at(self, file: str, pointer: str) -> Check:
        key = (file, pointer)
        if key not in self.compiled:
            holder: list[Check] = []
            self.compiled[key] = lambda value: holder[0](value)  # recursion-safe forward
            node = self.document(file)
            for part in [p for p in pointer.split("/") if p]:
                node = node[part.replace("~1", "/").replace("~0", "~")]
            holder.append(self.node(node, file))
            self.compiled[key] = holder[0]
        return self.compiled[key]

    def node(self, schema: Any, file: str) -> Check:
        if schema is True:
            return _always
        if schema is False or not isinstance(schema, dict):
            return _never
        scalar = _scalar_node(schema)
        if scalar is not None:
            return scalar
        checks: list[Check] = []
        is_object = schema.get("type") == "object"  # folded into the object closure
        if _OBJECT_KEYWORDS & schema.keys():
            checks.append(self.object_node(schema, file, is_object))
        else:
            is_object = False
        for keyword, arg in schema.items():
            if keyword in _ANNOTATIONS or keyword in _OBJECT_KEYWORDS or (
                    keyword == "type" and is_object):
                continue
            check = self.keyword(keyword, arg, schema, file)
            if check is None:
                return _never  # a keyword this compiler does not know: let jsonschema decide
            checks.append(check)
        return _all_of(checks)

    def keyword(self, keyword: str, arg: Any, schema: dict[str, Any], file: str) -> Check | None:
        """The closure for one keyword (None for a keyword this compiler does not know)."""
        if keyword == "$ref":
            target, _, pointer = arg.partition("#")
            return self.at(target or file, pointer)
        if keyword == "type":
            return _type_check(tuple(arg) if isinstance(arg, list) else (arg,))
        if keyword == "const":
            return _enum_check((arg,))
        if keyword == "enum":
            return _enum_check(tuple(arg))
        if keyword == "items":
            return _items_check(self.node(arg, file), len(schema.get("prefixItems", [])))
        if keyword == "prefixItems":
            return _prefix_check([self.node(s, file) for s in arg])
        if keyword in _SIZES:
            return _size_check(_SIZES[keyword], keyword.startswith("min"), int(arg))
        if keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            return _bound(keyword, arg)
        if keyword == "pattern":
            return _pattern_check(ecma_regex(arg))
        if keyword == "format":
            return _format(arg)
        if keyword == "uniqueItems":
            return _unique_check if arg else _always
        if keyword in ("oneOf", "anyOf", "allOf"):
            return _combine(keyword, [self.node(s, file) for s in arg])
        if keyword == "not":
            return _not_check(self.node(arg, file))
        return None

    def object_node(self, schema: dict[str, Any], file: str, is_object: bool) -> Check:
        """properties + required + additionalProperties + patternProperties in one loop
        (and `type: object` when is_object)."""
        props = {k: self.node(s, file) for k, s in schema.get("properties", {}).items()}
        required = frozenset(schema.get("required", ()))
        patterns = [(ecma_regex(p), self.node(s, file))
                    for p, s in schema.get("patternProperties", {}).items()]
        additional = schema.get("additionalProperties", True)
        extra: Check | None = None if additional is True else self.node(additional, file)
        not_dict = not is_object  # what a value that is not an object answers

        if not patterns and extra is _never:
            numbers = {k: _SIMPLE_NUMBERS[c] for k, c in props.items() if c in _SIMPLE_NUMBERS}
            others = {k: c for k, c in props.items() if k not in numbers}

            def check_closed(value: Any) -> bool:
                """additionalProperties false, no patterns: every key is a property (simple
                number properties tested inline, as their closures would)."""
                if not isinstance(value, dict):
                    return not_dict
                if not value.keys() >= required:
                    return False
                for key, item in value.items():
                    number = numbers.get(key)
                    if number is not None:
                        if type(item) in number[0]:
                            if number[1] is not None and not item >= number[1]:
                                return False
                        elif item is not None or not number[2]:
                            return False
                        continue
                    check = others.get(key)
                    if check is None or not check(item):
                        return False
                return True

            return check_closed

        def check_object(value: Any) -> bool:
            if not isinstance(value, dict):
                return not_dict
            if not value.keys() >= required:
                return False
            for key, item in value.items():
                check = props.get(key)
                if check is not None:
                    if not check(item):
                        return False
                    continue
                matched = False
                for pattern, sub in patterns:
                    if pattern.search(key):
                        matched = True
                        if not sub(item):
                            return False
                if not matched and extra is not None and not extra(item):
                    return False
            return True

        return check_object


def _bound(keyword: str, limit: float) -> Check:
    if keyword == "minimum":
        return lambda value: not _is_number(value) or value >= limit
    if keyword == "maximum":
        return lambda value: not _is_number(value) or value <= limit
    if keyword == "exclusiveMinimum":
        return lambda value: not _is_number(value) or value > limit
    return lambda value: not _is_number(value) or value < limit


@cache
def _compiled(kind: str) -> Check:
    return _Compiler().at(KINDS[kind], "")


def certainly_valid(document: Any, kind: str) -> bool:
    """True only when the document surely passes its kind's schema; False means "ask
    jsonschema" (it may still be valid)."""
    try:
        return _compiled(kind)(document)
    except (KeyError, RecursionError, TypeError, ValueError, re.error):
        return False
