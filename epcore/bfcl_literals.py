"""Java and JavaScript literals in string arguments, read as BFCL reads them.

BFCL's Java and JavaScript categories send every parameter as a string holding a literal of
the declared type (`"50"`, `"true"`, `"123L"`, `"new ArrayList<>(Arrays.asList(\"a\"))"`,
`"{key: 'v'}"`), and its checker turns the string into a value before comparing it with the
accepted ones. An expected call states which arguments are literals, with the language and the
declared type (`checks.calls[].literals`); `decode` reads a string with the same rules BFCL's
`java_type_converter` and `js_type_converter` apply (bfcl-eval 2026.3.23, Apache-2.0): regular
expressions and Python's own `int`/`float` on the matched text. Nothing is evaluated. A string
that is no literal of its type stays the string, as in BFCL (a "variable").

`literal_accepts` is BFCL's comparison after decoding: a value of the declared type is compared
with the accepted values under the checks' string rule (with BFCL's one-level check of array
items); a value of another type is accepted only when it has the type of the accepted values
and equals one of them exactly (BFCL's variable rule).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

JAVA = {
    "byte": int, "short": int, "integer": int, "float": float, "double": float, "long": int,
    "boolean": bool, "char": str, "Array": list, "ArrayList": list, "HashMap": dict,
    "String": str, "any": str,
}  # fmt: skip
"""The Java types BFCL converts (its Set, Hashtable, Queue and Stack raise NotImplementedError:
an entry with one is not imported)."""
JAVASCRIPT = {
    "String": str, "integer": int, "float": float, "Bigint": int, "Boolean": bool,
    "dict": dict, "array": list, "any": str,
}  # fmt: skip
TYPES = {"java": JAVA, "javascript": JAVASCRIPT}
NESTED = {"java": ("Array", "ArrayList"), "javascript": ("array",)}

_INT = re.compile(r"^-?\d+$")
_JAVA_FLOAT = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$")
_JAVA_DOUBLE = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?$")
_JAVA_LONG = re.compile(r"^-?\d+[lL]$")
_JAVA_CHAR = re.compile(r"^\'.$\'")  # BFCL's pattern, which no string matches
_AS_LIST = re.compile(r"new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)")
_ADDS = re.compile(r"new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}", re.DOTALL)
_ADD = re.compile(r"add\((.+?)\)")
_EMPTY_LIST = re.compile(r"new\s+ArrayList<\w*>\(\)")
_ARRAY = re.compile(r"new\s+\w+\[\]\s*\{(.*?)\}")
_HASHMAP = re.compile(r"new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}", re.DOTALL)
_PUT = re.compile(r"put\(\"(.*?)\",\s*(.*?)\)")
_EMPTY_MAP = re.compile(r"new\s+HashMap<.*?>\s*\(\)")
_JS_FLOAT = re.compile(r"^-?\d+(\.\d+)?$")
_JS_BIGINT = re.compile(r"^-?\d+n$")
_JS_2D = re.compile(
    r"\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\)")
_JS_1D = re.compile(r"\[(.*?)\]|\bnew\s+Array\((.*?)\)")
_JS_INNER = re.compile(r"\[(.*?)\]")
_JS_DICT = re.compile(r"\{(.*?)\}")
_JS_PAIR = re.compile(r"([^:]+):\s*(.*?)(?:,\s*(?=[^,]+:)|$)")


MAX_LITERAL_CHARS = 1000  # BFCL's longest Java/JavaScript answer is 144 characters
_SPACES = re.compile(r"\s+")


class Unsupported(ValueError):
    """A type BFCL's converters do not handle."""


def _number(text: str) -> Any:
    """Python's int, else float, else the text (BFCL's fallback for an untyped element)."""
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def _java_value(text: str) -> Any:
    if text in ("true", "false"):
        return text == "true"
    if text.startswith('"') and text.endswith('"'):
        return text[1:-1]
    if _JAVA_LONG.match(text):
        return int(text[:-1])
    if _JAVA_FLOAT.match(text):
        return float(re.sub(r"[fF]$", "", text))
    return _number(text)


def _java_element(text: str, nested: str | None) -> Any:
    if nested in ("char", "String"):
        return text[1:-1]
    return java(text, nested) if nested else _java_value(text)


