"""Which result pages of an earlier build still stand: the incremental build re-renders a
result page only when its inputs changed.

A page's inputs are its table row (with its frontier marks), the sha256 of its result file
(the build cache knows it without reading the file) and the code and data context of the
build cache; the shell page it is rendered into is compared as a whole (a changed theme, nav
or policy re-renders every page). The manifest lives in the build cache folder, one per
output folder, as plain JSON; a page counts only if its file is still in the output folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.run_pages import RUN_ID, Shell

FORMAT = 1


def page_digest(row: dict[str, Any], source_sha: str | None, context: str) -> str | None:
    """What a result page is made from; None when the file's hash is unknown (always built)."""
    if source_sha is None:
        return None
    text = json.dumps(row, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(f"{FORMAT}\0{context}\0{source_sha}\0{text}".encode()).hexdigest()


def shell_digest(shell: Shell) -> str:
    return hashlib.sha256(f"{shell.head}\0{shell.tail}".encode()).hexdigest()


@dataclass
class PageManifest:
    """The result pages an output folder holds, by run id, with the digest of their inputs."""

    path: Path | None
    shell: str = ""
    pages: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, cache_dir: Path | None, out_dir: Path) -> PageManifest:
        if cache_dir is None:
            return cls(None)
        name = hashlib.sha256(os.path.abspath(out_dir).encode()).hexdigest()[:16]
        path = cache_dir / f"pages-{name}.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls(path)
        if not isinstance(data, dict) or data.get("format") != FORMAT \
                or not isinstance(data.get("pages"), dict):
            return cls(path)
        pages = {str(k): str(v) for k, v in data["pages"].items()}
        return cls(path, str(data.get("shell", "")), pages)

    def standing(self, rows: list[dict[str, Any]], digests: list[str | None],
                 out_dir: Path) -> set[str]:
        """Run ids whose page is built from the same inputs and still on disk."""
        keep = set()
        for row, digest in zip(rows, digests, strict=True):
            run_id = str(row.get("run_id", ""))
            if digest is not None and self.pages.get(run_id) == digest and \
                    (out_dir / "runs" / run_id / "index.html").is_file() and \
                    (out_dir / str(row.get("result_path", ""))).is_file() and \
                    (not row.get("journal_path") or (out_dir / str(row["journal_path"])).is_file()):
                keep.add(run_id)
        return keep

    def save(self, shell: str, pages: dict[str, str]) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"format": FORMAT, "shell": shell, "pages": pages}),
                       encoding="utf-8")
        tmp.replace(self.path)


def drop_stale(out_dir: Path, run_ids: set[str], result_paths: set[str]) -> int:
    """Remove result pages and raw copies of results (and journals) no longer in the tables."""
    removed = 0
    runs = out_dir / "runs"
    if runs.is_dir():
        for entry in runs.iterdir():
            if entry.is_dir() and RUN_ID.match(entry.name) and entry.name not in run_ids:
                shutil.rmtree(entry)
                removed += 1
    results = out_dir / "results"
    if results.is_dir():
        for folder, _dirs, files in os.walk(results):
            for name in files:
                path = Path(folder) / name
                rel = "results/" + path.relative_to(results).as_posix()
                if rel not in result_paths:
                    path.unlink()
                    removed += 1
    return removed
