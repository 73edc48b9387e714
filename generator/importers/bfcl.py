"""`epbench import bfcl`: BFCL v4's single-turn categories as epbench agentic workloads.

One workload per category, every task kept unless `--sample N --seed S` asks for a seeded
subset. Each BFCL entry becomes a task with its own tools (BFCL gives each entry its own
functions) and checks that state BFCL's rules as data (`checks.match`):

- any-of values: BFCL lists the acceptable values per argument; `""` marks an argument that
  may be left out (`optional`). A `""` stays an accepted value for string parameters (BFCL
  accepts an empty string there) and becomes `[]` for array parameters (BFCL's list checker
  reads the marker as an empty list).
- dictionaries (and lists of dictionaries) whose keys carry their own any-of lists are
  expanded into the concrete dictionaries they accept (capped at MAX_EXPANSIONS).
- `strings: bfcl` (BFCL's normalization), `numbers: bfcl` (BFCL's type check: an int for a
  top-level float is fine, a float for an int is not, nor an int among an array's floats),
  `arguments: exact` (no argument beyond the accepted ones).
- parallel calls match in any order (`order: any`) and no call beyond them
  (`extra_calls: false`); irrelevance expects no call at all.

BFCL's Python-style types become JSON Schema as BFCL's own OpenAI handler sends them
(`dict` -> object, `float` -> number, `tuple` -> array, `any` -> string), and dotted function
names become underscored, with the mapping back recorded in `source.function_names`.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator

from epbench.core import bfcl_literals as literals
from epbench.core.errors import InputError
from epbench.generator.checks import secret
from epbench.generator.importers.bfcl_source import CATEGORIES, Entry, Source

MAX_EXPANSIONS = 512
TYPES = {
    "integer": "integer", "number": "number", "float": "number", "double": "number",
    "string": "string", "boolean": "boolean", "bool": "boolean", "array": "array",
    "list": "array", "tuple": "array", "dict": "object", "object": "object", "any": "string",
}  # fmt: skip
KEPT = ("description", "enum", "default", "minimum", "maximum", "minItems", "maxItems")
KINDS = {
    "simple_python": "single-call", "live_simple": "single-call",
    "multiple": "tool-choice", "live_multiple": "tool-choice",
    "parallel": "parallel", "live_parallel": "parallel",
    "parallel_multiple": "parallel", "live_parallel_multiple": "parallel",
    "irrelevance": "no-tool", "live_irrelevance": "no-tool",
    "simple_java": "single-call", "simple_javascript": "single-call",
}  # fmt: skip
LANGUAGES = {"simple_java": "java", "simple_javascript": "javascript"}
HINTS = {
    "java": " Note that the provided function is in Java 8 SDK syntax.",
    "javascript": " Note that the provided function is in JavaScript syntax.",
    "python": " Note that the provided function is in Python 3 syntax.",
}
LANGUAGE_NAMES = {"java": "Java", "javascript": "JavaScript"}
LITERAL_SCHEMAS = {
    "byte": "integer", "short": "integer", "integer": "integer", "long": "integer",
    "Bigint": "integer", "float": "number", "double": "number", "boolean": "boolean",
    "Boolean": "boolean", "char": "string", "String": "string", "any": "string",
    "Array": "array", "ArrayList": "array", "array": "array", "HashMap": "object",
    "dict": "object",
}  # fmt: skip
"""The JSON type of the value a Java/JavaScript literal of each BFCL type stands for: how the
accepted values are read (`""` markers, dictionary answers), never sent to the model."""
URL = "https://github.com/ShishirPatil/gorilla/tree/main/berkeley-function-call-leaderboard"
ATTRIBUTION = (
    "Berkeley Function Calling Leaderboard (BFCL) v4 by the Gorilla project, UC Berkeley "
    "(Patil, Mao, Yan, Ji, Suresh, Stoica, Gonzalez); data from the bfcl-eval package, "
    "Apache License 2.0. Converted to epbench's agentic format by `epbench import bfcl`."
)
TOOL_RESPONSE = {"status": "ok", "note": "BFCL functions are not executed; the call is checked."}


def tool_name(name: str) -> str:
    """The name sent to the model: dots (refused by OpenAI-style APIs) become underscores."""
    return name.replace(".", "_")


def json_schema(param: dict[str, Any], python_hint: bool = True) -> dict[str, Any]:
    """A BFCL parameter (Python-style types) as JSON Schema, as BFCL's OpenAI handler sends it:
    unknown types become strings, a float's description says it is a float."""
    kind = param.get("type")
    out: dict[str, Any] = {"type": TYPES.get(kind, "string") if isinstance(kind, str) else "string"}
    for key in KEPT:
        if key in param:
            out[key] = param[key]
    if kind == "float" and python_hint:
        out["description"] = str(out.get("description", "")) + " This is a float type value."
    if out["type"] == "object" and isinstance(param.get("properties"), dict):
        out["properties"] = {k: json_schema(v) for k, v in param["properties"].items()}
        required = param.get("required")
        if isinstance(required, list) and all(isinstance(r, str) for r in required):
            out["required"] = list(required)
    if out["type"] == "array" and isinstance(param.get("items"), dict):
        out["items"] = json_schema(param["items"], python_hint=False)
    return out


