"""BFCL's AST checking rules, written again from reading `bfcl_eval/eval_checker/ast_eval/
ast_checker.py` and `eval_runner.py` in bfcl-eval 2026.3.23 (not copied), for the agreement
test: it judges a model's first answer on the raw BFCL entry, the way BFCL does, so that
epbench's verdict on the imported task can be compared with it.

A model output is a list of `{name: arguments}` (names as sent to the model: dots already
underscores, as BFCL's OpenAI-style handlers expect).
"""

from __future__ import annotations

import re
from typing import Any

PY = {
    "string": str, "integer": int, "float": float, "boolean": bool,
    "array": list, "tuple": list, "dict": dict, "any": str,
}  # fmt: skip


def std(text: str) -> str:
    return re.sub(r"[ ,./\-_*^]", "", text).lower().replace("'", '"')


def _answer_type(options: list[Any]) -> type | None:
    return next((type(o) for o in options if o != ""), None)


def _type_ok(
    value: Any, options: list[Any], expected: type, nested: type | None
) -> tuple[bool, bool]:
    """(type accepted, the answer is a 'variable' of another type)."""
    answer_type = _answer_type(options)
    variable = answer_type is not None and answer_type is not expected
    if type(value) is expected:
        if nested is None:
            return True, variable
        for option in options:
            if not isinstance(option, list) or all(
                _type_ok(item, option, nested, None)[0] for item in value
            ):
                return True, variable
        return False, variable
    if answer_type is not None and type(value) is answer_type:
        return True, True
    return False, variable


def _dict_ok(value: dict[str, Any], options: list[Any]) -> bool:
    for option in options:
        if option == "":
            continue
        good = True
        for key, v in value.items():
            if key not in option:
                good = False
                break
            accepted = [std(a) if isinstance(a, str) else a for a in option[key]]
            if (std(v) if isinstance(v, str) else v) not in accepted:
                good = False
                break
        if good and all(k in value or "" in opts for k, opts in option.items()):
            return True
    return False


def _list_dict_ok(value: list[Any], options: list[Any]) -> bool:
    for option in options:
        if len(value) != len(option):
            continue
        if all(_dict_ok(value[i], [option[i]]) for i in range(len(value))):
            return True
    return False


def _list_ok(value: list[Any], options: list[Any]) -> bool:
    given = [std(v) if isinstance(v, str) else v for v in value]
    accepted = [[std(x) if isinstance(x, str) else x for x in option] for option in options]
    return given in accepted


def call_ok(function: dict[str, Any], output: dict[str, Any], answer: dict[str, Any]) -> bool:
    """One call against one ground-truth entry `{name: {param: options}}`."""
    ((expected_name, params),) = answer.items()
    name = expected_name.replace(".", "_")
    if name not in output:
        return False
    args = output[name]
    props = function["parameters"]["properties"]
    if any(p not in args for p in function["parameters"].get("required", [])):
        return False
    for param, value in args.items():
        if param not in props or param not in params:
            return False
        kind = props[param]["type"]
        expected = PY[kind]
        nested = PY[props[param]["items"]["type"]] if kind in ("array", "tuple") else None
        if kind == "float" and type(value) is int:
            value = float(value)
        ok, variable = _type_ok(value, params[param], expected, nested)
        if not ok:
            return False
        options = params[param]
        if not variable:
            if expected is dict:
                good = _dict_ok(value, options)
            elif expected is list and nested is dict:
                good = _list_dict_ok(value, options)
            elif expected is str:
                good = std(value) in [std(o) for o in options if isinstance(o, str)]
            elif expected is list:
                good = _list_ok(value, options)
            else:
                good = value in options
            if not good:
                return False
            continue
        if value not in options:
            return False
    return all(p in args or "" in opts for p, opts in params.items())


def _function(functions: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(f for f in functions if f["name"] == name)


def verdict(category: str, functions: list[dict[str, Any]], truth: list[dict[str, Any]] | None,
            output: list[dict[str, Any]]) -> bool:
    """BFCL's verdict on a model's first answer for one entry of `category`."""
    if "irrelevance" in category:
        return len(output) == 0
    assert truth is not None
    if len(output) != len(truth):
        return False
    if "parallel" in category:
        used: set[int] = set()
        for answer in truth:
            function = _function(functions, next(iter(answer)))
            fits = (j for j, out in enumerate(output) if j not in used)
            hit = next((j for j in fits if call_ok(function, output[j], answer)), None)
            if hit is None:
                return False
            used.add(hit)
        return True
    return call_ok(_function(functions, next(iter(truth[0]))), output[0], truth[0])
