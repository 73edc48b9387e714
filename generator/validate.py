"""`epbench validate`: every file checked safely, then the checks across files.

Per file: load with epbench.core.documents (size, UTF-8, duplicate keys, NaN, depth) -> kind ->
schema -> semantic checks (results here, agentic workloads through the `workload_semantics`
callable the CLI passes in, endpoints here). Then, over every result: run ids are unique across
the results tree. A file that makes the validator itself fail is rejected with
`internal.error`; no exception from a file's content ever escapes.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from epbench.core.documents import (
    DocumentError,
    document_from_bytes,
    load_document,
    read_bytes_limited,
)
from epbench.core.errors import InputError
from epbench.core.findings import Finding
from epbench.core.paths import project_dir
from epbench.core.provenance import Provenance
from epbench.core.schema import check_schema, kind_of
from epbench.generator.changes import changed_files
from epbench.generator.checks import WorkloadIndex, check_endpoint, check_result
from epbench.generator.checks.fast_schema import certainly_valid
from epbench.generator.checks.file.build_state import committed_state
from epbench.generator.checks.file.data_files import (
    NOT_DOCUMENTS,
    classified,
    classify,
    in_data_folder,
    result_of,
)
from epbench.generator.checks.layout import duplicate_finding, results_root
from epbench.generator.checks.provenance import check_reserved, tier_of
from epbench.generator.checks.secret import scan
from epbench.generator.checks.workload.trace import check_trace_workload
from epbench.generator.report import FileStatus, Report, status_for
from epbench.generator.worker_pool import each_file

WorkloadSemantics = Callable[[dict[str, Any], str], list[Finding]]
SUFFIXES = frozenset({".json", ".yaml", ".yml"})
PROJECT_FOLDERS = ("results", "workloads", "endpoints")
_SKIP_DIRS = frozenset({"__pycache__", "node_modules", "_site", "runs"})


@dataclass
class Checked:
    """One file's outcome. `document` is kept when the file passed its schema (and dropped
    once it is rejected)."""

    path: Path
    display: str
    kind: str | None
    findings: list[Finding] = field(default_factory=list)
    document: Any = None
    run_id: str | None = None
    identity: dict[str, str | None] = field(default_factory=dict)
    digest: str | None = None
    """sha256 of the bytes checked (None when the file was not read)."""
    provenance: Provenance | None = None
    """A schema-valid result's tier (epbench.generator.checks.provenance), for its table rows."""

    def remember(self, document: Any) -> None:
        """Keep the schema-valid document and what the report says about it."""
        self.document = document
        if self.kind == "result":
            self.run_id = document["run_id"]
            self.identity = {
                "endpoint": document["endpoint"]["id"],
                "workload": document["workload"]["id"],
                "submitter": (document.get("submitter") or {}).get("name"),
            }
        elif self.kind == "endpoint":
            self.identity = {"endpoint": document["id"]}
        elif self.kind in ("serving-workload", "agentic-workload"):
            self.identity = {"workload": document["id"]}

    def status(self) -> FileStatus:
        return FileStatus(self.display, self.kind, status_for(self.findings), **self.identity)


def collect_files(paths: Iterable[Path]) -> list[Path]:
    """Files to check. Inside the data folders (results/, workloads/, endpoints/) every entry
    is collected, so that a stray file, a hidden one or a link is rejected (journals beside
    their results and endpoint templates are not documents and are left out); elsewhere
    *.json/*.yaml/*.yml (hidden folders and *.example skipped). A project root is narrowed to
    its data folders."""
    found: list[Path] = []
    paths = list(paths)
    for given in paths:
        if given.is_symlink() or given.is_file():
            found.append(given)
            continue
        if not given.is_dir():
            raise InputError(f"{given}: no such file or folder")
        roots = [given]
        if is_project(given):
            roots = [given / name for name in PROJECT_FOLDERS if os.path.lexists(given / name)]
        for root in roots:
            if in_data_folder(root):
                found.extend(p for p, kind in classified(root) if kind not in NOT_DOCUMENTS)
                continue
            for folder, dirs, files in os.walk(root, followlinks=False):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS)
                for name in sorted(files):
                    path = Path(folder) / name
                    if path.suffix in SUFFIXES and not name.endswith(".example"):
                        found.append(path)
    if len(paths) == 1:
        return found  # one folder's walk names each file once (links are never followed)
    unique: dict[str, Path] = {}
    for path in found:
        unique.setdefault(os.path.abspath(path), path)
    return list(unique.values())


def is_project(given: Path) -> bool:
    """A folder given to validate is a project root (narrowed to its data folders, and its
    committed build state judged: `epbench.generator.checks.file.build_state`)."""
    return given.is_dir() and not given.is_symlink() and (
        (given / "pyproject.toml").is_file()
        or (given.name != "results" and (given / "results").is_dir()))


