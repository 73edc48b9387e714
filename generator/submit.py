"""`epbench submit RUN_DIR --submitter NAME`: from a finished run to a file ready for a PR.

It reads runs/<id>/result.json, fills the submitter block, writes the result to
results/<submitter>/<endpoint-id>/<YYYY-MM-DD>-<workload-id>-<run8>.json and its journal,
gzipped, beside it (`<same stem>.events.jsonl.gz`, epbench.core.evidence), then validates both with
the same checks CI runs (every figure is recomputed from the journal). The contributor's
remaining step is `git add` of both files and a pull request.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from epbench.core import evidence
from epbench.core.documents import DocumentError, load_document
from epbench.core.errors import InputError
from epbench.core.schema import check_schema, kind_of
from epbench.generator.checks.layout import expected_relpath
from epbench.generator.report import FileStatus, Report, status_for
from epbench.generator.validate import validate_paths

ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
RELATIONSHIPS = ("provider", "customer", "independent")


def with_submitter(result: dict[str, Any], submitter: str, contact: str | None,
                   relationship: str) -> dict[str, Any]:
    """The result with its submitter block set (display name and contact kept unless given)."""
    block: dict[str, Any] = dict(result.get("submitter") or {})
    block.update(name=submitter, relationship=relationship)
    if contact:
        block["contact"] = contact
    return {**result, "submitter": block}


def submit_run(
    run_dir: Path,
    submitter: str,
    contact: str | None,
    relationship: str,
    results_dir: Path,
) -> tuple[Path, Report]:
    """Place the run's result under results_dir and validate it; returns (path, report).

    Nothing is written when the result fails its schema: the report says why, and the path
    returned is the run's own result.json.
    """
    if not ID_PATTERN.match(submitter):
        raise InputError(
            f"--submitter {submitter!r}: use lowercase letters, digits, '.', '_' or '-' "
            "(it becomes a folder name under results/)"
        )
    if relationship not in RELATIONSHIPS:
        raise InputError(f"--relationship {relationship!r}: use one of {', '.join(RELATIONSHIPS)}")
    source = run_dir / "result.json"
    if not source.is_file():
        raise InputError(f"{source}: no result.json in this run folder (did the run finish?)")
    try:
        result = load_document(source)
    except DocumentError as exc:
        raise InputError(str(exc)) from None
    if kind_of(result) != "result":
        raise InputError(f"{source}: not an epbench result (kind is not 'result')")
    result = with_submitter(result, submitter, contact, relationship)
    problems = check_schema(result, "result", str(source))
    relpath = None if problems else expected_relpath(result)
    if relpath is None:
        report = Report(findings=problems)
        report.files.append(FileStatus(str(source), "result", status_for(problems)))
        return source, report
    target = results_dir / relpath
    root = os.path.abspath(results_dir)
    if os.path.commonpath([root, os.path.abspath(target)]) != root:
        raise InputError(
            f"{source}: the ids in this result do not make a path inside {results_dir}"
        )
    if target.exists():
        try:
            existing = load_document(target)
        except DocumentError:
            existing = None
        if not isinstance(existing, dict) or existing.get("run_id") != result["run_id"]:
            raise InputError(f"{target}: another result is already there; not overwriting it")
    journal = _journal_bytes(run_dir, result)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    packed = target.with_name(target.stem + evidence.SUFFIX)
    if journal is not None:
        evidence.pack(journal, packed)
    elif packed.exists():
        packed.unlink()
    return target, validate_paths([target])


def _journal_bytes(run_dir: Path, result: dict[str, Any]) -> bytes | None:
    """The run's journal, checked against the evidence its result pins (None for a result
    written before results pinned their journal: it is submitted, but never ranked)."""
    pinned = result.get("evidence")
    if pinned is None:
        return None
    path = run_dir / evidence.RUN_JOURNAL
    if not path.is_file():
        raise InputError(f"{path}: the run's journal is missing; a result is submitted with it")
    data = path.read_bytes()
    if evidence.describe(data) != pinned:
        raise InputError(
            f"{path}: the journal changed after the result was written (was the run resumed "
            "without finishing?); finish it with `epbench run --resume` and submit again"
        )
    return data
