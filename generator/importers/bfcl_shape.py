"""The shape of BFCL's JSON lines, checked before the importer converts them.

The conversion (`epbench.generator.importers.bfcl`) reads entries as BFCL writes them: a question of
messages with a role and text, functions with a name and JSON-Schema-like parameters, answers
mapping one function name to its arguments' accepted values. A line of any other shape is one
`ShapeError` naming the JSON pointer that is wrong, so the importer says where instead of
failing somewhere inside the conversion.

    entry   {"id": str, "question": [[{"role": str, "content": str}, ...], ...],
             "function": [{"name": str, "description"?: str,
                           "parameters"?: {"properties"?: {name: param}, "required"?: [str]}}]}
    param   {"type"?: str, "description"?: str, "enum"?: [...], "minimum"?/"maximum"?: number,
             "minItems"?/"maxItems"?: int >= 0, "properties"?: {name: param}, "items"?: param,
             "required"?: [str]}                           (nested at most MAX_DEPTH levels)
    answer  {"id": str, "ground_truth": [{function name: {argument: [accepted values]}}]}
"""

from __future__ import annotations

from typing import Any

MAX_DEPTH = 32
MAX_ID = 200


class ShapeError(ValueError):
    """A BFCL line that is not in BFCL's shape; the message starts with the JSON pointer."""


def _fail(pointer: str, what: str) -> None:
    raise ShapeError(f"{pointer or '/'}: {what}")


def _object(value: Any, pointer: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        _fail(pointer, f"expected an object, found {_kind(value)}")
    return value


def _array(value: Any, pointer: str) -> list[Any]:
    if not isinstance(value, list):
        _fail(pointer, f"expected an array, found {_kind(value)}")
    return value


def _text(value: Any, pointer: str) -> str:
    if not isinstance(value, str):
        _fail(pointer, f"expected a string, found {_kind(value)}")
    return value


def _id(doc: dict[str, Any]) -> None:
    if not _text(doc.get("id"), "/id") or len(doc["id"]) > MAX_ID:
        _fail("/id", f"expected an id of 1 to {MAX_ID} characters")


def _strings(value: Any, pointer: str) -> None:
    for i, item in enumerate(_array(value, pointer)):
        _text(item, f"{pointer}/{i}")


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            type(None): "null", int: "a number", float: "a number"}.get(type(value), "a value")


def _number(value: Any, pointer: str, whole: bool = False) -> None:
    if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)) \
            or (whole and value < 0):
        _fail(pointer, "expected a count (an integer >= 0)" if whole else "expected a number")


def param_shape(param: Any, pointer: str, depth: int = 0) -> None:
    """One parameter's schema (and the parameters nested in it)."""
    if depth > MAX_DEPTH:
        _fail(pointer, f"parameters nested more than {MAX_DEPTH} levels deep")
    param = _object(param, pointer)
    for key in ("type", "description"):
        if key in param:
            _text(param[key], f"{pointer}/{key}")
    if "enum" in param:
        _array(param["enum"], f"{pointer}/enum")
    for key in ("minimum", "maximum"):
        if key in param:
            _number(param[key], f"{pointer}/{key}")
    for key in ("minItems", "maxItems"):
        if key in param:
            _number(param[key], f"{pointer}/{key}", whole=True)
    if "required" in param:
        _strings(param["required"], f"{pointer}/required")
    if isinstance(param.get("properties"), dict):
        for name, inner in param["properties"].items():
            param_shape(inner, f"{pointer}/properties/{_escape(name)}", depth + 1)
    if isinstance(param.get("items"), dict):
        param_shape(param["items"], f"{pointer}/items", depth + 1)


def entry_shape(doc: Any) -> None:
    """A question line: its id, its turns of messages, its functions."""
    doc = _object(doc, "")
    _id(doc)
    for t, turn in enumerate(_array(doc.get("question"), "/question")):
        for m, message in enumerate(_array(turn, f"/question/{t}")):
            message = _object(message, f"/question/{t}/{m}")
            _text(message.get("role"), f"/question/{t}/{m}/role")
            _text(message.get("content"), f"/question/{t}/{m}/content")
    for f, function in enumerate(_array(doc.get("function"), "/function")):
        where = f"/function/{f}"
        function = _object(function, where)
        _text(function.get("name"), f"{where}/name")
        if "description" in function:
            _text(function["description"], f"{where}/description")
        params = function.get("parameters")
        if params is None:
            continue
        params = _object(params, f"{where}/parameters")
        if params.get("required") is not None:
            _strings(params["required"], f"{where}/parameters/required")
        props = params.get("properties")
        if props is not None:
            for name, param in _object(props, f"{where}/parameters/properties").items():
                param_shape(param, f"{where}/parameters/properties/{_escape(name)}", 1)


def answer_shape(doc: Any) -> None:
    """A possible-answer line: its id and, per expected call, one function name with its
    arguments' accepted values."""
    doc = _object(doc, "")
    _id(doc)
    for c, call in enumerate(_array(doc.get("ground_truth"), "/ground_truth")):
        call = _object(call, f"/ground_truth/{c}")
        if len(call) != 1:
            _fail(f"/ground_truth/{c}", f"expected one function name, found {len(call)}")
        ((name, arguments),) = call.items()
        where = f"/ground_truth/{c}/{_escape(name)}"
        for arg, values in _object(arguments, where).items():
            _array(values, f"{where}/{_escape(arg)}")


def _escape(name: str) -> str:
    """A key as a JSON pointer token (RFC 6901), cut to 100 characters."""
    token = name.replace("~", "~0").replace("/", "~1")[:100]
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in token)
