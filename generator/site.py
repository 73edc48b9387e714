"""`epbench build`: results, workloads and endpoint files in, one static site out.

The flow, in order:

1. tables (`epbench.generator.tables`) from every valid result, written to `data/` as JSON
   and CSV in daily parts with an index (`epbench.generator.downloads`), only the parts that
   changed;
2. Markdown pages (`epbench.generator.pages`) rendered with Jinja (autoescaped) into a
   temporary mkdocs docs folder, and one *shell* page;
3. `mkdocs build --strict` with mkdocs-material;
4. the Content-Security-Policy of every built page gets the hashes of its inline scripts
   (`epbench.generator.csp`);
5. one page per result (`epbench.generator.run_pages`), rendered into the shell page;
6. the compact per-view data the pages fetch (`epbench.generator.boards.VIEW_COLUMNS`).

Steps that need nothing of each other run side by side in forked processes
(`epbench.generator.worker_pool.Forked`): the workload documents during the tables, the
endpoint and workload pages (and an incremental build's standing pages and views) during the
other pages, mkdocs (in a process forked before the tables, while this one is small) during
the downloads; generator/SITE_DESIGN.md says why and what each saves.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd
import yaml

from epbench.core.errors import InputError
from epbench.core.paths import data_dir, site_sources_dir
from epbench.generator.boards import VIEW_COLUMNS
from epbench.generator.build import (
    PageManifest,
    context_digest,
    drop_stale,
    page_digests,
    shell_digest,
    wait_saved,
)
from epbench.generator.collector import collector_paused
from epbench.generator.csp import CSP, secure_pages
from epbench.generator.docs_gen import WorkloadDoc, workload_docs
from epbench.generator.downloads import day_digests, part_keys
from epbench.generator.entity_pages import write_entity_pages
from epbench.generator.history_views import series_views
from epbench.generator.latest import board_views
from epbench.generator.page_rows import FrameRows, RowList, page_columns
from epbench.generator.pages import write_pages
from epbench.generator.plain_json import records, view_table
from epbench.generator.render import frontier_by_run
from epbench.generator.run_pages import SHELL_DIR, ResultPages, Shell, take_shell
from epbench.generator.tables import Tables
from epbench.generator.vendor import vendor_vega
from epbench.generator.worker_pool import Forked

log = logging.getLogger(__name__)


def build_site(results_dir: Path, out_dir: Path, project: Path, base_url: str,
               incremental: bool = True) -> Path:
    """Build the whole site into `out_dir` and return it (the folder holding index.html).
    Incremental by default: the build cache (epbench.generator.build, outside the project)
    keeps what unchanged results gave, and result pages whose inputs did not change are not rendered
    again; `incremental=False` (`epbench build --no-cache`) reads and writes no cache."""
    from epbench.generator.build import default_folder
    from epbench.generator.downloads import write_tables

    cache_dir = default_folder(project, results_dir) if incremental else None
    # mkdocs runs in a process forked now, while this one is small: forked once the tables are
    # in memory, it spent a quarter more time copying the pages it wrote to
    with mkdocs_waiting() as mkdocs:
        with _timed("tables (validation and rows)"):
            tables, workloads = tables_and_workloads(results_dir, project, cache_dir)
        return build_site_from_tables(tables, results_dir, out_dir, project, base_url,
                                      write=write_tables, cache_dir=cache_dir,
                                      workloads=workloads, mkdocs=mkdocs)


def mkdocs_waiting() -> Forked:
    """A forked process that waits for `(mkdocs config, built folder)` and then builds the
    site's pages there (`build_site_from_tables(mkdocs=...)` sends them)."""
    return Forked(_mkdocs_when_told, inbox=True)


def _mkdocs_when_told(receive: Callable[[], tuple[Path, Path]]) -> None:
    config, built = receive()
    _mkdocs_and_csp(config, built)


def tables_and_workloads(results_dir: Path, project: Path,
                         cache_dir: Path | None) -> tuple[Tables, list[WorkloadDoc]]:
    """The tables (with the build cache in `cache_dir`, None: none), and the project's
    workload documents for the catalogue and the workload pages (`workload_docs`), which need
    no tables and are read by a forked process meanwhile."""
    from epbench.generator.build import cached_tables
    from epbench.generator.tables import build_tables

    with Forked(partial(workload_docs, data_dir("workloads", project))) as early:
        tables = (cached_tables(results_dir, project, cache_dir) if cache_dir is not None
                  else build_tables(results_dir, project))
        workloads: list[WorkloadDoc] = early.result()
    return tables, workloads