def literal_param(param: dict[str, Any], language: str) -> dict[str, Any]:
    """A Java/JavaScript parameter as BFCL sends it: a string, with its type in the
    description (`_func_doc_language_specific_pre_processing`, then the OpenAI mapping)."""
    kind = str(param.get("type"))
    name = LANGUAGE_NAMES[language]
    text = str(param.get("description", ""))
    if kind == "any":
        text += f" This parameter can be of any type of {name} object in string representation."
    else:
        text += f" This is {name} {kind} type parameter in string representation."
    items = param.get("items") if isinstance(param.get("items"), dict) else None
    if kind in literals.NESTED[language] and items is not None:
        text += (f" The list elements are of type {items.get('type')}; they are not in string "
                 "representation.")
    if language == "javascript" and kind == "dict" and isinstance(param.get("properties"), dict):
        text += (" The dictionary entries have the following schema; they are not in string "
                 f"representation. {json.dumps(param['properties'])}")
    out: dict[str, Any] = {"type": "string", "description": text}
    if "default" in param:
        out["default"] = param["default"]
    return out


def literal_spec(param: dict[str, Any], language: str) -> dict[str, str]:
    """The `literals` entry of an argument: its language, BFCL type and element type."""
    spec = {"language": language, "type": str(param.get("type"))}
    items = param.get("items")
    if spec["type"] in literals.NESTED[language] and isinstance(items, dict):
        spec["items"] = str(items.get("type"))
    return spec


def _tool(function: dict[str, Any], language: str = "python") -> dict[str, Any]:
    params = function.get("parameters") or {}
    props = params.get("properties") or {}
    convert = json_schema if language == "python" else (
        lambda v: literal_param(v, language))
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {k: convert(v) for k, v in props.items()},
    }
    if params.get("required"):
        parameters["required"] = list(params["required"])
    description = str(function.get("description", "")) + HINTS[language]
    return {
        "name": tool_name(function["name"]),
        "description": description[:4000],
        "parameters": parameters,
        "implementation": {"type": "static", "response": TOOL_RESPONSE},
    }


def _expand_dict(option: dict[str, Any]) -> list[dict[str, Any]]:
    """The concrete dictionaries a BFCL dict answer accepts (each key: one of its values, or
    left out when `""` is among them)."""
    omit = object()
    choices = []
    for key, values in option.items():
        if not isinstance(values, list):  # BFCL would read a string's characters as its values
            raise Unsolvable(f"the answer for key {key!r} is not a list of accepted values")
        picks = [v for v in values if v != ""] + ([omit] if "" in values else [])
        choices.append([(key, v) for v in picks])
    out = []
    for combo in itertools.product(*choices):
        out.append({k: v for k, v in combo if v is not omit})
        if len(out) > MAX_EXPANSIONS:
            raise InputError(f"a dict answer expands to over {MAX_EXPANSIONS} values")
    return out


def _accepted(options: list[Any], schema: dict[str, Any], fit: bool = True
              ) -> tuple[list[Any], bool]:
    """(accepted values, may be left out) for one argument's BFCL answer list; `fit`: keep
    only values the schema allows (not for literals, whose schema only reads the answers)."""
    optional = "" in options
    kind = schema.get("type")
    items: dict[str, Any] = schema["items"] if isinstance(schema.get("items"), dict) else {}
    values: list[Any] = []
    for option in options:
        if option == "":
            if kind == "string":
                values.append("")
            elif kind == "array":  # BFCL's list checker reads the marker as an empty list
                values.append([])
        elif kind == "object" and isinstance(option, dict):
            values += _expand_dict(option)
        elif kind == "array" and items.get("type") == "object" and isinstance(option, list):
            per_item = [_expand_dict(o) if isinstance(o, dict) else [o] for o in option]
            for combo in itertools.product(*per_item):
                values.append(list(combo))
                if len(values) > MAX_EXPANSIONS:
                    raise InputError(f"a list answer expands to over {MAX_EXPANSIONS} values")
        else:
            values.append(option)
    # A value the parameter's JSON Schema refuses (outside its enum, null for a number, a
    # string "variable" for an integer) would make the call invalid before any check: BFCL
    # checks types but not enums and accepts such values; epbench does not (see the docs).
    if not fit:
        return values, optional
    fits = Draft202012Validator(schema).is_valid
    return [v for v in values if fits(v)], optional


