"""One page per result, rendered into the shell page mkdocs built (same theme, header, search
and palette), in forked worker processes while mkdocs runs.

Per-result pages bypass mkdocs on purpose: 10,000 Markdown pages through mkdocs would take
minutes, while one compiled Jinja template and a string join take seconds (SITE_DESIGN.md).
mkdocs builds one hidden `runs/_shell/` page; its HTML is split at a marker and every result
page is `head + fragment + tail`; the shell is then removed and dropped from the sitemap.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import logging
import multiprocessing
import os
import re
import shutil
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import orjson
from markupsafe import escape

from epbench.core.evidence import SUFFIX
from epbench.core.server_evidence import first_answer
from epbench.generator.html_space import collapse_space
from epbench.generator.render import environment, result_context

log = logging.getLogger(__name__)

SHELL_TITLE = "EPBSHELLTITLE"
SHELL_CONTENT = "EPBSHELLCONTENT"
SHELL_DIR = "runs/_shell"
RUN_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{7,63}$")


def shell_page() -> str:
    """The Markdown of the hidden shell page mkdocs builds."""
    return (f"---\ntitle: {SHELL_TITLE}\nsearch:\n  exclude: true\nhide:\n  - navigation\n"
            f"  - toc\n---\n\n"
            f"{SHELL_CONTENT}\n")


@dataclass(frozen=True)
class Shell:
    """The built shell page, split around its content marker."""

    head: str
    tail: str


def take_shell(out_dir: Path) -> Shell:
    """The built shell page split at its marker, its indentation and blank lines collapsed
    (epbench.generator.html_space); the page itself is removed."""
    page = out_dir / SHELL_DIR / "index.html"
    text = page.read_text(encoding="utf-8")
    marker = f"<p>{SHELL_CONTENT}</p>"
    if marker not in text:
        raise RuntimeError("the shell page lost its content marker")  # a theme change; a bug
    head, tail = text.split(marker, 1)
    shutil.rmtree(out_dir / SHELL_DIR)
    _drop_from_sitemap(out_dir)
    return Shell(collapse_space(head), collapse_space(tail))


def _drop_from_sitemap(out_dir: Path) -> None:
    sitemap = out_dir / "sitemap.xml"
    if not sitemap.is_file():
        return
    text = re.sub(r"\s*<url>\s*<loc>[^<]*runs/_shell/</loc>.*?</url>", "",
                  sitemap.read_text(encoding="utf-8"), flags=re.S)
    sitemap.write_text(text, encoding="utf-8")
    with gzip.open(out_dir / "sitemap.xml.gz", "wb") as handle:
        handle.write(text.encode("utf-8"))


class PageRows(Protocol):
    """The rows to render, made a slice at a time (epbench.generator.page_rows)."""

    def __len__(self) -> int: ...

    def take(self, start: int, end: int) -> tuple[list[dict[str, Any]], list[str | None]]:
        """The rows from `start` to `end` and their page digests."""
        ...


class ResultPages:
    """Renders one page per result in worker processes (fork), started before mkdocs runs.

    Each worker makes its slice's rows, renders their page bodies, then waits for the shell
    file that `release` writes once mkdocs is done, then writes pages and raw JSON copies.
    Where fork is missing, or for a handful of results, everything happens in `release`, in
    this process. `digests` are the rows' page digests, in order, once `wait` returned.
    """

    def __init__(self, rows: PageRows, results_dir: Path, out_dir: Path,
                 shell_file: Path) -> None:
        self.rows, self.results_dir, self.out_dir = rows, results_dir, out_dir
        self.shell_file = shell_file
        self.written = 0
        self.digests: list[str | None] = []
        self._futures: list[Any] = []
        self._pool: ProcessPoolExecutor | None = None
        workers = min(os.cpu_count() or 1, max(1, len(rows) // 200))
        if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
            size = -(-len(rows) // workers)
            context = multiprocessing.get_context("fork")
            # the rows reach the forked workers in their memory, not pickled through a pipe
            # (100,000 row dicts took the parent seconds to pickle)
            self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=context,
                                             initializer=_take_rows, initargs=(rows,))
            self._futures = [
                self._pool.submit(_render_and_write_slice, i, i + size, results_dir, out_dir,
                                  shell_file)
                for i in range(0, len(rows), size)
            ]

    def release(self, shell: Shell) -> None:
        """Hand the built shell to the workers (or render everything here without them)."""
        if self._pool is None:
            rows, self.digests = self.rows.take(0, len(self.rows))
            self.written = render_and_write(rows, self.results_dir, self.out_dir, shell)
            return
        tmp = self.shell_file.with_suffix(".tmp")
        tmp.write_text(json.dumps({"head": shell.head, "tail": shell.tail}), encoding="utf-8")
        tmp.replace(self.shell_file)  # atomic: a worker never reads half a shell

    def wait(self) -> int:
        """Wait for the workers; the number of result pages written."""
        if self._futures:
            done = [f.result() for f in self._futures]
            self.written = sum(written for written, _ in done)
            self.digests = [d for _, digests in done for d in digests]
        return self.written

    def close(self) -> None:
        """Stop the workers; after a failed build they find an abort file instead of a shell."""
        if self._pool is not None:
            if not self.shell_file.is_file():
                self.shell_file.with_suffix(".abort").write_text("", encoding="utf-8")
            for future in self._futures:
                future.cancel()
            self._pool.shutdown(wait=True, cancel_futures=True)


@dataclass(frozen=True)
class _Body:
    run_id: str
    rel: str
    raw: bytes
    title: bytes
    html: bytes
    journal: tuple[str, str] | None = None
    """(the journal in the results tree, where it goes in the site), for a result with one."""


def render_and_write(rows: list[dict[str, Any]], results_dir: Path, out_dir: Path,
                     shell: Shell) -> int:
    """Render the rows' pages and write them into `shell`; the number of pages written."""
    return _write_pages_out(_render_bodies(rows, results_dir), out_dir, shell)