def build_site_from_tables(tables: Tables, results_dir: Path, out_dir: Path, project: Path,
                           base_url: str,
                           write: Callable[..., list[Path]] | None = None,
                           cache_dir: Path | None = None,
                           workloads: list[WorkloadDoc] | None = None,
                           mkdocs: Forked | None = None) -> Path:
    """The site from already-built tables (tests hand in small ones). mkdocs builds into a
    folder beside `out_dir`; its pages then replace everything in `out_dir` but the result
    pages (`runs/`), raw results (`results/`) and downloads (`data/`), which are written only
    where they changed (all of them without `cache_dir`). `write` is
    `epbench.generator.downloads.write_tables` (None: no downloads, for tests); `workloads`
    the project's `workload_docs` when the caller has them; `mkdocs` a process of
    `mkdocs_waiting` to build the pages in (None: one is forked when they are written)."""
    if workloads is None:
        workloads = workload_docs(data_dir("workloads", project))
    with collector_paused():
        site = _build_site_from_tables(tables, results_dir, out_dir, project, base_url, write,
                                       cache_dir, workloads, mkdocs)
    if cache_dir is not None:
        wait_saved()  # the build cache's writer (generator/build/cache_writer.py) is done too
    return site


@dataclass
class _Kept:
    """What an incremental build keeps of the result pages an earlier one made: the rows of
    the results whose day changed with their page digests, the run ids of the settled days
    and of every page that stands."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    digests: list[str | None] = field(default_factory=list)
    settled: set[str] = field(default_factory=set)
    standing: set[str] = field(default_factory=set)


@dataclass
class _PageCache:
    """The build cache's part in a site build: the page manifest of this output folder, the
    code and data context, each result file's sha256 and each day's digest."""

    manifest: PageManifest
    context: str
    shas: dict[str, str]
    days: dict[str, str] | None = None

    @classmethod
    def open(cls, cache_dir: Path, out_dir: Path, project: Path,
             tables: Tables) -> _PageCache:
        return cls(PageManifest.load(cache_dir, out_dir), context_digest(project),
                   tables.sources)

    def keeps_pages(self, out_dir: Path) -> bool:
        return bool(self.manifest.pages) and (out_dir / "runs").is_dir()

    def save(self, shell: Shell, made: Iterable[tuple[str, str | None]], kept: _Kept) -> None:
        pages = {run_id: self.manifest.pages[run_id] for run_id in kept.settled}
        pages.update((run_id, d) for run_id, d in made if d is not None)
        self.manifest.save(shell_digest(shell), pages, self.days)


def _build_site_from_tables(tables: Tables, results_dir: Path, out_dir: Path, project: Path,
                            base_url: str, write: Callable[..., list[Path]] | None,
                            cache_dir: Path | None, workloads: list[WorkloadDoc],
                            mkdocs: Forked | None) -> Path:
    out_dir = out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    sources = site_sources_dir()
    cache = (_PageCache.open(cache_dir, out_dir, project, tables) if cache_dir is not None
             else None)
    run_ids = tables.runs["run_id"].astype(str).tolist()
    if cache is None or not cache.manifest.pages:
        # nothing this build's cache recorded: what is in out_dir is not ours to keep
        for name in _KEPT:
            shutil.rmtree(out_dir / name, ignore_errors=True)
    fresh = not (out_dir / "runs").exists() and not (out_dir / "results").exists()
    incremental = cache is not None and cache.keeps_pages(out_dir)
    with _timed("latest and board views"):
        views = board_views(tables)
    with tempfile.TemporaryDirectory(prefix="epbench-site-") as tmp, \
            tempfile.TemporaryDirectory(prefix=".epbench-site-", dir=out_dir.parent) as built, \
            ExitStack() as stack:
        pages: ResultPages | None = None
        docs = Path(tmp) / "docs"
        try:
            if not incremental:
                with _timed("start result-page workers"):
                    # nothing can stand: the workers make the rows and digests of their slices
                    pages = ResultPages(
                        FrameRows.of(tables, cache.shas if cache is not None else None,
                                     cache.context if cache is not None else ""),
                        results_dir, out_dir, Path(tmp) / "shell")
                if cache is not None:
                    with _timed("day digests (while the result-page workers run)"):
                        cache.days = day_digests(tables, cache.context)
            with _timed("pages and vendored Vega"):
                if (sources / "docs").is_dir():
                    shutil.copytree(sources / "docs", docs)
                docs.mkdir(parents=True, exist_ok=True)
                shutil.copytree(sources / "assets", docs / "assets", dirs_exist_ok=True)
                vendor_vega(docs / "assets" / "vendor")
                beside = Forked(*_beside(tables, project, docs, views, workloads,
                                         cache if incremental else None, run_ids, out_dir))
                stack.enter_context(beside)
                nav = write_pages(docs, tables, project, views, entity_pages=beside.result,
                                  workloads=workloads)
                config = _write_config(Path(tmp), docs, Path(built), base_url, nav, sources)
            if mkdocs is None:
                mkdocs = stack.enter_context(mkdocs_waiting())
            mkdocs.send((config, Path(built)))
            with _timed("mkdocs build --strict, beside it the downloads and stale pages"):
                kept = _Kept()
                if pages is None:
                    assert cache is not None
                    cache.days, kept = beside.result()
                    beside.close()
                    todo = [(r, d) for r, d in zip(kept.rows, kept.digests, strict=True)
                            if str(r["run_id"]) not in kept.standing]
                    pages = ResultPages(RowList([r for r, _ in todo], [d for _, d in todo]),
                                        results_dir, out_dir, Path(tmp) / "shell")
                data = out_dir / "data"  # mkdocs builds elsewhere: nothing here is its own
                if write is not None:
                    if cache is not None:
                        write(tables, data, cache_dir=cache_dir, context=cache.context,
                              days=cache.days)
                    else:
                        write(tables, data)
                if not incremental:
                    _write_views(views, tables.runs, data / "view")
                if not fresh:  # a folder without result pages before has none to drop
                    drop_stale(out_dir, set(run_ids), {
                        str(v) for k in ("result_path", "journal_path")
                        if k in tables.runs.columns
                        for v in tables.runs[k].dropna().tolist() if v})
                mkdocs.result()
            with _timed("site installed, shell taken"):
                _install(Path(built), out_dir)
                shell = take_shell(out_dir)
            pages.release(shell)
            with _timed(f"result pages (rest; {len(pages.rows)} rendered, "
                        f"{len(kept.standing)} kept)"):
                pages.wait()
                if cache is not None and kept.standing \
                        and shell_digest(shell) != cache.manifest.shell:
                    _render_again(tables, run_ids, kept, results_dir, out_dir, Path(tmp), shell)
        finally:
            if pages is not None:
                pages.close()
    if cache is not None:
        made = zip([str(r["run_id"]) for r in kept.rows], kept.digests, strict=True) \
            if incremental else zip(run_ids, pages.digests, strict=True)
        cache.save(shell, made, kept)
    return out_dir


def _beside(tables: Tables, project: Path, docs: Path, views: dict[str, pd.DataFrame],
            workloads: list[WorkloadDoc], cache: _PageCache | None, run_ids: list[str],
            out_dir: Path) -> list[Callable[[], Any]]:
    """The site build's work that a forked process does while this one writes the other
    pages (epbench.generator.worker_pool.Forked), in order: the endpoint and
    workload pages into `docs` (the workload ids with one; mkdocs waits for them); then, for
    an incremental build (`cache`), the day digests, the pages that still stand
    (`_still_standing`) and the boards' views in `data/view/`, as (day digests, kept). A full
    build's result-page workers keep the cores busy meanwhile; it writes its views itself.
    The downloads are not written there: polars' thread pool does not survive a fork."""
    root = data_dir("workloads", project)
    jobs: list[Callable[[], Any]] = [
        lambda: write_entity_pages(docs, tables, views, root, workloads)]
    if cache is not None:
        def standing() -> tuple[dict[str, str] | None, _Kept]:
            cache.days = day_digests(tables, cache.context)
            kept = _still_standing(tables, cache, run_ids, out_dir)
            _write_views(views, tables.runs, out_dir / "data" / "view")
            return cache.days, kept

        jobs.append(standing)
    return jobs


