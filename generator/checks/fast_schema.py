"""A fast yes/no schema check, so that 10,000 valid results validate in seconds: jsonschema-rs.

jsonschema (Python) walks a result's nested `$ref`s through the `referencing` registry and
spends ~15-60 ms per result on this machine; a tree of 10,000 results would take minutes.
jsonschema-rs (Rust) compiles our schemas once, with the others in its registry, and answers
`is_valid` in ~0.02 ms a result (bench/libraries.py; the hand-written compiler of closures it
replaced took ~0.08 ms). When the answer is yes, jsonschema would find nothing; when it is no
(or jsonschema-rs cannot take the value), `epbench.core.schema.check_schema` runs as before and
produces the findings with their pointers and the messages the docs show. The fast path is
never more lenient: property tests compare both on mutated files. Its regular expressions
are ECMA-262's (`$` is the end of the string), as `epbench.core.schema.ecma_regex` reads them
for jsonschema.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import jsonschema_rs

from epbench.core.paths import schemas_dir
from epbench.core.schema import KINDS


@cache
def _validator(kind: str) -> Any:
    schemas = {p.name: json.loads(p.read_text(encoding="utf-8"))
               for p in sorted(schemas_dir().glob("*.schema.json"))}
    registry = jsonschema_rs.Registry([(s["$id"], s) for s in schemas.values() if "$id" in s])
    return jsonschema_rs.validator_for(schemas[KINDS[kind]], registry=registry,
                                       validate_formats=True)


def certainly_valid(document: Any, kind: str) -> bool:
    """True only when the document surely passes its kind's schema; False means "ask
    jsonschema" (it may still be valid)."""
    try:
        return bool(_validator(kind).is_valid(document))
    except (KeyError, ValueError, TypeError, OverflowError, RecursionError):
        return False
