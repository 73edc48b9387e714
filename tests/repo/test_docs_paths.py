"""Every file, folder and module the docs name exists.

A DESIGN.md or a guide that names a module which was renamed or removed sends a reader (or a
reviewer) to nothing; the issue that asked for this test found five such names. The docs are
every tracked Markdown file outside `tests/data/` (third-party fixtures), and the module
docstrings of the packages, bench and scripts.

What counts as a path:
- a backticked token holding a `/` or ending in a file extension (`checks/evidence.py`,
  `workloads/*.py`, `docs/tables.md`), with a `:name` suffix (`client.py:_digest`) dropped;
- a relative Markdown link target (`[x](../bench/README.md)`);
- in prose and docstrings, a path-like word whose first folder is a top-level entry of the
  repository (`workloads/DESIGN.md`, `runner/bounds.py`).
A path resolves against the document's own folder or any folder above it up to the root
(generator/DESIGN.md says `checks/expansion.py` for generator/checks/expansion.py), and a
glob must match at least one file. A dotted name `epbench.<part>...` must import as a module,
and any rest must be attributes of it.

Not paths: URLs, placeholders (`<id>`, `{stem}`, `...`), absolute and home paths, bare names
without a `/` that are not Python or Markdown files (`report.json` is a file a run writes),
and what a run or a build writes outside the tracked tree (the folders .gitignore lists:
`runs/`, `_site/`, `.cache/`, `bench/.peers/`, ...).
"""

from __future__ import annotations

import ast
import fnmatch
import importlib
import re
import subprocess
from collections.abc import Iterator
from pathlib import PurePosixPath

from tests.conftest import ROOT

# What a run, a build or a benchmark writes, or what lives outside the checkout: named in the
# docs, never committed. `results/` is the folder contributors fill (empty here); `data/` is
# the site's downloads (inside `_site/`); `epbench/_data/` the wheel's copy of the data
# folders; `verified/` a file of the user cache.
NOT_IN_CHECKOUT = (
    "runs/", "_site/", ".cache/", "bench/.peers/", "bench/.cache/", "build/", "dist/",
    "test-artifacts/", "node_modules/", ".venv", "results/", "results", "data/",
    "epbench/_data/", "verified/",
)
# Names that look like paths and are not: git's own folders, refs, GitHub's owner/name.
NOT_PATHS = ("refs/", "objects/", "epbench/epbench")
# Extensions that make a token with no `/` a path of this repository.
BARE_FILE_EXTENSIONS = (".py", ".md")
FILE_EXTENSION = re.compile(
    r"\.(py|md|json|jsonl|gz|yaml|yml|toml|sh|js|css|html|j2|txt|example|cfg|ini|lock)$")
BACKTICKED = re.compile(r"`([^`\n]+)`")
LINK_TARGET = re.compile(r"\]\(([^)\s]+)\)")
PROSE_PATH = re.compile(r"(?<![\w./`\-])((?:\.github|[A-Za-z_][\w-]*)/[\w./*-]*[\w*/])")
DOTTED = re.compile(r"(?<![\w.])(epbench(?:\.[A-Za-z_]\w*)+)")
PLACEHOLDER = re.compile(r"[<>{}$~|@\\\[\]…]|\.\.\.|:|^/|\s|^\.\w+$")


def _tracked() -> list[str]:
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], check=True,
                         capture_output=True).stdout.decode()
    return [name for name in out.split("\0") if name]


TRACKED = _tracked()
TRACKED_SET = set(TRACKED)
TRACKED_DIRS = {str(parent) for name in TRACKED for parent in PurePosixPath(name).parents}
TOP_LEVEL = {PurePosixPath(name).parts[0] for name in TRACKED}
# A `a/b` token is a path when `a` is a folder of the repository (`checks/`, `runner/`);
# `actions/setup-python` or `owner/name` are not.
FOLDER_NAMES = {PurePosixPath(d).name for d in TRACKED_DIRS}


def _doc_files() -> list[str]:
    return [name for name in TRACKED
            if name.endswith(".md") and not name.startswith("tests/data/")]


def _docstring_files() -> list[str]:
    # The packages by their folders (epbench/core etc. are links to them).
    folders = ("epcore/", "runner/", "generator/", "epbench/", "bench/", "scripts/")
    return [name for name in TRACKED if name.endswith(".py") and name.startswith(folders)
            and not name.startswith(("epbench/core/", "epbench/runner/", "epbench/generator/"))]


def _clean(token: str) -> str | None:
    """The path a token names, or None when it names nothing in the repository."""
    token = token.strip().strip("\"'").rstrip(".,;)")
    token = re.sub(r"#.*$", "", token)
    # `client.py:_digest`, `transport.py:data_received`: the file is the path.
    token = re.sub(r"(\.\w+):[\w.]+$", r"\1", token).removeprefix("./")
    if not token or PLACEHOLDER.search(token) or token.startswith(("-", "=")):
        return None
    anchored = re.sub(r"^(\.\./)+", "", token)
    if any(anchored.startswith(w) for w in NOT_IN_CHECKOUT + NOT_PATHS):
        return None
    return token