_KEPT = ("runs", "results", "data")


def _still_standing(tables: Tables, cache: _PageCache, run_ids: list[str],
                    out_dir: Path) -> _Kept:
    """An incremental build's rows of results whose day changed, their page digests, the run
    ids of settled days and of every page that stands."""
    day_of = [""] * len(run_ids)
    for day, where in part_keys(tables.runs).items():
        for i in where:
            day_of[i] = day
    settled = cache.manifest.standing_days(run_ids, day_of, cache.days, out_dir)
    rest = tables.runs[~_among(run_ids, settled)]
    on_front = frontier_by_run(tables.points, None if not settled else set(
        rest["run_id"].astype(str)))
    rows = [{**r, "frontier": on_front.get(str(r["run_id"]), [])}
            for r in records(page_columns(rest))]
    digests = page_digests(rest, on_front, cache.shas, cache.context)
    return _Kept(rows, digests, settled,
                 settled | cache.manifest.standing(rows, digests, out_dir))


def _among(run_ids: list[str], chosen: set[str]) -> np.ndarray:
    """Which of `run_ids` are in `chosen`, as a mask: a set lookup each (pandas' `isin` on
    Arrow strings took 0.9 s at 100,000 results)."""
    return np.fromiter((r in chosen for r in run_ids), dtype=bool, count=len(run_ids))