def check_file(
    path: Path,
    display: str,
    workload_semantics: WorkloadSemantics | None,
    index: WorkloadIndex | None,
    now: datetime,
) -> Checked:
    """Load and check one file; never raises for anything in the file."""
    try:
        return _check_file(path, display, workload_semantics, index, now)
    except Exception as exc:  # one hostile file must not stop the others
        return Checked(path, display, None, [Finding(
            display, "", "internal.error", "reject",
            f"the validator failed on this file ({type(exc).__name__})",
            "open an issue with this file attached; until then the file cannot be accepted",
        )])


def _check_file(
    path: Path,
    display: str,
    workload_semantics: WorkloadSemantics | None,
    index: WorkloadIndex | None,
    now: datetime,
) -> Checked:
    verdict = classify(path, display)
    if isinstance(verdict, Finding):
        return Checked(path, display, None, [verdict])
    if verdict != "document":
        return Checked(path, display, None, [])
    try:  # one lstat: is it a link, and is it a regular file
        mode = os.lstat(path).st_mode
    except OSError:  # gone, or unreadable: not a regular file
        mode = 0
    if stat.S_ISLNK(mode):
        what = "folder" if path.is_dir() else "file"
        return Checked(path, display, None, [Finding(
            display, "", "file.symlink", "reject", f"a symbolic link to a {what} (not followed)",
            "commit the file itself, not a link to it",
        )])
    if not stat.S_ISREG(mode):  # a FIFO or device would block or never end
        return Checked(path, display, None, [Finding(
            display, "", "file.type", "reject", "not a regular file",
            "commit a regular JSON or YAML file",
        )])
    try:
        data = read_bytes_limited(path)
        digest = hashlib.sha256(data).hexdigest()  # of the bytes checked
        document, text = document_from_bytes(data, path)
    except DocumentError as exc:
        problem = exc.problem
        return Checked(path, display, None, [Finding(
            display, problem.pointer, problem.check, "reject", problem.message,
            problem.fix or "save the file as UTF-8 JSON (or YAML) under 5 MiB",
        )])
    kind = kind_of(document)
    if kind is None or kind == "validation-report":
        declared = document.get("kind") if isinstance(document, dict) else None
        what = f"kind {declared!r} is not one epbench knows" if isinstance(declared, str) \
            else "the document declares no kind"
        return Checked(path, display, None, [Finding(
            display, "/kind", "kind.unknown", "reject", what[:200],
            "set kind to one of: result, endpoint, serving-workload, agentic-workload",
        )], digest=digest)
    findings = scan(document, display, text)
    if kind == "result" and path.suffix != ".json":
        findings.append(Finding(
            display, "", "file.format", "reject", "results are JSON files",
            "submit the result.json `epbench run` wrote (or convert it to JSON)",
        ))
    schema_findings = (
        [] if certainly_valid(document, kind) else check_schema(document, kind, display)
    )
    findings += schema_findings
    provenance = None
    if not schema_findings:
        if kind == "result":
            findings += check_result(document, display, path, index=index, now=now)
            provenance = tier_of(document, path, digest,
                                 index.project if index is not None else None)
            findings += check_reserved(document, provenance, display)
        elif kind == "endpoint":
            # endpoints/<id>.yaml schedules the workloads of the project it sits in
            project = path.resolve().parent.parent if path.parent.name == "endpoints" else (
                index.project if index is not None else None
            )
            findings += check_endpoint(document, display, project)
        elif kind == "agentic-workload" and workload_semantics is not None:
            findings += workload_semantics(document, display)
        elif kind == "serving-workload":
            findings += check_trace_workload(document, display, path)
    checked = Checked(path, display, kind, findings, digest=digest,
                      provenance=provenance)
    if not schema_findings:
        checked.remember(document)
    return checked


def _index_for(path: Path, cache: dict[Any, WorkloadIndex]) -> WorkloadIndex:
    """The workload index of the project a file belongs to (cached per folder)."""
    folder = str(path.parent)
    if folder not in cache:
        root = results_root(path.resolve())
        project = root.parent if root is not None else project_dir()
        if project not in cache:
            cache[project] = WorkloadIndex(project)
        cache[folder] = cache[project]
    return cache[folder]


@dataclass
class FileCheck:
    """`check_file` on a path, with the workload index of each file's project kept for the
    files after it: the one task a worker process keeps (`epbench.generator.worker_pool`), so
    each worker builds its own indexes once. Other steps compose it (the tables make a
    result's rows in the same worker: `epbench.generator.tables.RowCheck`)."""

    workload_semantics: WorkloadSemantics | None
    now: datetime
    indexes: dict[Any, WorkloadIndex] = field(default_factory=dict, repr=False, compare=False)

    def __call__(self, path: Path) -> Checked:
        return check_file(path, str(path), self.workload_semantics,
                          _index_for(path, self.indexes), self.now)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "indexes": {}}  # a worker builds its own