def java(value: str, kind: str, nested: str | None = None) -> Any:
    """A Java literal of BFCL type `kind` (`nested`: the element type of an Array/ArrayList)."""
    if kind not in JAVA:
        raise Unsupported(f"BFCL does not convert Java {kind}")
    if kind in ("byte", "short", "integer"):
        return int(value) if _INT.match(value) else value
    if kind == "float":
        return float(re.sub(r"[fF]$", "", value)) if _JAVA_FLOAT.match(value) else value
    if kind == "double":
        return float(value) if _JAVA_DOUBLE.match(value) else value
    if kind == "long":
        return int(re.sub(r"[lL]$", "", value)) if _JAVA_LONG.match(value) else value
    if kind == "boolean":
        return value == "true" if value in ("true", "false") else value
    if kind == "ArrayList":
        found = _AS_LIST.search(value)
        if found:
            return [_java_element(e.strip(), nested) for e in found.group(1).split(",")]
        found = _ADDS.search(_SPACES.sub(" ", value))
        if found:
            return [_java_element(m.strip(), nested) for m in _ADD.findall(found.group(1))]
        return [] if _EMPTY_LIST.search(value) else value
    if kind == "Array":
        found = _ARRAY.search(value)
        if not found:
            return value
        parts = [x.strip() for x in found.group(1).split(",") if x.strip()]
        return [java(x, nested) if nested else _java_value(x) for x in parts]
    if kind == "HashMap":
        found = _HASHMAP.search(_SPACES.sub(" ", value))
        if found:
            puts = found.group(1)
            if not puts.strip():
                return {}
            return {key: _java_value(item.strip()) for key, item in _PUT.findall(puts)}
        return {} if _EMPTY_MAP.search(value) else value
    return value  # char (BFCL's pattern never matches), String, any


def _js_value(text: str) -> Any:
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if len(text) >= 1 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return _number(text)


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at].isspace():  # what `\s` matches in a str pattern
        at += 1
    return at


def grid_end(code: str) -> int | None:
    """Where `_JS_2D.match(code)` ends, or None when it does not match, found without the
    exponential backtracking `re` spends on a near miss (`[[a], [a], ... [a`): the same
    pattern walked in the same order (each lazy `.*?` to the next `]` on its line, the
    repetition tried before the closing bracket), each position's outcome remembered."""
    for opener, closer in (("[", "]"), ("new", ")")):
        at = 0
        if opener == "[":
            if not code.startswith("["):
                continue
            at = _skip_space(code, 1)
            if not code.startswith("[", at):
                continue
        else:
            head = re.match(r"\bnew\s+Array\(\s*\[", code)
            if head is None:
                continue
            at = head.end() - 1
        memo: dict[int, int | None] = {}

        def rest(q: int, closer: str = closer, memo: dict[int, int | None] = memo) -> int | None:
            r"""After `]\s*`: more `,\s*[...]\s*` items (greedy), then the closer."""
            if q in memo:
                return memo[q]
            found = None
            if code.startswith(",", q):
                r = _skip_space(code, q + 1)
                if code.startswith("[", r):
                    for end in _closings(code, r + 1):
                        found = rest(_skip_space(code, end + 1))
                        if found is not None:
                            break
            if found is None and code.startswith(closer, q):
                found = q + 1
            memo[q] = found
            return found

        for end in _closings(code, at + 1):
            found = rest(_skip_space(code, end + 1))
            if found is not None:
                return found
    return None


def _closings(code: str, start: int) -> Iterator[int]:
    r"""Each `]` from `start` on before the next newline (where a lazy `.*?\]` may stop)."""
    at = code.find("]", start)
    line_end = code.find("\n", start)
    while at >= 0 and (line_end < 0 or at < line_end):
        yield at
        at = code.find("]", at + 1)


def _js_collection(code: str, kind: str, nested: str | None = None) -> Any:
    code = code.strip()
    if kind == "array":
        try:
            end = grid_end(code)
            if end is not None:
                out = []
                for i, inner in enumerate(_JS_INNER.findall(code[:end])):
                    inner = inner.strip()
                    if i == 0 and inner.startswith("["):
                        inner = inner[1:]
                    out.append([_js_value(e.strip()) for e in inner.split(",")])
                return out
            flat = _JS_1D.match(code)
            if not flat:
                return code
            body = flat.group(1) if flat.group(1) is not None else flat.group(2)
            body = (body or "").strip()
            elements = body.split(",") if body else []
            if nested:
                return [javascript(e.strip(), nested, "String")
                        if e.strip().startswith(("'", '"')) else javascript(e.strip(), nested)
                        for e in elements]
            return [_js_value(e.strip()) for e in elements]
        except Exception:  # BFCL returns the text on any failure (an unsupported element type)
            return code
    if code == "{}":
        return {}
    found = _JS_DICT.match(code)
    if not found:
        return code
    try:
        pairs: dict[str, Any] = {}
        for key, item in _JS_PAIR.findall(found.group(1)):
            key = key.strip().strip("'\"")
            item = item.strip()
            if item.startswith("[") and item.endswith("]"):
                pairs[key] = _js_collection(item, "array")
            elif item.startswith("{") and item.endswith("}"):
                pairs[key] = _js_collection(item, "dict")
            else:
                pairs[key] = _js_value(item.strip("'\""))
        return pairs
    except Exception:  # as BFCL: the text on any failure
        return code