def _render_bodies(rows: list[dict[str, Any]], results_dir: Path) -> list[_Body]:
    template = environment().get_template("result.html.j2")
    results = os.fspath(results_dir)
    bodies = []
    for row in rows:
        run_id = str(row.get("run_id", ""))
        rel = str(row.get("result_path") or "")
        if not RUN_ID.match(run_id) or not rel.startswith("results/") or ".." in rel:
            log.warning("skipping a row with an unexpected run id or path: %r", run_id)
            continue
        with open(os.path.join(results, rel[8:]), "rb") as handle:
            raw = handle.read()
        context = result_context(_document(raw), row, root="../../")
        journal = _journal(row, rel, results)
        context["first_answer"] = first_answer(Path(journal[0])) if journal else None
        bodies.append(_Body(run_id, rel, raw, str(escape(context["title"])).encode(),
                            template.render(context).encode(), journal))
    return bodies


def _document(raw: bytes) -> Any:
    """A result that passed the safe loader and the schema in epbench.generator.tables moments ago:
    parsed with orjson (a third of json's time), or json for what orjson refuses (integers
    past 64 bits, lone surrogates), so the values are json.loads' either way."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw)


def _journal(row: dict[str, Any], rel: str, results: str) -> tuple[str, str] | None:
    """Where a row's journal is and goes: beside its result, in the tree and in the site."""
    journal = row.get("journal_path")
    if not journal:
        return None
    journal = str(journal)
    if journal != rel.removesuffix(".json") + SUFFIX:  # the tables only ever write this
        log.warning("not copying a journal with an unexpected path: %r", journal)
        return None
    return os.path.join(results, journal.removeprefix("results/")), journal


_TITLE, _PAGE = object(), object()
"""Where a page's title and its own folder go in the shell's parts."""


