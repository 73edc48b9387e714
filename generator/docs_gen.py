"""Documentation pages generated from the repository itself: the schema reference (from
`schemas/*.schema.json`), the workloads catalogue (from `workloads/serving` and
`workloads/agentic`) and the methodology (definitions, with the enumerations read from the
schemas and the formulas from the docstrings of the code that computes them,
epbench.generator.formulas,
so they cannot drift from the code).

Workload files are untrusted: they are loaded with the safe loader and every string reaches the
page through autoescaped Jinja inside raw HTML, never as Markdown.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markupsafe import Markup

from epbench.core.documents import DocumentError, document_from_bytes, read_bytes_limited
from epbench.core.paths import yaml_files
from epbench.generator import columns, formulas
from epbench.generator.render import flatten, render

_CONSTRAINTS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength",
                "maxLength", "pattern", "format", "minItems", "maxItems", "maxProperties",
                "uniqueItems")
MAX_DEPTH = 8


@dataclass
class SchemaField:
    """One row of a schema's field table."""

    path: str
    type: str
    required: bool
    description: str
    constraints: str


@dataclass
class SchemaDoc:
    """One schema file as the reference shows it."""

    file: str
    anchor: str
    title: str
    description: str
    id: str
    version: Any
    fields: list[SchemaField] = field(default_factory=list)


def _load_schemas(folder: Path) -> dict[str, dict[str, Any]]:
    return {p.name: json.loads(p.read_text(encoding="utf-8"))
            for p in sorted(folder.glob("*.schema.json"))}


