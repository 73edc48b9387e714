"""`--changed-since REF`: what a branch changed in the data folders, read from git so that
nothing can slip past.

    git diff -z --name-status --no-renames REF...HEAD    (NUL-separated: any file name)
    git ls-files -z --others --exclude-standard          (untracked files count as added)

Every status letter has one meaning, and anything else stops the check (fail closed):

    A, M      added, modified    checked like any file (a link or a stray file is rejected)
    D         deleted            reported for review: a result or endpoint file disappears
    T         type changed       rejected: a file became a link, or the reverse
    C, R      copied, renamed    the new path is checked (R is split into D + A by
                                 --no-renames; C only appears with copy detection)
    U, X, B   unmerged, unknown, broken pairing, or output that does not parse: an error

git runs on the checkout that holds the current folder, named explicitly (`epbench.core.git`).
Outside the data folders, when the whole checkout is judged, an added or changed file in a
`.cache/` or `_site/` folder is one `file.build-state` line per folder
(`epbench.generator.checks.file.build_state`): state the build would read must not arrive by commit.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from epbench.core.errors import InputError
from epbench.core.findings import Finding
from epbench.core.git import GitError, checkout_of, run_git
from epbench.generator.checks.file.build_state import findings_for
from epbench.generator.checks.file.data_files import DATA_FOLDERS
from epbench.generator.checks.file.git_status import DELETED, TYPE_CHANGE


@dataclass
class Changes:
    """The data files a branch adds or changes (to check), and the ones it deletes or turns
    into something else (each with its finding)."""

    check: list[Path] = field(default_factory=list)
    findings: list[tuple[Path, Finding]] = field(default_factory=list)


def _in_scope(rel: str, roots: list[str], top: Path) -> Path | None:
    """The absolute path when `rel` lies in a data folder inside one of `roots`."""
    parts = rel.split("/")
    if len(parts) < 2 or parts[0] not in DATA_FOLDERS:
        return None
    absolute = os.path.normpath(top / rel)
    if any(absolute == r or absolute.startswith(r.rstrip(os.sep) + os.sep) for r in roots):
        return Path(absolute)
    return None


def parse_name_status(output: bytes, ref: str) -> list[tuple[str, str]]:
    """(status letter, path) pairs from `git diff -z --name-status` (a rename gives its new
    path and a deletion of the old one); InputError for U, X, B and for output that is not what
    that command prints."""
    fields = output.split(b"\0")
    if fields and fields[-1] == b"":
        fields.pop()
    pairs: list[tuple[str, str]] = []
    at = 0
    while at < len(fields):
        status = fields[at].decode("ascii", "replace")
        letter = status[:1]
        if letter in ("U", "X", "B"):
            raise InputError(f"--changed-since {ref}: git reports status {letter} (unmerged, "
                             "unknown or broken), which epbench cannot judge; nothing was checked")
        if not letter or letter not in "AMDTCR":
            raise InputError(f"--changed-since {ref}: cannot read git's list of changes "
                             f"(status {status[:10]!r}); nothing was checked")
        width = 2 if letter in ("R", "C") else 1
        names = fields[at + 1: at + 1 + width]
        if len(names) != width or any(not n for n in names):
            raise InputError(f"--changed-since {ref}: git's list of changes ends early; "
                             "nothing was checked")
        decoded = [os.fsdecode(n) for n in names]
        pairs.append((letter, decoded[-1]))
        if letter == "R":
            pairs.append(("D", decoded[0]))
        at += 1 + width
    return pairs


def changed_files(ref: str, paths: list[Path], cwd: Path | None = None) -> Changes:
    """What the branch checked out at `cwd` changes since `ref` in the data folders under
    `paths`; InputError (one line) when git cannot say."""
    if ref.startswith("-"):
        raise InputError(f"--changed-since {ref}: a git ref cannot start with '-'")
    top = checkout_of(cwd or Path.cwd())
    if top is None:
        raise InputError(f"--changed-since {ref}: {cwd or Path.cwd()} is not in a git checkout")

    def git(*args: str) -> bytes:
        try:
            return run_git(top, *args)
        except GitError as exc:
            raise InputError(f"--changed-since {ref}: {exc} (is {ref} a branch or commit?)") \
                from None

    diff = git("diff", "-z", "--name-status", "--no-renames", "--no-ext-diff", "--no-textconv",
               f"{ref}...HEAD", "--")
    untracked = git("ls-files", "-z", "--others", "--exclude-standard")
    pairs = parse_name_status(diff, ref)
    pairs += [("A", os.fsdecode(n)) for n in untracked.split(b"\0") if n]
    roots = [os.path.abspath(p) for p in paths]
    out = Changes()
    whole = any(os.path.abspath(top) == r or os.path.abspath(top).startswith(r.rstrip(os.sep)
                                                                             + os.sep)
                for r in roots)  # the checkout itself is being judged, not one data folder
    if whole:  # a committed build cache or build output: one line per folder
        out.findings += [(Path(f.file), f) for f in findings_for(
            top, [rel for letter, rel in pairs if letter != "D"])]
    for letter, rel in pairs:
        path = _in_scope(rel, roots, top)
        if path is None:
            continue
        if letter in ("A", "M", "C", "R"):
            out.check.append(path)
        elif letter == "D":
            out.findings.append((path, DELETED.at(str(path), "", "this pull request deletes "
                                                                 f"{rel[:300]}")))
        else:  # T
            out.findings.append((path, TYPE_CHANGE.at(
                str(path), "", "this file changes type (a file became a link, or the reverse)")))
    unique: dict[Path, None] = dict.fromkeys(out.check)
    out.check = list(unique)
    return out