def _parts(text: str, page_too: bool) -> list[Any]:
    """The shell's text as UTF-8 pieces around its title (and its folder) markers."""
    marks = {SHELL_TITLE: _TITLE, f"{SHELL_DIR}/": _PAGE} if page_too else {SHELL_TITLE: _TITLE}
    pattern = "(" + "|".join(re.escape(mark) for mark in marks) + ")"
    return [marks[piece] if i % 2 else piece.encode()
            for i, piece in enumerate(re.split(pattern, text)) if piece]


def _write_pages_out(bodies: list[_Body], out_dir: Path, shell: Shell) -> int:
    """Each page as head + fragment + tail, with one writev a page; the raw result (and its
    journal) beside it under results/. Folders are made once, before the pages."""
    out = os.fspath(out_dir)
    runs = os.path.join(out, "runs")
    for folder in {os.path.dirname(body.rel) for body in bodies} | {"runs"}:
        os.makedirs(os.path.join(out, folder), exist_ok=True)
    head, tail = _parts(shell.head, True), _parts(shell.tail, False)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
    for body in bodies:
        _write(os.path.join(out, body.rel), [body.raw], flags)
        if body.journal is not None:  # copied with its result: only new or changed ones
            shutil.copyfile(body.journal[0], os.path.join(out, body.journal[1]))
        folder = os.path.join(runs, body.run_id)
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder)
        page = f"runs/{body.run_id}/".encode()
        chunks = [body.title if p is _TITLE else page if p is _PAGE else p for p in head]
        chunks.append(body.html)
        chunks += [body.title if p is _TITLE else p for p in tail]
        _write(os.path.join(folder, "index.html"), chunks, flags)
    return len(bodies)


def _write(path: str, chunks: list[bytes], flags: int) -> None:
    handle = os.open(path, flags, 0o666)
    try:
        written = os.writev(handle, chunks)
        if written < sum(map(len, chunks)):  # a short write (a full disk raises instead)
            data = b"".join(chunks)
            while written < len(data):
                written += os.write(handle, data[written:])
    finally:
        os.close(handle)


_ROWS: PageRows | None = None


def _take_rows(rows: PageRows) -> None:
    """A forked worker's initializer: the rows to render, from the parent's memory."""
    global _ROWS
    _ROWS = rows


def _render_and_write_slice(start: int, end: int, results_dir: Path, out_dir: Path,
                            shell_file: Path) -> tuple[int, list[str | None]]:
    assert _ROWS is not None, "a page worker without its rows"
    rows, digests = _ROWS.take(start, end)
    return _render_and_write(rows, results_dir, out_dir, shell_file), digests


_BATCH = 500
"""Pages a worker renders before it looks for the shell again."""


def _render_and_write(rows: list[dict[str, Any]], results_dir: Path, out_dir: Path,
                      shell_file: Path) -> int:
    """A worker: render the chunk a batch at a time; once the shell is there, write each batch
    as soon as it is rendered (the pages do not pile up in memory); at the end wait for the
    shell (at most ten minutes) and write what is left."""
    pending: list[_Body] = []
    shell: Shell | None = None
    written = 0
    for start in range(0, len(rows), _BATCH):
        pending += _render_bodies(rows[start:start + _BATCH], results_dir)
        if shell is None and shell_file.is_file():
            shell = _read_shell(shell_file)
        if shell is not None:
            written += _write_pages_out(pending, out_dir, shell)
            pending = []
    if shell is None:
        deadline = time.monotonic() + 600
        while not shell_file.is_file():
            if shell_file.with_suffix(".abort").is_file():
                return 0
            if time.monotonic() > deadline:
                raise RuntimeError("the site build never produced its shell page")
            time.sleep(0.05)
        shell = _read_shell(shell_file)
    return written + _write_pages_out(pending, out_dir, shell)


def _read_shell(shell_file: Path) -> Shell:
    shell = json.loads(shell_file.read_text(encoding="utf-8"))
    return Shell(shell["head"], shell["tail"])