def _exists_from(base: PurePosixPath, path: str) -> bool:
    joined = PurePosixPath(*[p for p in (base / path).parts if p != "."])
    parts: list[str] = []
    for part in joined.parts:
        if part == "..":
            if not parts:
                return False
            parts.pop()
        else:
            parts.append(part)
    name = "/".join(parts)
    if any(ch in name for ch in "*?"):
        pattern = name.rstrip("/")
        return any(fnmatch.fnmatchcase(t, pattern) for t in TRACKED)
    name = name.rstrip("/")
    return name in TRACKED_SET or name in TRACKED_DIRS or name == ""


def _resolves(doc: str, path: str) -> bool:
    """`path` exists relative to the doc's folder or any folder above it; a bare file name
    (no `/`, as in "`verify.py` checks ...") anywhere in the repository."""
    folder = PurePosixPath(doc).parent
    if path.startswith("../"):
        return _exists_from(folder, path)
    if "/" not in path:
        return any(PurePosixPath(t).match(path) for t in TRACKED)
    return any(_exists_from(base, path) for base in (folder, *folder.parents))


def _module_resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 1, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def _paths_in_markdown(text: str) -> Iterator[str]:
    for span in BACKTICKED.findall(text):
        path = _clean(span)
        if not path:
            continue
        if "/" in path:
            if path.split("/")[0] in FOLDER_NAMES | {".."} or FILE_EXTENSION.search(path):
                yield path
        elif path.endswith(BARE_FILE_EXTENSIONS):
            yield path
    for target in LINK_TARGET.findall(text):
        path = _clean(target)
        if path:
            yield path
    prose = BACKTICKED.sub(" ", text)
    prose = re.sub(r"```.*?```", " ", prose, flags=re.S)
    yield from _prose_paths(prose)


def _prose_paths(text: str) -> Iterator[str]:
    for word in PROSE_PATH.findall(text):
        if word.split("/")[0] not in TOP_LEVEL:
            continue
        path = _clean(word)
        if path and (FILE_EXTENSION.search(path) or path.endswith("/")):
            yield path


def _paths_in_docstring(text: str) -> Iterator[str]:
    for span in BACKTICKED.findall(text):
        path = _clean(span)
        if path and "/" in path and path.split("/")[0] in TOP_LEVEL \
                and FILE_EXTENSION.search(path):
            yield path
    yield from _prose_paths(BACKTICKED.sub(" ", text))


def _module_docstring(name: str) -> str:
    tree = ast.parse((ROOT / name).read_text(encoding="utf-8"))
    return ast.get_docstring(tree) or ""


def _stale_names() -> list[str]:
    stale: list[str] = []
    sources = [(doc, (ROOT / doc).read_text(encoding="utf-8"), _paths_in_markdown)
               for doc in _doc_files()]
    sources += [(name, _module_docstring(name), _paths_in_docstring)
                for name in _docstring_files()]
    for doc, text, paths in sources:
        for path in dict.fromkeys(paths(text)):
            if not _resolves(doc, path):
                stale.append(f"{doc}: `{path}` names no file or folder of the repository")
        for dotted in dict.fromkeys(DOTTED.findall(text)):
            if not _module_resolves(dotted):
                stale.append(f"{doc}: `{dotted}` names no module or attribute")
    return stale


def test_every_path_and_module_the_docs_name_exists() -> None:
    stale = _stale_names()
    assert not stale, "stale names in the docs:\n" + "\n".join(stale)


def test_the_check_finds_a_missing_module_a_glob_with_no_match_and_a_wrong_dotted_name() -> None:
    # The resolver on the cases the issue found, so the test above cannot pass by finding
    # nothing: a relative name that resolves, one that does not, globs, dotted names.
    assert _resolves("generator/DESIGN.md", "checks/evidence.py")
    assert not _resolves("generator/DESIGN.md", "checks/expansion.py")
    assert _resolves("docs/client-measurements.md", "runner/*.py")
    assert not _resolves("docs/client-measurements.md", "workloads/*.py")
    assert _resolves("docs/client-measurements.md", "../bench/README.md")
    assert _module_resolves("epbench.core.metrics.throughput")
    assert not _module_resolves("epbench.generator.checks.expansion")
    assert not _module_resolves("epbench.core.metrics.no_such_name")
    found = list(_paths_in_markdown(
        "see `checks/expansion.py`, [b](../bench/README.md), runs/<id>/x.json, "
        "`https://x.org/a.py`, `report.json`, and workloads/DESIGN.md.\n"))
    assert found == ["checks/expansion.py", "../bench/README.md", "workloads/DESIGN.md"]
