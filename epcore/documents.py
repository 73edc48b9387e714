"""Loading untrusted JSON and YAML files safely: size-limited, UTF-8 only, no duplicate keys,
no NaN or Infinity, bounded nesting. Nothing in a file is ever executed (YAML is read with the
safe loader, which builds only plain scalars, lists and mappings).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from epbench.core.errors import InputError
from epbench.core.fast_json import Unusual, fast_json
from epbench.core.strict_json import loads_text
from epbench.core.yaml_guard import MAX_NODES, SAFE_LOADER, scan_yaml

MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_DEPTH = 64
MAX_INTEGER = 2**63 - 1


@dataclass(frozen=True)
class LoadProblem:
    """Why a file could not be read as a document; `pointer` locates it where that is known."""

    check: str
    message: str
    pointer: str = ""
    fix: str = ""


class DocumentError(InputError):
    """A file could not be loaded; carries the structured problem."""

    def __init__(self, path: Path | str, problem: LoadProblem) -> None:
        self.path = str(path)
        self.problem = problem
        where = f"{path}:{problem.pointer}" if problem.pointer else str(path)
        super().__init__(f"{where}: {problem.message}")


_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


class _UniqueKeyLoader(SAFE_LOADER):
    """The YAML safe loader, refusing duplicate keys (which PyYAML would silently overwrite),
    building JSON values only: an unquoted date (`effective_date: 2026-01-01`) stays the string
    it was written as, and the tags for bytes, sets and ordered pairs are refused.

    libyaml's parser where PyYAML has it (the constructors stay these Python ones): the 30
    shipped workloads load in 0.27 s of CPU against 2.1 s with the pure-Python parser, to the
    same values, and every build reads them for the workload pages."""

    yaml_implicit_resolvers = {  # noqa: RUF012 (PyYAML reads it from the class)
        first: [(tag, rx) for tag, rx in resolvers if tag != _TIMESTAMP_TAG]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }


def _as_written(loader: _UniqueKeyLoader, node: yaml.Node) -> Any:
    return loader.construct_scalar(node)


def _not_json(loader: _UniqueKeyLoader, node: yaml.Node) -> Any:
    raise yaml.constructor.ConstructorError(
        None, None, f"the tag {node.tag} builds a value JSON does not have", node.start_mark
    )


_UniqueKeyLoader.add_constructor(_TIMESTAMP_TAG, _as_written)
for _tag in ("binary", "set", "omap", "pairs"):
    _UniqueKeyLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _not_json)


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    loader.flatten_mapping(node)
    out: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if not isinstance(key, str | int | float | bool) and key is not None:
            raise yaml.constructor.ConstructorError(
                None, None, "mapping keys must be strings", key_node.start_mark
            )
        if key in out:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        out[key] = loader.construct_object(value_node, deep=deep)
    return out


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _construct_mapping,
)


def _depth(value: Any, limit: int) -> int:
    """Nesting depth, stopping past `limit` (iterative: hostile files cannot blow the stack)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    deepest = 0
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if deepest > limit:
            return deepest
        if isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, level + 1) for v in item)
    return deepest


def _bad_number(value: Any, path: list[str | int]) -> tuple[str, list[str | int]] | None:
    """The first NaN/Infinity ("non-finite") or integer past 64 bits ("too-large"), if any."""
    stack: list[tuple[Any, list[str | int]]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return "non-finite", where
        if isinstance(item, int) and not isinstance(item, bool) and not (
                -MAX_INTEGER <= item <= MAX_INTEGER):
            return "too-large", where
        if isinstance(item, dict):
            stack.extend((v, [*where, k]) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, [*where, i]) for i, v in enumerate(item))
    return None


