"""Where a result lives agrees with what it says it is, and run ids are unique.

    results/<submitter>/<endpoint-id>/<YYYY-MM-DD>-<workload-id>-<run_id[:8]>.json

Ids are limited to `[a-z0-9][a-z0-9._-]{0,63}` by the schema, so no part can climb out of its
folder; this check makes the folders and the file name match the content.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from epbench.core.findings import Finding
from epbench.generator.checks.base import Subject, check, on_result
from epbench.generator.checks.date import run_date

LAYOUT = check(
    "layout.path", "reject",
    "the file sits at results/<submitter>/<endpoint-id>/<date>-<workload-id>-<run8>.json",
    "move the file (or use `epbench submit`, which places it)",
)
SUBMITTER = check(
    "layout.submitter", "reject", "a result under results/ names its submitter",
    "add a submitter block (name, relationship), or use `epbench submit --submitter NAME`",
)
DUPLICATE = check(
    "layout.run-id-unique", "reject", "a run id appears once across results/",
    "a run is submitted once: remove the copy (or re-run to get a new run id)",
)


def results_root(path: Path) -> Path | None:
    """The nearest enclosing folder named `results`, or None."""
    return _results_folder(path.parent) if path.parent != path else None


@lru_cache(maxsize=4096)  # the files of a tree share few folders
def _results_folder(folder: Path) -> Path | None:
    """`folder` itself or its nearest parent named `results`, or None."""
    for parent in (folder, *folder.parents):
        if parent.name == "results":
            return parent
    return None


def expected_relpath(result: dict[str, Any]) -> str | None:
    """Where this result belongs, relative to results/ (None without a submitter)."""
    submitter = (result.get("submitter") or {}).get("name")
    day = run_date(result)
    if not submitter or day is None:
        return None
    return (f"{submitter}/{result['endpoint']['id']}/{day.isoformat()}-"
            f"{result['workload']['id']}-{result['run_id'][:8]}.json")


def check_layout(result: dict[str, Any], path: Path, file: str) -> list[Finding]:
    """For a result inside a results/ tree: the path must be the expected one."""
    root = results_root(path)
    if root is None:
        return []
    if not result.get("submitter"):
        return [SUBMITTER.at(file, "/submitter", "this result has no submitter block")]
    expected = expected_relpath(result)
    if expected is None:
        return []
    actual = path.relative_to(root).as_posix()
    if actual != expected:
        return [LAYOUT.at(
            file, "", f"the content says this file belongs at results/{expected}",
            f"move it to results/{expected}",
        )]
    return []


def duplicate_finding(file: str, run_id: str, other: str) -> Finding:
    return DUPLICATE.at(file, "/run_id", f"run id {run_id} also appears in {other}")


@on_result(150)
def _on_result(s: Subject) -> list[Finding]:
    assert s.path is not None  # a result is always checked with its file
    return check_layout(s.doc, s.path, s.file)
