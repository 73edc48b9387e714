"""The pull-request comment, rendered by the comment job from the JSON report alone.

On `pull_request`, GitHub runs the pull request's own copy of `submission.yml`, so everything
in its artifact is written by whoever opened the pull request. The comment job therefore
takes only `report.json` from it, and renders the comment with THIS code, checked out from
the base branch:

- the file is read without following links, at most `MAX_BYTES`, and must be JSON;
- only the fields of a validation report are read (each finding's file, pointer, check,
  severity, message, fix; each file's path, kind, status, endpoint, workload, submitter), each
  type-checked and capped; everything else in the artifact is dropped;
- the verdict, counts and statuses are recomputed from the findings, then rendered by
  `Report.to_markdown`, which escapes every character Markdown or HTML could act on (no
  @-mention, link, image or heading survives);
- when the pull request changed anything under `.github/` (the job asks GitHub's API, not the
  artifact), the comment says first that the checks ran on the pull request's own workflow
  file, so a "passed" there proves nothing.

    python -m epbench.generator.comment REPORT.json --github-changed yes|no --run-url URL
        --head-sha SHA
"""

from __future__ import annotations

import argparse
import json
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

from epbench.core.findings import SEVERITIES, Finding
from epbench.generator.report import MARKER, FileStatus, Report, md

MAX_BYTES = 5 * 1024 * 1024
MAX_ENTRIES = 5000
MAX_TEXT = 2000
_CHECK_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_KIND = re.compile(r"^[a-z][a-z-]{0,40}$")
_SHA = re.compile(r"^[0-9a-f]{40}$")
_RUN_URL = re.compile(r"^https://github\.com/[A-Za-z0-9._-]+/[A-Za-z0-9._-]+/actions/runs/\d+$")
WORKFLOW_NOTE = (
    "**Note: this pull request changes files under `.github/`, so these checks ran on the pull "
    "request's own workflow file, not the repository's. The verdict below proves nothing until "
    "a maintainer has reviewed that change.**"
)


class ReportError(Exception):
    """The artifact does not hold a validation report this job can render."""


def read_artifact(path: Path) -> Any:
    """The JSON in `path`, read without following a link and at most MAX_BYTES."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise ReportError(f"cannot open the report ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise ReportError("the report is not a regular file")
        data = handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ReportError(f"the report is over {MAX_BYTES} bytes")
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ReportError("the report is not UTF-8 JSON") from None


def _text(value: Any, limit: int = MAX_TEXT) -> str:
    return value[:limit] if isinstance(value, str) else ""


def _optional(value: Any) -> str | None:
    return value[:200] if isinstance(value, str) else None


def parse_report(document: Any) -> Report:
    """A Report from the fields a validation report has; anything else is dropped."""
    if not isinstance(document, dict) or document.get("kind") != "validation-report":
        raise ReportError("the artifact is not a validation report")
    findings_in, files_in = document.get("findings"), document.get("files")
    if not isinstance(findings_in, list) or not isinstance(files_in, list):
        raise ReportError("the report has no findings or files list")
    report = Report()
    for item in findings_in[:MAX_ENTRIES]:
        if not isinstance(item, dict):
            continue
        check, severity = item.get("check"), item.get("severity")
        if not (isinstance(check, str) and _CHECK_ID.match(check)) or severity not in SEVERITIES:
            continue
        report.findings.append(Finding(
            _text(item.get("file"), 500), _text(item.get("pointer"), 500), check, severity,
            _text(item.get("message")), _text(item.get("fix"))))
    for item in files_in[:MAX_ENTRIES]:
        if not isinstance(item, dict) or not isinstance(item.get("path"), str):
            continue
        kind = item.get("kind")
        report.files.append(FileStatus(
            _text(item["path"], 500),
            kind if isinstance(kind, str) and _KIND.match(kind) else None,
            "passed", _optional(item.get("endpoint")), _optional(item.get("workload")),
            _optional(item.get("submitter"))))
    known = {entry.path for entry in report.files}
    for finding in report.findings:  # a finding on a file the list left out still counts
        if finding.file not in known:
            known.add(finding.file)
            report.files.append(FileStatus(finding.file, None))
    report.refresh_statuses()
    return report


def render_comment(report: Report, *, github_changed: bool, run_url: str, head_sha: str) -> str:
    """The comment body: marker, the note on .github changes, the report, the run link."""
    body = report.to_markdown()
    if body.startswith(MARKER):
        body = body[len(MARKER):].lstrip("\n")
    out = [MARKER]
    if github_changed:
        out += [WORKFLOW_NOTE, ""]
    out.append(body.rstrip("\n"))
    link = f"[workflow run]({run_url})" if _RUN_URL.match(run_url) else "workflow run"
    commit = head_sha if _SHA.match(head_sha) else md(head_sha[:40])
    out += ["", f"<sub>epbench validate, {link}, commit {commit}</sub>", ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m epbench.generator.comment", description=__doc__)
    parser.add_argument("report", type=Path)
    parser.add_argument("--github-changed", choices=["yes", "no"], required=True)
    parser.add_argument("--run-url", default="")
    parser.add_argument("--head-sha", default="")
    args = parser.parse_args(argv)
    try:
        report = parse_report(read_artifact(args.report))
    except ReportError as exc:
        report = None
        problem = str(exc)
    if report is None:
        text = "\n".join([MARKER, WORKFLOW_NOTE if args.github_changed == "yes" else "",
                          f"**The submission check left no readable report ({md(problem)}).** "
                          "See the workflow run.", ""])
        sys.stdout.write(text)
        return 0
    sys.stdout.write(render_comment(report, github_changed=args.github_changed == "yes",
                                    run_url=args.run_url, head_sha=args.head_sha))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