def _resolve(ref: str, here: str, schemas: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    file, _, pointer = ref.partition("#")
    file = file or here
    node: Any = schemas.get(file, {})
    for part in [p for p in pointer.split("/") if p]:
        node = node.get(part, {}) if isinstance(node, dict) else {}
    return file, node if isinstance(node, dict) else {}


def _type_of(node: dict[str, Any]) -> str:
    if "const" in node:
        return f"const {json.dumps(node['const'])}"
    if "enum" in node:
        return "one of " + ", ".join(json.dumps(v) for v in node["enum"])
    kind = node.get("type")
    if isinstance(kind, list):
        return " or ".join(kind)
    if kind:
        return str(kind)
    if "oneOf" in node:
        return "one of: " + "; ".join(v.get("title", "variant") for v in node["oneOf"])
    return "any"


def _constraints(node: dict[str, Any]) -> str:
    return ", ".join(f"{key} {json.dumps(node[key])}" for key in _CONSTRAINTS if key in node)


def _walk(node: dict[str, Any], path: str, required: bool, here: str,
          schemas: dict[str, dict[str, Any]], out: list[SchemaField], seen: tuple[str, ...],
          depth: int) -> None:
    description = node.get("description", "")
    if "$ref" in node:
        ref = node["$ref"]
        file, target = _resolve(ref, here, schemas)
        if "#" not in ref and file != here:
            out.append(SchemaField(path, f"{target.get('title', file)} (see {file})", required,
                                   description or target.get("description", ""), ""))
            return
        key = f"{file}#{ref.partition('#')[2]}"
        if key in seen or depth > MAX_DEPTH:
            out.append(SchemaField(path, f"see {ref}", required, description, ""))
            return
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        _walk(merged, path, required, file, schemas, out, (*seen, key), depth + 1)
        return
    if path:
        out.append(SchemaField(path, _type_of(node), required, description, _constraints(node)))
    needed = set(node.get("required", []))
    for name, child in (node.get("properties") or {}).items():
        _walk(child, f"{path}.{name}" if path else name, name in needed, here, schemas, out,
              seen, depth + 1)
    for pattern, child in (node.get("patternProperties") or {}).items():
        _walk(child, f"{path}.<key matching {pattern}>", False, here, schemas, out, seen,
              depth + 1)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        _walk(extra, f"{path}.<any key>", False, here, schemas, out, seen, depth + 1)
    items = node.get("items")
    if isinstance(items, dict):
        _walk(items, f"{path}[]", False, here, schemas, out, seen, depth + 1)
    for variant in node.get("oneOf") or []:
        if isinstance(variant, dict) and "$ref" in variant and "#" in variant["$ref"]:
            file, target = _resolve(variant["$ref"], here, schemas)
            if file == here and isinstance(target.get("oneOf"), list):
                # a shared definition that is itself a choice (a price card): its variants
                _walk({"oneOf": target["oneOf"]}, path, required, here, schemas, out, seen,
                      depth + 1)
                continue
        if isinstance(variant, dict) and variant.get("properties"):
            title = variant.get("title", "variant")
            sub: list[SchemaField] = []
            _walk({k: v for k, v in variant.items() if k != "title"}, path, required, here,
                  schemas, sub, seen, depth + 1)
            for row in sub:
                if row.path != path:
                    row.description = f"({title}) {row.description}".strip()
                    out.append(row)


def schema_docs(folder: Path) -> list[SchemaDoc]:
    """Every schema under `folder`, with its field table."""
    schemas = _load_schemas(folder)
    docs = []
    for name, schema in schemas.items():
        doc = SchemaDoc(
            file=name,
            anchor=name.removesuffix(".schema.json"),
            title=schema.get("title", name),
            description=schema.get("description", ""),
            id=schema.get("$id", ""),
            version=schema.get("schema_version", ""),
        )
        _walk(schema, "", True, name, schemas, doc.fields, (), 0)
        docs.append(doc)
    return docs


def schema_reference(folder: Path) -> str:
    """The schema reference page (Markdown with raw HTML tables)."""
    return render("schemas.md.j2", schemas=schema_docs(folder))


# ---------------------------------------------------------------------------------------------
# Workloads catalogue


@dataclass
class WorkloadDoc:
    """A workload as the catalogue shows it (generic fields only)."""

    kind: str
    id: str
    version: str
    description: str
    category: str
    facts: list[tuple[str, Any]]
    tools: list[dict[str, str]]
    tasks: list[dict[str, Any]]
    file: str
    problem: str = ""
    page: str = ""  # the workload's own page, relative to the catalogue, when it has one


def _text(value: Any) -> str:
    return "" if value is None else str(value)


@functools.lru_cache(maxsize=256)
def _parsed(path: str, data: bytes) -> Any:
    return document_from_bytes(data, Path(path))[0]


def workload_document(path: Path) -> Any:
    """`load_document` of a workload file, parsed once per process for the same name and bytes
    (DocumentError as it says): a build reads each workload for the catalogue, for its own
    page and for its trace section, and the tests build many sites from the shipped files
    (the BFCL workloads are 1.3 MB of YAML). The document is shared: callers only read it."""
    return _parsed(str(path), read_bytes_limited(path))


def _workload_doc(path: Path, kind: str, relative: str) -> WorkloadDoc:
    try:
        data = workload_document(path)
    except DocumentError as exc:
        return WorkloadDoc(kind, path.stem, "", "", "", [], [], [], f"workloads/{relative}",
                           problem=exc.problem.message)
    if not isinstance(data, dict):
        return WorkloadDoc(kind, path.stem, "", "", "", [], [], [], f"workloads/{relative}",
                           problem="not a mapping")
    facts: list[tuple[str, Any]] = []
    for key in ("prompts", "load", "slo", "limits", "sampling"):
        if isinstance(data.get(key), dict):
            facts.extend((f"{key}.{k}", v) for k, v in flatten(data[key]))
    tools = [{"name": _text(t.get("name")), "description": _text(t.get("description"))}
             for t in data.get("tools") or [] if isinstance(t, dict)]
    tasks = []
    for task in data.get("tasks") or []:
        if not isinstance(task, dict):
            continue
        checks = task.get("checks")
        tasks.append({
            "id": _text(task.get("id")),
            "description": _text(task.get("description") or task.get("title")),
            "checks": [_check_in_words(k, v) for k, v in flatten(checks)]
            if isinstance(checks, dict | list) else [],
        })
    top_checks = data.get("checks")
    if isinstance(top_checks, dict | list):
        facts.extend((f"checks.{k}" if k else "checks", v) for k, v in flatten(top_checks))
    return WorkloadDoc(
        kind=kind,
        id=_text(data.get("id", path.stem)),
        version=_text(data.get("version")),
        description=_text(data.get("description")),
        category=_text(data.get("category")),
        facts=facts,
        tools=tools,
        tasks=tasks,
        file=f"workloads/{relative}",
    )


_CHECK_WORDS = [  # a task check's flattened path -> how the workload page says it
    (re.compile(r"^calls\[(\d+)\]\.tool$"), "call {n}: tool"),
    (re.compile(r"^calls\[(\d+)\]\.arguments\.(.+)$"), "call {n}: argument {name}"),
    (re.compile(r"^state\[(\d+)\]\.path$"), "final state {n}: the value at"),
    (re.compile(r"^state\[(\d+)\]\.equals$"), "final state {n}: must equal"),
    (re.compile(r"^reply_contains$"), "the reply contains each of"),
    (re.compile(r"^reply_contains\[(\d+)\]$"), "the reply contains one of"),
    (re.compile(r"^extra_calls$"), "calls beyond the expected ones allowed"),
    (re.compile(r"^order$"), "order of the expected calls"),
    (re.compile(r"^forbidden$"), "tools it must not call"),
]


def _check_in_words(key: str, value: Any) -> tuple[str, Any]:
    """A task check as people read it: `calls[0].arguments.city` is "call 1: argument city";
    a list of accepted argument values reads "(any of)"."""
    for pattern, words in _CHECK_WORDS:
        match = pattern.match(key)
        if match:
            groups = match.groups()
            label = words.format(n=int(groups[0]) + 1 if groups and groups[0].isdigit() else "",
                                 name=groups[-1] if len(groups) > 1 else "")
            if "argument" in label and isinstance(value, list):
                label += " (any of)"
            return label, value
    return key.replace("_", " "), value


def workload_docs(workloads_root: Path) -> list[WorkloadDoc]:
    """Every workload file under `workloads_root/serving` and `workloads_root/agentic` and their
    sub-folders (agentic/bfcl/): the files `epbench run --workload ID` finds."""
    docs = []
    for kind in ("serving", "agentic"):
        for path in yaml_files(workloads_root / kind, nested=True):
            docs.append(_workload_doc(path, kind, path.relative_to(workloads_root).as_posix()))
    return docs


def workloads_catalogue(workloads_root: Path, pages: frozenset[str] = frozenset(),
                        docs: list[WorkloadDoc] | None = None) -> str:
    """The workloads catalogue page; workloads whose id is in `pages` link to their page.
    `docs`: `workload_docs(workloads_root)` when the caller has them."""
    docs = workload_docs(workloads_root) if docs is None else docs
    for doc in docs:
        if doc.id in pages:
            doc.page = f"{doc.id}/"
    return render("workloads.md.j2", workloads=docs)


# ---------------------------------------------------------------------------------------------
# Methodology


def _enum(schemas: dict[str, dict[str, Any]], file: str, *pointer: str) -> list[str]:
    node: Any = schemas.get(file, {})
    for part in pointer:
        node = node.get(part, {}) if isinstance(node, dict) else {}
    if isinstance(node, dict):
        if "enum" in node:
            return [str(v) for v in node["enum"]]
        if "properties" in node and "required" in node:  # optional classes too (overloaded)
            return [str(v) for v in node["properties"]]
        if "required" in node:
            return [str(v) for v in node["required"]]
    return []


def methodology(schemas_folder: Path, tables_doc: Path | None = None) -> str:
    """The methodology page: definitions, with enumerations and formulas read from code."""
    schemas = _load_schemas(schemas_folder)
    result = "result.schema.json"
    tables_text = ""
    if tables_doc is not None and tables_doc.is_file():
        tables_text = tables_doc.read_text(encoding="utf-8")
        # Demote its headings under the methodology's own "Table columns" section.
        tables_text = "\n".join(
            ("##" + line) if line.startswith("#") else line for line in tables_text.splitlines()
        )
        if tables_text.startswith("###"):  # drop its own title
            tables_text = tables_text.split("\n", 1)[1]
    return render(
        "methodology.md.j2",
        error_classes=_enum(schemas, result, "$defs", "errors"),
        call_classes=_enum(schemas, result, "$defs", "agentic", "properties", "calls"),
        retry_tags=_enum(schemas, result, "$defs", "agentic", "properties", "retry_cost"),
        outcomes=_enum(schemas, result, "$defs", "agentic", "properties", "tasks", "items",
                       "properties", "outcomes", "items", "properties", "result"),
        percentiles=["p50", "p90", "p95", "p99"],
        formulas=formulas.sections(),
        # Trusted: the repository's own documentation, not submitted data.
        tables_markdown=Markup(tables_text),
    )


# Table columns (docs/tables.md)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _column_rows(table: str) -> list[tuple[list[str], str, str]]:
    """(names, unit, meaning) per line of a table's column list: a column also in `runs` is
    "as in `runs`" there, and neighbours that say the same share a line."""
    runs = set(map(id, columns.RUNS))
    lines: list[tuple[list[str], str, str]] = []
    for spec in columns.TABLE_SPECS[table]:
        if table != "runs" and id(spec) in runs:
            unit, meaning = "", columns.AS_RUNS
        else:
            unit, meaning = spec.unit, spec.meaning
            if spec.filled_by:
                meaning += f" (set by `{spec.filled_by}`)"
        if lines and lines[-1][1:] == (unit, meaning):
            lines[-1][0].append(spec.name)
        else:
            lines.append(([spec.name], unit, meaning))
    return lines


def tables_reference() -> str:
    """docs/tables.md: the downloads' layout and dialect, then every table's columns as
    epbench.generator.columns declares them."""
    tables = {}
    for table in columns.TABLE_SPECS:
        out = [f"## {table} ({columns.TITLES[table]})", "", "| column | unit | meaning |",
               "| --- | --- | --- |"]
        out += [f"| {', '.join(names)} | {_cell(unit)} | {_cell(meaning)} |"
                for names, unit, meaning in _column_rows(table)]
        tables[table] = Markup("\n".join(out))
    return render("tables.md.j2", tables=tables)


if __name__ == "__main__":
    import sys

    if sys.argv[1:] != ["tables"]:
        sys.exit("usage: python -m epbench.generator.docs_gen tables > docs/tables.md")
    sys.stdout.write(tables_reference())
