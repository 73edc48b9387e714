"""The outcome of `epbench validate`: every file checked, every finding, in three renderings.

Text is what a contributor reads in a terminal (one line per finding, then a summary line);
JSON matches `schemas/validation-report.schema.json`; Markdown is the pull-request comment.
Everything that comes from a file (paths, ids, messages quoting values) is escaped in the
Markdown rendering, so a hostile string cannot inject markup into the comment.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from epbench.core.findings import BLOCKING, SEVERITIES, Finding
from epbench.core.paths import project_dir

Status = Literal["passed", "flagged", "rejected"]
MARKER = "<!-- epbench-validation-report -->"
_MD_MAX_FINDINGS = 200
_MD_MAX_FILES = 100
MD_MAX_CHARS = 60_000
"""GitHub refuses comments over 65,536 characters; the comment stops short of that."""


@dataclass
class FileStatus:
    """One checked file: its kind (None when unreadable or unknown) and what it says it is."""

    path: str
    kind: str | None
    status: Status = "passed"
    endpoint: str | None = None
    workload: str | None = None
    submitter: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "kind": self.kind,
            "status": self.status,
            "endpoint": self.endpoint,
            "workload": self.workload,
            "submitter": self.submitter,
        }


def status_for(findings: list[Finding]) -> Status:
    """`rejected` on any reject; `flagged` on a rejected point or a flag; else `passed`.

    A rejected point is dropped from its result (the rest of the result is published), so
    the file as a whole is flagged; `Report.blocking` still fails the pull request.
    """
    severities = {f.severity for f in findings}
    if "reject" in severities:
        return "rejected"
    if severities & {"reject-point", "flag"}:
        return "flagged"
    return "passed"


@dataclass
class Report:
    """Findings over a set of files, with one status per file."""

    findings: list[Finding] = field(default_factory=list)
    files: list[FileStatus] = field(default_factory=list)

    @property
    def blocking(self) -> bool:
        """True when any finding rejects a file or a point."""
        return any(f.severity in BLOCKING for f in self.findings)

    def refresh_statuses(self) -> None:
        """Recompute each file's status from the findings (after cross-file checks add some)."""
        by_file: dict[str, list[Finding]] = {}
        for finding in self.findings:
            by_file.setdefault(finding.file, []).append(finding)
        for entry in self.files:
            entry.status = status_for(by_file.get(entry.path, []))

    def counts(self) -> dict[str, int]:
        counted = Counter(f.severity for f in self.findings)
        return {severity: counted.get(severity, 0) for severity in SEVERITIES}

    def summary(self) -> dict[str, object]:
        statuses = Counter(entry.status for entry in self.files)
        return {
            "files": len(self.files),
            "passed": statuses.get("passed", 0),
            "flagged": statuses.get("flagged", 0),
            "rejected": statuses.get("rejected", 0),
            "findings": self.counts(),
        }

    def render(self, fmt: str = "text") -> str:
        """The report as `text`, `json` or `markdown`."""
        if fmt == "json":
            return self.to_json()
        if fmt == "markdown":
            return self.to_markdown()
        if fmt == "text":
            return self.to_text()
        raise ValueError(f"unknown report format {fmt!r}")

    def summary_line(self) -> str:
        s = self.summary()
        counts = self.counts()
        verdict = "FAILED" if self.blocking else "ok"
        return (
            f"{verdict}: {s['files']} files checked: {s['passed']} passed, {s['flagged']} flagged, "
            f"{s['rejected']} rejected ({counts['reject']} reject, {counts['reject-point']} "
            f"reject-point, {counts['flag']} flag, {counts['warn']} warn)"
        )

    def to_text(self) -> str:
        lines = [_one_line(f.line()) for f in self.findings]
        lines.append(self.summary_line())
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": "validation-report",
            "schema_version": 1,
            "blocking": self.blocking,
            "summary": self.summary(),
            "files": [entry.to_dict() for entry in self.files],
            "findings": [f.to_dict() for f in self.findings],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"

    def to_markdown(self) -> str:
        out = [MARKER]
        if self.blocking:
            out.append("## epbench validation: changes needed")
            out.append("")
            out.append(
                "Some files were rejected. Fix each finding below (the **fix** column says how), "
                "run `epbench validate results/` locally until it exits 0, and push again."
            )
        else:
            out.append("## epbench validation: passed")
            out.append("")
            out.append("Every file passed the schema and compliance checks.")
        out.append("")
        out.append(f"**{md(self.summary_line())}**")
        out.append("")
        out.append("### Files")
        out.append("")
        out.append("| status | file | kind | endpoint | workload | submitter |")
        out.append("| --- | --- | --- | --- | --- | --- |")
        icons = {"passed": "passed", "flagged": "flagged", "rejected": "**rejected**"}
        order = {"rejected": 0, "flagged": 1, "passed": 2}
        listed = sorted(self.files, key=lambda e: order[e.status])
        for entry in listed[:_MD_MAX_FILES]:
            out.append(
                f"| {icons[entry.status]} | {code(shown_path(entry.path))} | "
                f"{md(entry.kind or '?')} | "
                f"{md(entry.endpoint or '')} | {md(entry.workload or '')} | "
                f"{md(entry.submitter or '')} |"
            )
        if len(listed) > _MD_MAX_FILES:
            out.append("")
            out.append(f"... and {len(listed) - _MD_MAX_FILES} more files.")
        failed = [f for f in self.findings if f.severity in BLOCKING]
        other = [f for f in self.findings if f.severity not in BLOCKING]
        for title, group in (("What failed", failed), ("Flags and warnings", other)):
            if not group:
                continue
            out.append("")
            out.append(f"### {title}")
            out.append("")
            out.append("| severity | file | where | check | problem | fix |")
            out.append("| --- | --- | --- | --- | --- | --- |")
            shown = 0
            for finding in group[:_MD_MAX_FINDINGS]:
                row = (
                    f"| {finding.severity} | {code(shown_path(finding.file))} | "
                    f"{code(finding.pointer or '/')} | "
                    f"{code(finding.check)} | {md(finding.message)} | {md(finding.fix)} |"
                )
                if sum(len(line) + 1 for line in out) + len(row) > MD_MAX_CHARS:
                    break
                out.append(row)
                shown += 1
            if len(group) > shown:
                out.append("")
                out.append(f"... and {len(group) - shown} more "
                           "(run `epbench validate` locally to see every finding).")
        out.append("")
        return "\n".join(out)