def javascript(value: str, kind: str, nested: str | None = None) -> Any:
    """A JavaScript literal of BFCL type `kind` (`nested`: the element type of an array)."""
    if kind not in JAVASCRIPT:
        raise Unsupported(f"BFCL does not convert JavaScript {kind}")
    if kind == "String":
        quoted = (value.startswith('"') and value.endswith('"')) or (
            value.startswith("'") and value.endswith("'"))
        return value[1:-1] if quoted else value
    if kind == "integer":
        return int(value) if _INT.match(value) else value
    if kind == "float":
        return float(value) if _JS_FLOAT.match(value) else value
    if kind == "Bigint":
        return int(value[:-1]) if _JS_BIGINT.match(value) else value
    if kind == "Boolean":
        return value == "true" if value in ("true", "false") else value
    if kind in ("dict", "array"):
        return _js_collection(value, kind, nested)
    return value  # any


def decode(spec: dict[str, Any], value: str) -> Any:
    """The value a literal argument stands for, under `spec` ({language, type, items?}).

    Two guards keep an endpoint's answer from stalling the check on BFCL's patterns, whose
    nested lazy and optional parts backtrack for polynomial or exponential time on a near
    miss: a string over MAX_LITERAL_CHARS is not read (it stays the string), and the two
    DOTALL patterns (an ArrayList built with add(), a HashMap) see each run of whitespace as
    one space (their captures are compared after BFCL's normalization, which drops spaces)."""
    if len(value) > MAX_LITERAL_CHARS:
        return value
    language, kind = spec["language"], spec["type"]
    nested = spec.get("items") if kind in NESTED[language] else None
    return (java if language == "java" else javascript)(value, kind, nested)


def supported(language: str, kind: str, items: str | None) -> str | None:
    """Why BFCL cannot check a parameter of this type, or None when it can."""
    table = TYPES.get(language)
    if table is None:
        return f"no literals of language {language!r}"
    if kind not in table:
        return f"BFCL does not convert {language} type {kind!r}"
    if kind in NESTED[language] and (items is None or items not in table):
        return f"BFCL does not convert {language} {kind} of {items!r}"
    return None


def literal_spec_error(spec: dict[str, Any], named: bool) -> str | None:
    """What is wrong with a `literals` entry of a workload, or None."""
    if not named:
        return "a literal argument that `arguments` does not name"
    return supported(str(spec.get("language")), str(spec.get("type")),
                     None if spec.get("items") is None else str(spec.get("items")))


def _first(accepted: list[Any]) -> Any:
    return next((a for a in accepted if a != ""), None)


def _items_ok(value: list[Any], accepted: list[Any], want: type) -> bool:
    """BFCL's one-level check: every item has the element type, or the type of the first item
    of an accepted list."""
    for option in accepted:
        if not isinstance(option, list):
            return True
        first = _first(option)
        if all(type(v) is want or (first is not None and type(v) is type(first))
               for v in value):
            return True
    return False


def literal_accepts(spec: dict[str, Any], accepted: Any, raw: Any, optional: bool,
                    accepts: Any) -> bool:
    """Whether the string `raw` is an accepted value once read as a literal; `accepts` is the
    checks' own comparison (`matching.accepts` with the workload's `match`)."""
    if not isinstance(raw, str) or literal_spec_error(spec, True):
        return False
    candidates = accepted if isinstance(accepted, list) else [accepted]
    value = decode(spec, raw)
    table = TYPES[spec["language"]]
    want = table[spec["type"]]
    first = _first(candidates)
    if type(value) is not want:  # BFCL's "variable": the accepted values' own type, exactly
        return first is not None and type(value) is type(first) and value in candidates
    if first is not None and type(first) is not want:
        return value in candidates  # the accepted values are variables: compared exactly
    items = spec.get("items")
    if isinstance(value, list) and spec["type"] in NESTED[spec["language"]] and \
            not optional and not _items_ok(value, candidates, table[str(items)]):
        return False
    return bool(accepts(candidates, value))