def _render_again(tables: Tables, run_ids: list[str], kept: _Kept, results_dir: Path,
                  out_dir: Path, tmp: Path, shell: Shell) -> None:
    """The pages that stood, rendered again into a shell that changed since they were
    (`run_ids`: the `runs` table's, in order)."""
    settled = tables.runs[_among(run_ids, kept.settled)]
    on_front = frontier_by_run(tables.points)
    again_rows = [r for r in kept.rows if str(r["run_id"]) in kept.standing] + [
        {**r, "frontier": on_front.get(str(r["run_id"]), [])}
        for r in records(page_columns(settled))]
    again = ResultPages(RowList(again_rows, [None] * len(again_rows)),
                        results_dir, out_dir, tmp / "shell-again")
    try:
        again.release(shell)
        again.wait()
    finally:
        again.close()


def _install(built: Path, out_dir: Path) -> None:
    """Replace everything in out_dir but result pages, raw results and downloads by mkdocs'
    output."""
    for entry in out_dir.iterdir():
        if entry.name in _KEPT and entry.is_dir() and not entry.is_symlink():
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    for entry in built.iterdir():
        target = out_dir / entry.name
        if entry.name in _KEPT and target.is_dir():
            for inner in entry.iterdir():
                shutil.rmtree(target / inner.name, ignore_errors=True)
                shutil.move(str(inner), str(target / inner.name))
        else:
            shutil.move(str(entry), str(target))


@contextmanager
def _timed(what: str) -> Iterator[None]:
    """Logs how long a step of the build took (INFO; bench/site_scale.py prints them)."""
    start = time.perf_counter()
    yield
    log.info("site build: %s took %.2f s", what, time.perf_counter() - start)


def _write_config(tmp: Path, docs: Path, out_dir: Path, base_url: str, nav: list[Any],
                  sources: Path) -> Path:
    config = yaml.safe_load((sources / "mkdocs.yml").read_text(encoding="utf-8"))
    config["docs_dir"] = str(docs)
    config["site_dir"] = str(out_dir)
    config["nav"] = nav
    config["strict"] = True
    config["not_in_nav"] = f"/{SHELL_DIR}.md\n/endpoints/*.md\n/workloads/*.md\n"
    if base_url:
        config["site_url"] = base_url if base_url.endswith("/") else base_url + "/"
    config.setdefault("theme", {})["custom_dir"] = str(sources / "overrides")
    config.setdefault("extra", {})["epb_csp"] = CSP
    path = tmp / "mkdocs.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def _mkdocs_and_csp(config_path: Path, built: Path) -> None:
    """mkdocs' build into `built`, its pages' Content-Security-Policy completed (in a forked
    process while the build writes the downloads)."""
    _run_mkdocs(config_path)
    secure_pages(built)


def _run_mkdocs(config_path: Path) -> None:
    """`mkdocs build --strict` through mkdocs' Python API; warnings fail the build."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort, ConfigurationError

    mk_log = logging.getLogger("mkdocs")
    level = mk_log.level
    warnings = _Collect()
    mk_log.addHandler(warnings)
    mk_log.setLevel(logging.WARNING)
    try:
        cfg = load_config(config_file=str(config_path), strict=True)
        build(cfg)
    except (Abort, ConfigurationError) as exc:
        detail = "; ".join(warnings.messages[:5])
        raise InputError(f"mkdocs build --strict failed: {exc} {detail}".strip()) from None
    finally:
        mk_log.removeHandler(warnings)
        mk_log.setLevel(level)


class _Collect(logging.Handler):
    """Keeps mkdocs' warnings, to say which one failed the strict build."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())



def _write_views(views: dict[str, pd.DataFrame], runs: pd.DataFrame, folder: Path) -> None:
    """The boards' views (`epbench.generator.latest.board_views`) and each History series."""
    shutil.rmtree(folder, ignore_errors=True)  # a series gone since the last build goes too
    (folder / "history").mkdir(parents=True, exist_ok=True)
    for name, frame in views.items():
        _write_view(folder / f"{name}.json",
                    view_table(frame, VIEW_COLUMNS.get(name, list(frame.columns))))
    for file, frame in series_views(runs).items():
        _write_view(folder / "history" / file, view_table(frame, VIEW_COLUMNS["history"]))


def _write_view(path: Path, view: dict[str, Any]) -> None:
    # orjson: a fraction of json's time at 100,000 rows (view_table leaves no NaN); json for
    # what it does not take (an integer past 64 bits)
    try:
        data = orjson.dumps(view, option=orjson.OPT_SERIALIZE_NUMPY)
    except TypeError:
        data = json.dumps(view, ensure_ascii=False, separators=(",", ":"),
                          allow_nan=False).encode("utf-8")
    path.write_bytes(data)