class Unsolvable(ValueError):
    """A BFCL entry no call can pass under epbench's rules (kept out, with the reason)."""


def _literal_schema(spec: dict[str, str]) -> dict[str, Any]:
    """The JSON Schema of the value a literal stands for (read answers by it, never sent)."""
    out: dict[str, Any] = {"type": LITERAL_SCHEMAS[spec["type"]]}
    if "items" in spec:
        out["items"] = {"type": LITERAL_SCHEMAS.get(spec["items"], "string")}
    return out


def _task(entry: Entry, category: str) -> tuple[dict[str, Any], dict[str, str]]:
    language = LANGUAGES.get(category, "python")
    tools = [_tool(f, language) for f in entry.functions]
    declared = {tool_name(f["name"]): (f.get("parameters") or {}).get("properties") or {}
                for f in entry.functions}
    names = {tool_name(f["name"]): f["name"] for f in entry.functions}
    if len(names) != len(entry.functions):
        raise InputError("two functions share a name once dots become underscores")
    messages = entry.messages
    if not messages or messages[-1].get("role") != "user":
        raise InputError("the question does not end with a user message")
    task: dict[str, Any] = {"id": entry.id, "tools": tools}  # [] offers no tools at all
    history = [{"role": m["role"], "content": str(m["content"])} for m in messages[:-1]]
    if history:
        task["history"] = history
    task["conversation"] = [str(messages[-1]["content"])]
    if entry.ground_truth is None:
        task["reference"] = [{"reply": "None of the available functions fits this request."}]
        task["checks"] = {"calls": [], "extra_calls": False}
        return task, names
    schemas = {t["name"]: t["parameters"]["properties"] for t in tools}
    expected, reference = [], []
    for truth in entry.ground_truth:
        ((original, answer),) = truth.items()
        name = tool_name(original)
        arguments: dict[str, Any] = {}
        optional: list[str] = []
        specs: dict[str, dict[str, str]] = {}
        call: dict[str, Any] = {}
        required = set(next((t["parameters"].get("required", []) for t in tools
                             if t["name"] == name), []))
        for arg, options in answer.items():
            if arg not in schemas.get(name, {}):  # BFCL refuses any undeclared argument
                if "" not in options:
                    raise Unsolvable(f"{original}'s {arg!r} is expected but not declared")
                arguments[arg] = []
                optional.append(arg)
                continue
            spec = None
            if language != "python":
                spec = literal_spec(declared[name][arg], language)
                reason = literals.supported(language, spec["type"], spec.get("items"))
                if reason:
                    raise Unsolvable(f"{original}'s {arg!r}: {reason}")
                specs[arg] = spec
                values, may_omit = _accepted(list(options), _literal_schema(spec), fit=False)
            else:
                values, may_omit = _accepted(list(options), schemas[name][arg])
            arguments[arg] = values
            if may_omit:
                optional.append(arg)
            # the reference call leaves out an optional argument rather than send a marker
            concrete = (
                [v for v in values if v not in ("", [])]
                or ([v for v in values if v != ""] if not may_omit else [])
                or (values if arg in required else [])
            )
            if spec is not None:  # the reference writes the value as a literal string
                concrete = [t for t in (literals.encode(spec, v) for v in concrete)
                            if t is not None]
            if concrete:
                call[arg] = concrete[0]
            elif spec is not None and not may_omit:
                raise Unsolvable(f"no {LANGUAGE_NAMES[language]} literal stands for an "
                                 f"accepted value of {original}'s {arg!r}")
            elif not may_omit:
                raise Unsolvable(f"no accepted value of {original}'s {arg!r} fits its schema")
        missing = sorted(required - set(call))
        if missing:
            raise Unsolvable(f"{original}'s required {missing[0]!r} has no accepted value")
        exp: dict[str, Any] = {"tool": name, "arguments": arguments}
        if optional:
            exp["optional"] = optional
        if specs:
            exp["literals"] = specs
        expected.append(exp)
        reference.append({"tool": name, "arguments": call})
    task["reference"] = [{"calls": reference}, {"reply": "Done."}]
    task["checks"] = {
        "calls": expected,
        "order": "any",
        "extra_calls": False,
        "match": {"strings": "bfcl", "numbers": "bfcl", "arguments": "exact"},
    }
    return task, names


