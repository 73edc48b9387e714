"""No build state is committed: the folders `epbench build` would read that are not data.

The build reads the data folders (`results/`, `workloads/`, `endpoints/`, judged file by file
in `epbench.generator.checks.file.data_files`) and the code and site sources that ship with
epbench. It keeps its cache outside the checkout (`epbench.generator.build.build_cache`), and it
writes `_site/`. A committed copy of either is state a pull request could plant for the build
to publish:

    .cache/   at any depth: a build cache (where epbench kept one before), or any tool's
    _site/    at the top: the build's own output folder, whose kept pages an incremental
              build would leave in place

Each such folder is one `file.build-state` line, however many files it holds. "Committed"
means what git tracks or would add (untracked and not ignored); outside a git checkout
nothing is committed (a folder there is the user's own build, which the build never reads
back without its cache's record of it: `epbench.generator.site`).
"""

from __future__ import annotations

import os
from pathlib import Path

from epbench.core.findings import Finding
from epbench.core.git import GitError, run_git
from epbench.generator.checks.base import check
from epbench.generator.checks.file.data_files import DATA_FOLDERS

STATE = check(
    "file.build-state", "reject",
    "no build cache or build output is committed (the build would read it)",
    "remove the folder from the commit (git rm -r --cached FOLDER): the build keeps its cache "
    "outside the checkout and writes _site/ itself",
)
CACHE_FOLDER = ".cache"
OUTPUT_FOLDER = "_site"


def state_folder(rel: str) -> str | None:
    """The build-state folder (relative, with a trailing '/') that the repository path `rel`
    lies in, or None. Paths in a data folder are left to `data_files` (a dot-folder there is
    `file.hidden` already)."""
    parts = rel.replace(os.sep, "/").split("/")
    if len(parts) < 2 or parts[0] in DATA_FOLDERS:
        return None
    if parts[0] == OUTPUT_FOLDER:
        return f"{OUTPUT_FOLDER}/"
    if CACHE_FOLDER in parts[:-1]:
        return "/".join(parts[: parts.index(CACHE_FOLDER) + 1]) + "/"
    return None


def finding(root: Path, folder: str, count: int) -> Finding:
    what = "a build cache" if folder.rstrip("/").endswith(CACHE_FOLDER) else "build output"
    files = f"{count} file{'s' if count != 1 else ''}"
    return STATE.at(str(root / folder.rstrip("/")), "",
                    f"{folder} is committed ({what}, {files}); the build reads no such folder "
                    "from the checkout")


def findings_for(root: Path, rels: list[str]) -> list[Finding]:
    """One finding per build-state folder among the repository paths `rels`."""
    counts: dict[str, int] = {}
    for rel in rels:
        folder = state_folder(rel)
        if folder is not None:
            counts[folder] = counts.get(folder, 0) + 1
    return [finding(root, folder, n) for folder, n in sorted(counts.items())]


def committed_state(root: Path) -> list[Finding]:
    """The build-state folders of the project at `root`, from git's list of tracked and
    untracked-but-not-ignored files; none when `root` is not the top of a git checkout."""
    if not os.path.lexists(root / ".git"):
        return []
    try:
        listed = run_git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    except GitError as exc:
        return [STATE.at(str(root), "", f"git cannot list the committed files ({exc})"[:300])]
    return findings_for(root, [os.fsdecode(n) for n in listed.split(b"\0") if n])
