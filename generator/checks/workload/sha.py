"""A result's workload is one epbench knows: its id names a workload file, its sha256 matches
that file or a version in its git history, and (for the current file) its version agrees. An
unknown workload is rejected: nothing on the board may rest on a workload no one can read.

The current file's bytes are hashed first; when they differ, the file's git history is
searched (`git log --format=%H -- <file>`, then `git cat-file blob <commit>:<file>` for each),
and every hash is cached, so a tree of 10,000 results reads each workload's history once.

git runs only on the checkout that holds the `workloads/` folder, named explicitly
(`epbench.core.git`): never on a repository git would discover from the workload's own folder, which
a pull request can fill with a `HEAD`, `objects/` and a `config` naming a program to run.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from epbench.core.documents import DocumentError, load_document
from epbench.core.findings import Finding
from epbench.core.git import GitError, run_git
from epbench.core.paths import shipped
from epbench.generator.checks.base import Subject, check, on_result

GIT_TIMEOUT_S = 20
MAX_HISTORY = 200

UNKNOWN = check(
    "workload.unknown", "reject", "the workload a result ran is one epbench knows",
    "add the workload file under workloads/ in the same pull request, or run a shipped workload",
)
SHA = check(
    "workload.sha256", "reject",
    "the workload sha256 matches the current file or a version in its git history",
    "re-run with the workload file as it is in workloads/ (an edited workload is a new workload: "
    "give it a new version)",
)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _git(root: Path, *args: str) -> bytes | None:
    try:
        return run_git(root, *args, timeout=GIT_TIMEOUT_S)
    except GitError:
        return None


class WorkloadIndex:
    """The sha256 of every known version of every workload under one project folder."""

    def __init__(self, project: Path) -> None:
        self.project = project
        self._files: dict[str, Path | None] = {}
        self._current: dict[Path, str | None] = {}
        self._history: dict[Path, frozenset[str]] = {}
        self._versions: dict[Path, str | None] = {}

    def file_for(self, workload_id: str, kind: str) -> Path | None:
        """The project's workload file, else the one shipped with epbench (installed wheel);
        directly under workloads/<kind>/ or one folder down (workloads/agentic/bfcl/)."""
        key = f"{kind}/{workload_id}"
        if key not in self._files:
            found = None
            for folder in (self.project / "workloads", shipped("workloads")):
                for suffix in (".yaml", ".yml", ".json"):
                    candidates = [folder / kind / f"{workload_id}{suffix}",
                                  *sorted((folder / kind).glob(f"*/{workload_id}{suffix}"))]
                    found = next((c for c in candidates if c.is_file()), None)
                    if found:
                        break
                if found:
                    break
            self._files[key] = found
        return self._files[key]

    def current_sha(self, path: Path) -> str | None:
        if path not in self._current:
            try:
                self._current[path] = sha256_bytes(path.read_bytes())
            except OSError:
                self._current[path] = None
        return self._current[path]

    def history_shas(self, path: Path) -> frozenset[str]:
        if path not in self._history:
            self._history[path] = frozenset(self._read_history(path))
        return self._history[path]

    def _read_history(self, path: Path) -> list[str]:
        return [sha for sha, _ in self._history_blobs(path)]

    def _history_blobs(self, path: Path) -> list[tuple[str, str]]:
        """(sha256, `<commit>:<file>`) of each version of the file in its git history."""
        # <root>/workloads/<kind>/<file>: root is the checkout, when it is one
        root = path.parent.parent.parent
        rel = path.relative_to(root).as_posix()
        log = _git(root, "log", "--no-show-signature", f"--max-count={MAX_HISTORY}",
                   "--format=%H", "--", rel)
        if not log:
            return []
        shas = []
        for commit in log.decode("ascii", "replace").split():
            data = _git(root, "cat-file", "blob", f"{commit}:{rel}")
            if data is not None:
                shas.append((sha256_bytes(data), f"{commit}:{rel}"))
        return shas

    def bytes_for(self, workload_id: str, kind: str, sha: str) -> bytes | None:
        """The bytes of the workload version whose sha256 is `sha` (the current file or one
        in its git history); None when there is none."""
        path = self.file_for(workload_id, kind)
        if path is None:
            return None
        if self.current_sha(path) == sha:
            try:
                data = path.read_bytes()
            except OSError:
                return None
            return data if sha256_bytes(data) == sha else None
        if sha not in self.history_shas(path):
            return None
        for found, blob in self._history_blobs(path):
            if found == sha:
                return _git(path.parent.parent.parent, "cat-file", "blob", blob)
        return None

    def current_version(self, workload_id: str, kind: str, sha: str) -> str | None:
        """The `version` of the current workload file when its sha256 is `sha`, else None."""
        path = self.file_for(workload_id, kind)
        if path is None or self.current_sha(path) != sha:
            return None
        if path not in self._versions:
            try:
                doc = load_document(path)
            except DocumentError:
                doc = None
            value = doc.get("version") if isinstance(doc, dict) else None
            self._versions[path] = None if value is None else str(value)
        return self._versions[path]

    def matches(self, workload_id: str, kind: str, sha: str) -> bool | None:
        """True/False once the workload file is found; None when there is no such workload."""
        path = self.file_for(workload_id, kind)
        if path is None:
            return None
        if self.current_sha(path) == sha:
            return True
        return sha in self.history_shas(path)


def check_workload_sha(result: dict[str, Any], index: WorkloadIndex, file: str) -> list[Finding]:
    workload = result["workload"]
    found = index.matches(workload["id"], workload["kind"], workload["sha256"])
    if found is None:
        if (result.get("source") or {}).get("format", "epbench") != "epbench":
            return []  # imported results ran another tool's workload; `source` says so
        return [UNKNOWN.at(file, "/workload/id",
                           f"no workload {workload['id']!r} under workloads/{workload['kind']}/")]
    if not found:
        return [SHA.at(file, "/workload/sha256",
                       f"the sha256 matches no version of workload {workload['id']!r}")]
    version = index.current_version(workload["id"], workload["kind"], workload["sha256"])
    if version is not None and version != workload["version"]:
        return [SHA.at(file, "/workload/version",
                       f"version is {workload['version']!r} but the workload file with this "
                       f"sha256 says {version!r}")]
    return []


@on_result(170, needs_index=True)
def _on_result(s: Subject) -> list[Finding]:
    return check_workload_sha(s.doc, s.index, s.file)