def read_bytes_limited(path: Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The file's bytes, or DocumentError when it is larger than `limit` (read no further)."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        problem = LoadProblem("file.read", f"cannot read: {exc.strerror}")
        raise DocumentError(path, problem) from None
    if size > limit:
        raise DocumentError(
            path,
            LoadProblem(
                "file.size",
                f"file is {size} bytes, over the {limit} byte limit",
                fix=f"keep the file under {limit // (1024 * 1024)} MiB",
            ),
        )
    with path.open("rb") as handle:
        # read(limit + 1) would allocate the whole limit for every file: ask for the size the
        # file had, and read on (to the same limit + 1) only if it has grown since
        want = size + 1
        data = handle.read(want)
        if len(data) == want:
            data += handle.read(limit + 1 - want)
    if len(data) > limit:
        raise DocumentError(
            path, LoadProblem("file.size", f"file is over the {limit} byte limit")
        )
    return data


def parse_document(data: bytes, path: Path | str, limit: int = MAX_FILE_BYTES) -> Any:
    """Parse bytes as JSON (.json) or YAML (anything else) under every rule of this module."""
    path = Path(path)
    if len(data) > limit:
        raise DocumentError(path, LoadProblem("file.size", f"file is over the {limit} byte limit"))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DocumentError(
            path,
            LoadProblem("file.encoding", f"not UTF-8 (byte {exc.start})", fix="save it as UTF-8"),
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    is_json = path.suffix == ".json"
    if not is_json:
        _guard_yaml(text, path)
    try:
        if is_json:
            value = loads_text(text, finite=False)  # 1e999: value.non-finite, pointed below
        else:
            value = yaml.load(text, Loader=_UniqueKeyLoader)
    except RecursionError:
        raise DocumentError(
            path, LoadProblem("file.depth", f"nesting deeper than {MAX_DEPTH} levels")
        ) from None
    except json.JSONDecodeError as exc:
        raise DocumentError(
            path,
            LoadProblem(
                "file.syntax",
                f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
                fix="fix the JSON syntax (a truncated or hand-edited file?)",
            ),
        ) from None
    except ValueError as exc:
        raise DocumentError(path, LoadProblem("file.syntax", f"invalid JSON: {exc}")) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise DocumentError(path, LoadProblem(
            "file.syntax", f"invalid YAML{where}: {reason}", fix=_yaml_fix(where),
        )) from None
    if _depth(value, MAX_DEPTH) > MAX_DEPTH:
        raise DocumentError(
            path, LoadProblem("file.depth", f"nesting deeper than {MAX_DEPTH} levels")
        )
    bad = _bad_number(value, [])
    if bad is not None:
        from epbench.core.findings import pointer_from_path

        what, at = bad
        if what == "non-finite":
            problem = LoadProblem("value.non-finite", "NaN or Infinity is not allowed",
                                  pointer=pointer_from_path(at),
                                  fix="write a finite number or leave the field out")
        else:
            problem = LoadProblem("value.too-large",
                                  "an integer past the 64-bit range (-2^63..2^63-1)",
                                  pointer=pointer_from_path(at),
                                  fix="write a number in range (no count or figure is that large)")
        raise DocumentError(path, problem)
    return value


def _yaml_fix(where: str) -> str:
    """The fix text for a YAML syntax error found `where` (" at line L column C", or "")."""
    place = f"look{where}" if where else "look through the file"
    return (f"fix the YAML syntax: {place} (and the line before it) for an unclosed quote "
            "or bracket, a tab used for indent, or indentation that does not line up; quote "
            "a value that starts with : { [ & * ! | > % @ or `")


def _guard_yaml(text: str, path: Path) -> None:
    """Refuse alias bombs and pathological nesting before the YAML loader sees the text."""
    nodes, depth = scan_yaml(text, MAX_DEPTH)
    if nodes > MAX_NODES:
        raise DocumentError(path, LoadProblem(
            "file.aliases",
            f"YAML anchors and aliases expand this file past {MAX_NODES} nodes",
            fix="write the values out instead of nesting aliases of aliases",
        ))
    if depth > MAX_DEPTH:
        raise DocumentError(path, LoadProblem(
            "file.depth", f"nesting deeper than {MAX_DEPTH} levels", fix="flatten the document",
        ))


def load_document_text(path: Path | str, limit: int = MAX_FILE_BYTES) -> tuple[Any, str | None]:
    """As load_document, with the JSON text when the fast path read it (None otherwise)."""
    path = Path(path)
    return document_from_bytes(read_bytes_limited(path, limit), path, limit)


def document_from_bytes(data: bytes, path: Path, limit: int = MAX_FILE_BYTES
                        ) -> tuple[Any, str | None]:
    """`load_document_text` of bytes already read from `path` (its name picks the parser)."""
    if path.suffix == ".json":
        try:
            return fast_json(data, MAX_DEPTH)
        except Unusual:
            pass
    return parse_document(data, path, limit), None


def load_document(path: Path | str, limit: int = MAX_FILE_BYTES) -> Any:
    """Read and parse one JSON or YAML file; DocumentError says what is wrong and where.

    Ordinary JSON takes a fast path; YAML is scanned for alias bombs and deep nesting first."""
    return load_document_text(path, limit)[0]
