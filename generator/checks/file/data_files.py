"""Which files may sit in the data folders: documents epbench knows, and nothing else.

`results/`, `workloads/` and `endpoints/` come from pull requests, and anything else found there
is either a mistake or an attack: a `HEAD`, `objects/` and `config` make a folder a git
repository whose config names programs; a symbolic link points the validator at another file
or folder; a dot-file or an unknown extension hides from tools that look for documents.

    results/     <...>/<name>.json                  a result
                 <...>/<name>.events.jsonl.gz       its journal, beside <name>.json
                 <...>/<name>.sigstore.json         its attestation bundle, beside <name>.json
    workloads/   <...>/<name>.yaml|.yml|.json       a workload
                 traces/<name>.csv|.jsonl           a request trace a workload replays (checked
                                                    with the workloads that name it)
                 traces/README.md, LICENSE-*.txt    the traces' attribution and licences
    endpoints/   <name>.yaml|.yml|.json             an endpoint file
                 <name>.yaml.example (...)          a template, not checked

Every other file, every hidden file or folder, and every symbolic link is rejected with one
line naming it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from epbench.core.findings import Finding
from epbench.core.journal_records import SUFFIX as JOURNAL_SUFFIX
from epbench.core.provenance import BUNDLE_SUFFIX
from epbench.core.trace_file import TRACE_PATH
from epbench.generator.checks.base import check

DATA_FOLDERS = ("results", "workloads", "endpoints")
DOCUMENT_SUFFIXES = {
    "results": (".json",),
    "workloads": (".yaml", ".yml", ".json"),
    "endpoints": (".yaml", ".yml", ".json"),
}
TEMPLATE_SUFFIXES = (".yaml.example", ".yml.example", ".json.example")

UNKNOWN = check(
    "file.unknown", "reject",
    "results/, workloads/ and endpoints/ hold only the documents epbench knows",
    "remove the file: results/ holds <name>.json results with their <name>.events.jsonl.gz "
    "journals and <name>.sigstore.json attestations, workloads/ and endpoints/ hold .yaml, "
    ".yml or .json documents",
)
HIDDEN = check(
    "file.hidden", "reject", "no hidden file or folder (a name starting with '.') in a data folder",
    "remove it (git's own files, editor files and dot-folders never belong in a data folder)",
)
SYMLINK = check(
    "file.symlink", "reject", "no symbolic link in a data folder (to a file or to a folder)",
    "commit the file itself, not a link to it",
)

Kind = Literal["document", "journal", "attestation", "template", "trace"]
NOT_DOCUMENTS: tuple[Kind, ...] = ("journal", "attestation", "template", "trace")
"""Kinds that sit in a data folder but are not checked as documents of their own."""


def _place(path: Path | str) -> tuple[str, list[str]] | None:
    """(data folder name, the parts of `path` below it), for the nearest enclosing one."""
    parts = os.path.abspath(path).split(os.sep)
    for index in range(len(parts) - 2, -1, -1):
        if parts[index] in DATA_FOLDERS:
            return parts[index], parts[index + 1:]
    return None


def in_data_folder(folder: Path) -> bool:
    """True when `folder` is a data folder or lies inside one."""
    return Path(folder).name in DATA_FOLDERS or _place(folder) is not None


def classify(path: Path, display: str, mode: int | None = None,
             place: tuple[str, list[str]] | None = None) -> Kind | Finding:
    """What a file in a data folder is, or the finding that rejects it. A path outside the data
    folders is a document (the caller named it; its content decides). `mode`: the file type
    bits when the caller has them already (`listing`), else the file is looked at; `place`:
    what `_place` says of the path, when the caller worked it out for its folder."""
    place = place or _place(path)
    if place is None:
        return "document"
    name, below = place
    if mode is None:
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            mode = 0  # gone (a deletion is reported elsewhere): judged by its name
    if stat.S_ISLNK(mode):
        what = "folder" if os.path.isdir(path) else "file"
        return SYMLINK.at(display, "", f"a symbolic link to a {what} in {name}/ (not followed)")
    hidden = next((part for part in below if part.startswith(".")), None)
    if hidden is not None:
        return HIDDEN.at(display, "", f"{hidden!r} is hidden (its name starts with '.') "
                                      f"in {name}/")
    if stat.S_ISDIR(mode):
        return UNKNOWN.at(display, "", f"a folder where a file was expected in {name}/")
    base = below[-1]
    if name == "results" and base.endswith(JOURNAL_SUFFIX) and len(base) > len(JOURNAL_SUFFIX):
        result = Path(path).with_name(base[: -len(JOURNAL_SUFFIX)] + ".json")
        if os.path.isfile(result) and not os.path.islink(result):
            return "journal"
        return UNKNOWN.at(display, "", f"a journal with no result beside it ({result.name})")
    if name == "results" and base.endswith(BUNDLE_SUFFIX) and len(base) > len(BUNDLE_SUFFIX):
        result = Path(path).with_name(base[: -len(BUNDLE_SUFFIX)] + ".json")
        if os.path.isfile(result) and not os.path.islink(result):
            return "attestation"
        return UNKNOWN.at(display, "", f"an attestation bundle with no result beside it "
                                       f"({result.name})")
    if name == "endpoints" and base.endswith(TEMPLATE_SUFFIXES):
        return "template"
    if name == "workloads" and len(below) == 2 and below[0] == "traces" and _trace_file(base):
        return "trace"
    if base.endswith(DOCUMENT_SUFFIXES[name]):
        return "document"
    return UNKNOWN.at(display, "", f"{name}/ does not hold files like this one "
                                   f"({_shape(base)})")


def _trace_file(base: str) -> bool:
    """A trace (epbench.core.trace_file.TRACE_PATH) or its attribution, in workloads/traces/."""
    return bool(TRACE_PATH.match(f"workloads/traces/{base}")) or base == "README.md" or (
        base.startswith("LICENSE-") and base.endswith(".txt"))


def result_of(path: Path) -> Path | None:
    """The result a journal or attestation bundle belongs to (`<stem>.json` beside it)."""
    name = os.path.basename(path)
    for suffix in (JOURNAL_SUFFIX, BUNDLE_SUFFIX):
        if name.endswith(suffix) and len(name) > len(suffix):
            return Path(path).with_name(name[: -len(suffix)] + ".json")
    return None


def _shape(name: str) -> str:
    suffix = "".join(Path(name).suffixes)[-24:]
    return f"extension {suffix!r}" if suffix else "no extension"


def walk(root: Path) -> list[Path]:
    """Every entry under a data folder that is not a plain folder: files, symbolic links (to
    files or folders, never followed), FIFOs, hidden files and hidden folders (not entered),
    in a stable order."""
    return [path for path, _mode in listing(root)]


def classified(root: Path) -> list[tuple[Path, Kind | Finding]]:
    """`classify` of every entry `walk` finds, each folder placed once (not each file)."""
    out: list[tuple[Path, Kind | Finding]] = []
    for folder, found in _folders(root):
        place = _place(os.path.join(folder, "_"))
        base = Path(folder)
        prefix = "" if str(base) == "." else str(base).rstrip(os.sep) + os.sep
        child = _child_of(base)
        for name, mode in found:
            below = None if place is None else (place[0], [*place[1][:-1], name])
            path = child(name)
            out.append((path, classify(path, prefix + name, mode, below)))
    return out


def listing(root: Path) -> list[tuple[Path, int]]:
    """`walk`, each entry with its file type bits as the directory listing gives them (no
    stat of each of 100,000 files): a link, a folder (hidden ones), a regular file, or 0 for
    anything else (a FIFO, a device)."""
    return [(_child_of(Path(folder))(name), mode) for folder, found in _folders(root)
            for name, mode in found]


def _child_of(base: Path) -> Callable[[str], Path]:
    """What makes `base / name` for a name the directory listing gave (no separator in it):
    pathlib's own `iterdir` helper where this Python has it, which skips parsing the whole
    path again (`base / name` for 100,000 files took half a second), else `/`."""
    make = getattr(base, "_make_child_relpath", None)
    return make if callable(make) else base.joinpath


def _folders(root: Path) -> list[tuple[str, list[tuple[str, int]]]]:
    """`listing` a folder at a time: each folder under `root`, depth first in name order, with
    the names and file type bits of its entries that are not plain folders (plain strings:
    a pathlib object for each of 100,000 files and folder lookups by it took a second)."""
    if os.path.islink(root):
        return [(os.path.dirname(os.fspath(root)) or ".", [(os.path.basename(root),
                                                             stat.S_IFLNK)])]
    out: list[tuple[str, list[tuple[str, int]]]] = []
    pending = [os.fspath(root)]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as entries:
                items = sorted(entries, key=lambda e: e.name)
        except OSError:
            continue
        inner = []
        found: list[tuple[str, int]] = []
        for entry in items:
            if entry.is_symlink():
                mode = stat.S_IFLNK  # a link to a file or a folder: one entry, never entered
            elif entry.is_dir(follow_symlinks=False):
                if not entry.name.startswith("."):
                    inner.append(entry.path)
                    continue
                mode = stat.S_IFDIR  # a hidden folder: one entry, never entered
            elif entry.is_file(follow_symlinks=False):
                mode = stat.S_IFREG
            else:
                mode = 0
            found.append((entry.name, mode))
        if found:
            out.append((folder, found))
        pending.extend(reversed(inner))  # depth first, in name order
    return out