def _one_line(text: str) -> str:
    """No newline or control character from a file may break the one-line-per-finding form."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


_MD_ESCAPES = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    "|": "&#124;",
    "`": "&#96;",
    "\\": "&#92;",
    "*": "&#42;",
    "_": "&#95;",
    "[": "&#91;",
    "]": "&#93;",
    "#": "&#35;",
    "!": "&#33;",
    "~": "&#126;",
    "@": "&#64;",
    '"': "&quot;",
    "'": "&#39;",
    ":": "&#58;",  # no autolinks (javascript:, https:) from file content
}


def md(text: str, limit: int = 500) -> str:
    """Text from a file made inert in GitHub Markdown: entities for every markup character,
    control characters and newlines removed, length capped."""
    text = _one_line(str(text))
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return "".join(_MD_ESCAPES.get(ch, ch) for ch in text)


def code(text: str, limit: int = 200) -> str:
    """A path or id shown as code-like text, escaped the same way (no raw backticks)."""
    return f"<code>{md(text, limit)}</code>"


def shown_path(name: str) -> str:
    """How the Markdown report (the pull-request comment and its local preview) names a file:
    relative to the project when it lies inside it, so a preview never shows the reader's own
    folders; else as given. The JSON report keeps the names validation was given."""
    path = Path(name)
    if not path.is_absolute():
        return name
    try:
        return path.resolve().relative_to(project_dir().resolve()).as_posix()
    except (ValueError, OSError):
        return name