def check_files(
    files: list[Path],
    workload_semantics: WorkloadSemantics | None,
    now: datetime | None = None,
    workers: int | None = None,
) -> list[Checked]:
    """Check each file, in order (in a process pool for large trees)."""
    return each_file(FileCheck(workload_semantics, now or datetime.now(UTC)), files, workers)


def _run_id_of(path: Path) -> str | None:
    try:
        document = load_document(path)
    except DocumentError:
        return None
    if kind_of(document) == "result" and isinstance(document.get("run_id"), str):
        return document["run_id"]
    return None


def cross_file_findings(checked: list[Checked], walked: Iterable[Path] = ()) -> list[Finding]:
    """Run ids unique across every results tree the checked files sit in (whole trees, not
    only the checked files). `walked`: folders whose every file is among `checked` already
    (collected whole), so their trees are not listed again."""
    owners: dict[str, list[str]] = {}
    mine: set[str] = set()  # displays of the files being checked
    for item in checked:
        if item.run_id is not None:
            owners.setdefault(item.run_id, []).append(item.display)
            mine.add(item.display)
    whole = [os.path.abspath(folder) for folder in walked]
    # abspath of each distinct folder, not of each of 100,000 files
    folders = {os.path.abspath(folder)
               for folder in {os.path.dirname(os.fspath(item.path)) for item in checked}}
    found = {results_root(Path(folder) / "_") for folder in folders}
    roots = {r for r in found if r is not None and not any(
        os.fspath(r) == w or os.fspath(r).startswith(w + os.sep) for w in whole)}
    seen = {os.path.abspath(item.path) for item in checked} if roots else set()
    for root in sorted(roots):
        for other in sorted(root.rglob("*.json")):
            if os.path.abspath(other) in seen or not other.is_file() or other.is_symlink():
                continue
            run_id = _run_id_of(other)
            if run_id is not None:
                owners.setdefault(run_id, []).append(str(other))
    out = []
    for run_id, files in owners.items():
        if len(files) < 2:
            continue
        for file in files:
            if file in mine:
                others = ", ".join(f for f in files if f != file)
                out.append(duplicate_finding(file, run_id, others))
    return out


def files_to_check(paths: list[Path],
                   changed_since: str | None) -> tuple[list[Path], list[Checked]]:
    """The files to check under `paths` (or those changed since a git revision), and the
    outcomes known without checking a file: deletions `--changed-since` found, build state
    committed in a project given."""
    if changed_since is not None:
        changes = changed_files(changed_since, paths)
        files = []  # a changed journal or bundle is a change of its result: check the result
        for path in changes.check:
            kind = classify(path, str(path))
            companion = result_of(path) if kind in ("journal", "attestation") else None
            if companion is not None:
                files.append(companion)
            elif kind not in NOT_DOCUMENTS:
                files.append(path)
        return (list(dict.fromkeys(files)),
                [Checked(path, str(path), None, [finding]) for path, finding in changes.findings])
    return collect_files(paths), [
        Checked(Path(f.file), f.file, None, [f])
        for given in paths if is_project(given) for f in committed_state(given)]


def report_on(checked: list[Checked], paths: list[Path], changed_since: str | None) -> Report:
    """The report over every file's outcome, once the checks across files have added their
    findings to each; a file rejected by them loses its document."""
    walked = [] if changed_since is not None else [
        p for p in paths if p.is_dir() and not p.is_symlink() and in_data_folder(p)]
    extra = cross_file_findings(checked, walked)
    by_display: dict[str, list[Finding]] = {}
    for finding in extra:
        by_display.setdefault(finding.file, []).append(finding)
    report = Report()
    for item in checked:
        item.findings.extend(by_display.get(item.display, []))
        report.findings.extend(item.findings)
        report.files.append(item.status())
        if status_for(item.findings) == "rejected":
            item.document = None
    return report


def validate_documents(
    paths: list[Path],
    changed_since: str | None,
    workload_semantics: WorkloadSemantics | None,
    now: datetime | None = None,
    workers: int | None = None,
) -> tuple[Report, list[Checked]]:
    """The report, and each file's outcome (with its document unless it was rejected)."""
    files, known = files_to_check(paths, changed_since)
    checked = check_files(files, workload_semantics, now=now, workers=workers) + known
    return report_on(checked, paths, changed_since), checked


def validate_paths(
    paths: list[Path],
    changed_since: str | None = None,
    workload_semantics: WorkloadSemantics | None = None,
) -> Report:
    """Check every file under `paths`; see the module docstring for what is checked."""
    report, _ = validate_documents(paths, changed_since, workload_semantics)
    return report
