"""The JSON Schemas under `schemas/`, and checking a document against the one its `kind` names.

Every contract file carries `kind` (and may carry `$schema`, the schema's `$id`): that is how
`epbench validate` knows which schema applies. Schema errors become Findings with JSON pointers.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker, ValidationError, validators
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from epbench.core.credentials import redact
from epbench.core.findings import Finding, pointer_from_path
from epbench.core.paths import schemas_dir

# kind -> schema file name
KINDS: dict[str, str] = {
    "endpoint": "endpoint.schema.json",
    "serving-workload": "serving-workload.schema.json",
    "agentic-workload": "agentic-workload.schema.json",
    "result": "result.schema.json",
    "validation-report": "validation-report.schema.json",
}
MAX_SCHEMA_ERRORS = 50


@cache
def _all_schemas() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(schemas_dir().glob("*.schema.json")):
        out[path.name] = json.loads(path.read_text(encoding="utf-8"))
    return out


@cache
def _registry() -> Registry:
    """Every schema by its `$id`, without its `$schema`: jsonschema's `evolve` swaps to the
    plain validator of a subschema that names a dialect, so a `$ref` into another file (a
    result's `/endpoint/id`) would lose our ECMA-262 `pattern` and accept a trailing newline."""
    resources = [
        (schema["$id"], Resource.from_contents(
            {k: v for k, v in schema.items() if k != "$schema"},
            default_specification=DRAFT202012))
        for schema in _all_schemas().values()
        if "$id" in schema
    ]
    return Registry().with_resources(resources)


def schema_for(kind: str) -> dict[str, Any]:
    """The schema document for a kind (KeyError for an unknown kind)."""
    return _all_schemas()[KINDS[kind]]


@cache
def ecma_regex(pattern: str) -> re.Pattern[str]:
    r"""A schema `pattern` compiled as JSON Schema reads it (ECMA-262, not multiline): `$` is
    the end of the string. Python's `$` also matches before a final newline, so "mallory\n"
    would pass `^[a-z]+$`; every unescaped `$` outside a character class becomes `\Z`."""
    out = []
    escaped = in_class = False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "[" and not in_class:
            in_class = True
        elif char == "]" and in_class:
            in_class = False
        elif char == "$" and not in_class:
            out.append(r"\Z")
            continue
        out.append(char)
    return re.compile("".join(out))


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    if validator.is_type(instance, "string") and not ecma_regex(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, properties: Any, instance: Any, schema: Any) -> Any:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in properties.items():
        for key, value in instance.items():
            if ecma_regex(pattern).search(key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


_Validator = validators.extend(
    Draft202012Validator, {"pattern": _pattern, "patternProperties": _pattern_properties}
)


@cache
def validator_for(kind: str) -> Draft202012Validator:
    schema = schema_for(kind)
    return _Validator(schema, registry=_registry(),
                      format_checker=FormatChecker())


def kind_of(document: Any) -> str | None:
    """The kind a document declares by `kind`, or by a `$schema` naming one of our `$id`s."""
    if not isinstance(document, dict):
        return None
    kind = document.get("kind")
    if isinstance(kind, str) and kind in KINDS:
        return kind
    declared = document.get("$schema")
    if isinstance(declared, str):
        for name, file in KINDS.items():
            if _all_schemas().get(file, {}).get("$id") == declared:
                return name
    return None


def _describe(error: Any) -> str:
    """jsonschema's message, capped; credential-shaped text in it is never echoed."""
    message: str = redact(error.message)
    if len(message) > 300:
        message = message[:297] + "..."
    return message


def check_schema(document: Any, kind: str, file: str) -> list[Finding]:
    """Schema findings (severity `reject`) for one document, most specific first, capped."""
    validator = validator_for(kind)
    findings: list[Finding] = []
    errors = sorted(
        validator.iter_errors(document),
        key=lambda e: ([str(p) for p in e.absolute_path], e.message),
    )
    leaves = [leaf for top in errors for leaf in _leaves(top)]
    for error, title in leaves[:MAX_SCHEMA_ERRORS]:
        message = _describe(error)
        if title:
            message += f" (read as {title})"
        findings.append(
            Finding(
                file=file,
                pointer=pointer_from_path(list(error.absolute_path)),
                check=f"schema.{error.validator}",
                severity="reject",
                message=message,
                fix=_fix_for(error),
            )
        )
    if len(leaves) > MAX_SCHEMA_ERRORS:
        findings.append(
            Finding(
                file, "", "schema.more", "reject",
                f"{len(leaves) - MAX_SCHEMA_ERRORS} more schema errors not shown",
            )
        )
    return findings


def _leaves(error: Any, title: str = "") -> list[tuple[Any, str]]:
    """The errors that name a field, for one schema error: a oneOf/anyOf failure ("is not valid
    under any of the given schemas") is replaced by the errors of the branch the value came
    closest to (fewest errors; a branch of another type only when no other is left), each with
    that branch's title where the schema gives one."""
    if not error.context:
        return [(error, title)]
    branches: dict[Any, list[Any]] = {}
    for sub in error.context:
        branches.setdefault(sub.relative_schema_path[0], []).append(sub)
    shaped = [b for b in branches.values()
              if not (len(b) == 1 and b[0].validator == "type"
                      and list(b[0].absolute_path) == list(error.absolute_path))]
    closest = min(shaped or list(branches.values()), key=len)
    out: list[tuple[Any, str]] = []
    for sub in closest:
        name = sub.schema.get("title", "") if isinstance(sub.schema, dict) else ""
        out.extend(_leaves(sub, name or title))
    return out


def _fix_for(error: Any) -> str:
    validator = error.validator
    if validator == "additionalProperties":
        return "remove the unknown field (or check its spelling against the schema reference)"
    if validator == "required":
        return "add the missing field"
    if validator == "type":
        return f"use a value of type {error.validator_value}"
    if validator == "enum":
        return "use one of: " + ", ".join(json.dumps(v) for v in error.validator_value)
    if validator == "pattern":
        return f"match the pattern {error.validator_value}"
    if validator in {"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"}:
        return "use a value in the allowed range"
    if validator in {"maxLength", "maxItems", "maxProperties"}:
        return "shorten it"
    return "see the schema reference"