def workload(
    category: str, entries: list[Entry], version: str, sample: dict[str, int] | None = None
) -> dict[str, Any]:
    """The agentic workload document for one BFCL category."""
    tasks, names, excluded = [], {}, []
    for entry in entries:
        try:
            task, mapped = _task(entry, category)
        except Unsolvable as exc:
            excluded.append({"id": entry.id, "reason": str(exc)})
            continue
        except InputError as exc:
            raise InputError(f"{category} entry {entry.id[:100]!r}: {exc}") from None
        except (KeyError, TypeError, AttributeError, ValueError, IndexError,
                RecursionError) as exc:  # a shape bfcl_shape lets through: still one line
            raise InputError(f"{category} entry {entry.id[:100]!r}: cannot be converted "
                             f"({type(exc).__name__})") from None
        if secret.scan(task, ""):
            reason = "a value looks like a credential to epbench's secret scan"
            excluded.append({"id": entry.id, "reason": reason})
            continue
        tasks.append(task)
        names.update({k: v for k, v in mapped.items() if k != v})
    source: dict[str, Any] = {
        "name": "BFCL",
        "version": version,
        "category": category,
        "url": URL,
        "license": "Apache-2.0",
        "attribution": ATTRIBUTION,
        "task_ids": "Each task id is BFCL's own entry id in this category.",
    }
    if sample:
        source["sample"] = sample
    if excluded:
        source["excluded"] = excluded
    if names:
        mapping = dict(sorted(names.items()))
        source["function_names"] = {"rule": "dots-to-underscores", "names": mapping}
    kind = KINDS[category]
    return {
        "kind": "agentic-workload",
        "schema_version": 1,
        "id": "bfcl-" + category.replace("_", "-"),
        "version": "1.1",  # 1.1: BFCL's number types and [] for optional arrays
        "description": (
            f"BFCL v4 `{category}` ({len(tasks)} tasks): one question per task with BFCL's own "
            "functions; the first answer is checked with BFCL's rules (accepted values, "
            "optional arguments, int-for-float, BFCL string normalization, calls in any order, "
            + ("no call expected" if kind == "no-tool" else "no call beyond the expected ones")
            + "). A quality workload: an endpoint's success is compared with the model's "
            "reference result."
        ),
        "category": kind,
        "trials": 1,
        "seed": 0,
        "quality": True,
        "source": source,
        "settings": {"stream": True, "temperature": 0, "tool_choice": "auto", "max_tokens": 1024},
        "limits": {"max_steps": 2, "max_tool_errors": 0},
        "tools": [],
        "tasks": tasks,
    }


def import_bfcl(
    path: Path,
    out: Path,
    categories: tuple[str, ...] = CATEGORIES,
    sample: int | None = None,
    seed: int = 0,
    echo: Callable[[str], None] | None = None,
) -> list[Path]:
    """Write one workload per category under `out`; returns the written paths. `echo` (the
    command line's) is told each category's count of tasks and of entries left out, and why
    each one was."""
    source = Source(path)
    unknown = [c for c in categories if c not in CATEGORIES]
    if unknown:
        raise InputError(f"unknown BFCL categories {unknown}: use {', '.join(CATEGORIES)}")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    total_excluded = 0
    for category in categories:
        entries = source.entries(category)
        picked: dict[str, int] | None = None
        if sample is not None and sample < len(entries):
            keep = set(random.Random(seed).sample(range(len(entries)), sample))
            picked = {"n": sample, "seed": seed, "of": len(entries)}
            entries = [e for i, e in enumerate(entries) if i in keep]
        try:
            doc = workload(category, entries, source.version, picked)
        except InputError as exc:
            raise InputError(f"{path}: {exc}") from None
        target = out / f"{doc['id']}.yaml"
        text = yaml.safe_dump(
            doc, sort_keys=False, allow_unicode=True, width=120, default_flow_style=None
        )
        target.write_text(text, encoding="utf-8")
        written.append(target)
        excluded = doc["source"].get("excluded", [])
        total_excluded += len(excluded)
        if echo is not None:
            echo(f"{category}: {len(doc['tasks'])} tasks imported, {len(excluded)} excluded")
            for item in excluded:
                echo(f"  excluded {item['id']}: {item['reason']}")
    if echo is not None:
        echo(f"{total_excluded} entries excluded in all")
    return written


def write(path: Path, out: Path, sample: int | None, seed: int,
          echo: Callable[[str], None] | None = None) -> list[Path]:
    """The registry's entry point (`epbench.generator.importers.import_workloads`): every
    category, each excluded entry told to `echo`."""
    return import_bfcl(path, out, sample=sample, seed=seed, echo=echo)
