"""Which result pages of an earlier build still stand: the incremental build re-renders a
result page only when its inputs changed.

A page's inputs are its table row (with its frontier marks), the sha256 of its result file
(the build cache knows it without reading the file) and the code and data context of the
build cache; the shell page it is rendered into is compared as a whole (a changed theme, nav
or policy re-renders every page). The manifest lives in the build cache folder, one per
output folder, as plain JSON; a page counts only if its file is still in the output folder.
Whole days are settled first: when a day's digest (its runs, their files' hashes and the
columns computed across files: `epbench.generator.downloads.day_digests`) is the one its pages were
built from, its pages stand without their rows being converted or hashed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from epbench.generator.run_pages import RUN_ID, Shell

FORMAT = 2


def page_digests(frame: pd.DataFrame, frontier: dict[str, list[str]],
                 shas: dict[str, str], context: str,
                 by_repr: set[str] | None = None) -> list[str | None]:
    """What each result page of a `runs` frame is made from: its row (hashed column-wise:
    100,000 rows in a fraction of a second, where one JSON text a row took seconds), its
    frontier marks, its file's sha256 and the build context. None where the sha256 is
    unknown (that page is always built). `by_repr` names the columns hashed by their
    values' repr when they were found over a larger frame this one is a slice of (a row's
    digest is then the one the whole frame gives it)."""
    if frame.empty:
        return []
    if by_repr is None:
        by_repr = hashed_by_repr(frame)
    flat = {}
    for column in frame.columns:
        series = frame[column]
        if str(column) in by_repr:
            series = series.map(lambda v: v if isinstance(v, str) or v is None else repr(v))
        flat[str(column)] = series
    hashes = pd.util.hash_pandas_object(pd.DataFrame(flat), index=False).to_numpy()
    head = f"{FORMAT}\0{context}\0".encode()
    out: list[str | None] = []
    for run_id, path, row_hash in zip(frame["run_id"].astype(str), frame["result_path"],
                                      hashes.tolist(), strict=True):
        sha = shas.get(str(path))
        if sha is None:
            out.append(None)
            continue
        marks = "\0".join(frontier.get(run_id, []))
        out.append(hashlib.sha256(head + f"{sha}\0{row_hash}\0{marks}".encode()).hexdigest())
    return out


def hashed_by_repr(frame: pd.DataFrame) -> set[str]:
    """The columns `page_digests` hashes by their values' repr: object columns holding more
    than texts (lists, numbers)."""
    return {str(column) for column in frame.columns if frame[column].dtype == object
            and pd.api.types.infer_dtype(frame[column], skipna=True) not in ("string", "empty")}


def shell_digest(shell: Shell) -> str:
    return hashlib.sha256(f"{shell.head}\0{shell.tail}".encode()).hexdigest()


@dataclass
class PageManifest:
    """The result pages an output folder holds, by run id, with the digest of their inputs."""

    path: Path | None
    shell: str = ""
    pages: dict[str, str] = field(default_factory=dict)
    days: dict[str, str] = field(default_factory=dict)
    """Run date -> digest of what every result of that day is made from
    (`epbench.generator.downloads.day_digests`)."""

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
        days: dict[str, Any] = data["days"] if isinstance(data.get("days"), dict) else {}
        return cls(path, str(data.get("shell", "")), pages,
                   {str(k): str(v) for k, v in days.items()})

    def standing_days(self, run_ids: list[str], days_of: list[str],
                      days: dict[str, str] | None, out_dir: Path) -> set[str]:
        """Run ids whose page stands without looking at their rows: their day's digest is
        the one their page was built from, and the page is still in the output folder."""
        if not days:
            return set()
        same = {day for day, digest in days.items() if self.days.get(day) == digest}
        try:
            present = set(os.listdir(out_dir / "runs"))
        except OSError:
            return set()
        return {run_id for run_id, day in zip(run_ids, days_of, strict=True)
                if day in same and run_id in self.pages and run_id in present}

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

    def save(self, shell: str, pages: dict[str, str], days: dict[str, str] | None) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"format": FORMAT, "shell": shell, "pages": pages,
                                   "days": days or {}}), encoding="utf-8")
        tmp.replace(self.path)


def drop_stale(out_dir: Path, run_ids: set[str], result_paths: set[str]) -> int:
    """Remove result pages and raw copies of results (and journals) no longer in the tables."""
    removed = 0
    runs = out_dir / "runs"
    if runs.is_dir():
        with os.scandir(runs) as entries:
            for entry in entries:
                if entry.name not in run_ids and entry.is_dir(follow_symlinks=False) \
                        and RUN_ID.match(entry.name):
                    shutil.rmtree(entry.path)
                    removed += 1
    results = out_dir / "results"
    if results.is_dir():
        top = os.fspath(results)
        for folder, _dirs, files in os.walk(top):
            prefix = "results" + folder[len(top):].replace(os.sep, "/") + "/"
            for name in files:
                if prefix + name not in result_paths:
                    os.unlink(os.path.join(folder, name))
                    removed += 1
    return removed
