"""A validation finding: one problem in one file, at one JSON pointer, with what to do."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

Severity = Literal["reject", "reject-point", "flag", "warn"]

# Rejected files never reach the tables; a rejected point is dropped from its result;
# flagged rows are published with their flags; warnings are advice.
SEVERITIES: tuple[Severity, ...] = ("reject", "reject-point", "flag", "warn")
BLOCKING: frozenset[str] = frozenset({"reject", "reject-point"})


@dataclass(frozen=True)
class Finding:
    """One problem found in one file."""

    file: str
    pointer: str
    check: str
    severity: Severity
    message: str
    fix: str = ""
    extra: dict[str, object] = field(default_factory=dict, compare=False)

    def line(self) -> str:
        """The one-line form printed by `epbench validate`: file, pointer, what, what to do."""
        where = f"{self.file}:{self.pointer or '/'}"
        text = f"{where}: {self.severity}: [{self.check}] {self.message}"
        if self.fix:
            text += f" -- {self.fix}"
        return text

    def to_dict(self) -> dict[str, object]:
        data = asdict(self)
        data.pop("extra")
        return data


def pointer_from_path(parts: list[str | int] | tuple[str | int, ...]) -> str:
    """A JSON pointer (RFC 6901) from a list of keys and indexes."""
    if not parts:
        return ""
    escaped = (str(p).replace("~", "~0").replace("/", "~1") for p in parts)
    return "/" + "/".join(escaped)


def problems_text(findings: list[Finding]) -> str:
    """Every finding of a file that stops a run, one line each (file, pointer, what, what to do),
    for an InputError: a user fixes them all in one pass instead of one per attempt."""
    lines = [f"{f.file}:{f.pointer or '/'}: {f.message}" + (f" ({f.fix})" if f.fix else "")
             for f in findings]
    head = f"{len(lines)} problems:\n  " if len(lines) > 1 else ""
    return head + "\n  ".join(lines)