_JAVA_ARRAY_TYPES = {"byte": "byte", "short": "short", "integer": "int", "long": "long",
                     "float": "float", "double": "double", "boolean": "boolean", "char": "char",
                     "String": "String", "any": "Object"}


def _java_text(value: Any) -> str | None:
    """An untyped Java element (`parse_java_value`): a quoted string, a number, a boolean."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return f'"{value}"'
    return None


def _encode_java(value: Any, kind: str, nested: str | None) -> str | None:
    if kind in ("byte", "short", "integer") and type(value) is int:
        return str(value)
    if kind == "long" and type(value) is int:
        return f"{value}L"
    if kind == "float" and type(value) in (int, float):
        return f"{value!r}f"
    if kind == "double" and type(value) in (int, float):
        return repr(float(value))
    if kind == "boolean" and type(value) is bool:
        return "true" if value else "false"
    if isinstance(value, str):
        return value  # a String, char, any, or a "variable" of another type
    if kind == "ArrayList" and isinstance(value, list) and nested:
        if not value:
            return "new ArrayList<>()"
        parts = [f'"{v}"' if nested in ("char", "String") and isinstance(v, str)
                 else _encode_java(v, nested, None) for v in value]
        if any(p is None for p in parts):
            return None
        return f"new ArrayList<>(Arrays.asList({', '.join(str(p) for p in parts)}))"
    if kind == "Array" and isinstance(value, list) and nested:
        parts = [_encode_java(v, nested, None) for v in value]
        if any(p is None for p in parts):
            return None
        return f"new {_JAVA_ARRAY_TYPES.get(nested, 'Object')}[]{{{', '.join(map(str, parts))}}}"
    if kind == "HashMap" and isinstance(value, dict):
        if not value:
            return "new HashMap<>()"
        puts = [(k, _java_text(v)) for k, v in value.items()]
        if any(t is None for _, t in puts):
            return None
        body = " ".join(f'put("{k}", {t});' for k, t in puts)
        return f"new HashMap<String, Object>() {{{{ {body} }}}}"
    return None


def _js_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, list):
        parts = [_js_text(v) for v in value]
        return None if any(p is None for p in parts) else f"[{', '.join(map(str, parts))}]"
    return None


def _encode_js(value: Any, kind: str, nested: str | None) -> str | None:
    if kind == "integer" and type(value) is int:
        return str(value)
    if kind == "float" and type(value) in (int, float):
        return repr(value)
    if kind == "Bigint" and type(value) is int:
        return f"{value}n"
    if kind == "Boolean" and type(value) is bool:
        return "true" if value else "false"
    if kind == "String" and isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, str):
        return value
    if kind == "array" and isinstance(value, list):
        parts = [_js_text(v) if nested in (None, "String") else _encode_js(v, nested, None)
                 for v in value]
        return None if any(p is None for p in parts) else f"[{', '.join(map(str, parts))}]"
    if kind == "dict" and isinstance(value, dict):
        pairs = [(k, _js_text(v)) for k, v in value.items()]
        if any(t is None for _, t in pairs):
            return None
        return "{" + ", ".join(f"{k}: {t}" for k, t in pairs) + "}"
    return None


def _same(a: Any, b: Any) -> bool:
    """Equal all the way down, a boolean only to a boolean (1 and 1.0 are the same number)."""
    numbers = (int, float)
    if type(a) in numbers and type(b) in numbers:
        return bool(a == b)
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


def encode(spec: dict[str, Any], value: Any) -> str | None:
    """A literal string that `decode` reads back as exactly `value`, or None when there is
    none of the shapes written here (the reference call of an imported task)."""
    language, kind = spec["language"], spec["type"]
    nested = spec.get("items") if kind in NESTED[language] else None
    encoder = _encode_java if language == "java" else _encode_js
    try:
        text = encoder(value, kind, nested)
    except (TypeError, ValueError):
        return None
    if text is None:
        return None
    try:
        back = decode(spec, text)
    except Unsupported:
        return None
    want = TYPES[language][kind]
    if type(value) is not want and isinstance(value, str):
        return text if back == value else None  # a variable: read back as the same string
    return text if _same(back, value) else None
