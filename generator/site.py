"""`epbench build`: results, workloads and endpoint files in, one static site out.

The flow, in order:

1. tables (`generator.tables`) from every valid result, written to `data/` as JSON and CSV;
2. Markdown pages rendered with Jinja (autoescaped) into a temporary mkdocs docs folder: home,
   the four leaderboards, workloads catalogue, methodology, schema reference, the guides that
   exist, and one *shell* page;
3. `mkdocs build --strict` with mkdocs-material;
4. the Content-Security-Policy of every built page gets the hashes of its inline scripts;
5. one page per result: the result's fragment rendered with Jinja into the shell page mkdocs
   built (same theme, header, search and palette), which is then removed; raw result JSON
   copied beside it as a download.

Per-result pages bypass mkdocs on purpose: 10,000 Markdown pages through mkdocs would take
minutes, while one compiled Jinja template and a string join take seconds (SITE_DESIGN.md).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import logging
import multiprocessing
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from markupsafe import escape

from epcore.errors import InputError
from epcore.paths import data_dir, schemas_dir, site_sources_dir
from generator import charts, docs_gen
from generator.render import environment, frontier_by_run, render, result_context
from generator.vendor import vendor_vega

log = logging.getLogger(__name__)

SHELL_TITLE = "EPBSHELLTITLE"
SHELL_CONTENT = "EPBSHELLCONTENT"
SHELL_DIR = "runs/_shell"
HASHES_TOKEN = "EPB-SCRIPT-HASHES"
CSP = (
    "default-src 'self'; "
    f"script-src 'self' {HASHES_TOKEN}; "
    "style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; "
    "font-src 'self'; "
    "connect-src 'self'; "
    "worker-src 'self' blob:; "
    "object-src 'none'; "
    "base-uri 'self'; "
    "form-action 'self'"
)
SPEED_FLOOR = 20.0  # tokens/s per user for "most throughput at a given per-user speed"
RUN_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{7,63}$")

GUIDES = [
    ("How to submit", "guides/submit.md"),
    ("Continuous benchmarking", "guides/continuous.md"),
    ("Add an agentic workload", "guides/agentic-workload.md"),
]

# Columns of the compact per-page view tables (data/view/<name>.json). Filters need the
# identity columns; the rest are what tables and charts show.
_FILTER_COLUMNS = ["run_id", "endpoint_id", "provider", "model", "division", "hardware",
                   "region", "client_region", "workload_id", "date", "submitter",
                   "disclosure_score"]
VIEW_COLUMNS: dict[str, list[str]] = {
    "runs": [*_FILTER_COLUMNS, "model_version", "engine", "workload_kind", "pattern", "flags",
             "rankable", "quick", "max_system_tps", "tps_per_user_at_max_tps",
             "best_tps_per_user", "ttft_p90_ms_best", "error_rate", "usd_per_mtok_output",
             "blended_usd_per_mtok", "output_tokens_per_usd", "usd_per_1k_requests",
             "usd_per_mtok_output_today", "success_rate", "pass_hat_1",
             "usd_per_successful_task", "decision_ms_p90"],
    "points": ["run_id", "endpoint_id", "workload_id", "point", "concurrency", "rate",
               "tps_per_user", "system_tps", "ttft_ms_p90", "usd_per_mtok_output",
               "on_pareto"],
    "agentic": [*_FILTER_COLUMNS, "success_rate", "success_ci_low", "success_ci_high",
                "pass_hat_1", "decision_ms_p90", "correct_call_rate", "usd_per_task",
                "usd_per_successful_task", "retry_spend_share",
                *(f"retry_{tag}_{m}" for tag in ("productive", "repair", "recovery", "transport")
                  for m in ("requests", "tokens", "seconds", "usd"))],
}


@dataclass(frozen=True)
class Column:
    """A column of a leaderboard table: row key, header, and how it sorts and shows."""

    key: str
    label: str
    kind: str = "num"  # num, text, link, list

    def to_config(self) -> dict[str, str]:
        return {"key": self.key, "label": self.label, "kind": self.kind}


_IDENT = [Column("endpoint_id", "endpoint", "link"), Column("provider", "provider", "text"),
          Column("model", "model", "text"), Column("division", "division", "text")]

BOARDS: dict[str, dict[str, Any]] = {
    "serving": {
        "title": "Serving leaderboard",
        "intro": [
            "One row per serving result. Each result is a sweep of measurement points; the "
            "row shows its best throughput, the per-user speed there, its best TTFT p90 and "
            "its cost. Filter, sort by any column, and share the link: the address holds the "
            "view.",
        ],
        "source": "runs",
        "where": {"workload_kind": "serving"},
        "sort": ["max_system_tps", "desc"],
        "columns": [*_IDENT, Column("region", "region", "text"),
                    Column("client_region", "client region", "text"),
                    Column("workload_id", "workload", "text"), Column("date", "date", "text"),
                    Column("max_system_tps", "max system_tps"),
                    Column("tps_per_user_at_max_tps", "tps_per_user at max"),
                    Column("best_tps_per_user", "best tps_per_user"),
                    Column("ttft_p90_ms_best", "best TTFT p90 ms"),
                    Column("error_rate", "error rate"),
                    Column("usd_per_mtok_output", "USD/Mtok output"),
                    Column("disclosure_score", "disclosure"),
                    Column("flags", "flags", "list")],
        "downloads": ["runs", "points"],
    },
    "agentic": {
        "title": "Agentic leaderboard",
        "intro": [
            "One row per agentic result: tool-calling tasks played for n trials each. Success "
            "counts endpoint errors against the endpoint; the retry columns say what was spent "
            "repairing invalid calls, recovering from tool faults and retrying transport "
            "errors.",
        ],
        "source": "agentic",
        "where": {},
        "sort": ["success_rate", "desc"],
        "columns": [*_IDENT, Column("workload_id", "workload", "text"),
                    Column("date", "date", "text"), Column("success_rate", "success rate"),
                    Column("success_ci_low", "95% low"), Column("success_ci_high", "95% high"),
                    Column("pass_hat_1", "pass^1"), Column("decision_ms_p90", "decision p90 ms"),
                    Column("correct_call_rate", "correct calls"),
                    Column("usd_per_task", "USD/task"),
                    Column("usd_per_successful_task", "USD/successful task"),
                    Column("retry_spend_share", "retry spend share"),
                    Column("disclosure_score", "disclosure")],
        "downloads": ["agentic"],
    },
    "cost": {
        "title": "Cost",
        "intro": [
            "What the measured work cost, with the price card each result ran under (pinned "
            "at run time) and re-priced with today's card. Serviced endpoints are priced per "
            "token; self-hosted ones per hour of the deployment.",
        ],
        "source": "runs",
        "where": {},
        "sort": ["usd_per_mtok_output", "asc"],
        "columns": [*_IDENT, Column("workload_id", "workload", "text"),
                    Column("date", "date", "text"),
                    Column("usd_per_mtok_output", "USD/Mtok output"),
                    Column("usd_per_mtok_output_today", "USD/Mtok output today"),
                    Column("blended_usd_per_mtok", "blended 3:1 USD/Mtok"),
                    Column("output_tokens_per_usd", "output tokens per USD"),
                    Column("usd_per_1k_requests", "USD per 1k requests"),
                    Column("usd_per_successful_task", "USD/successful task")],
        "downloads": ["runs", "endpoints"],
    },
    "history": {
        "title": "History",
        "intro": [
            "Every result over time, per endpoint and workload. Pick the metric above the "
            "chart; narrow to one endpoint to see how it changed.",
        ],
        "source": "runs",
        "where": {},
        "sort": ["date", "desc"],
        "columns": [Column("date", "date", "text"), *_IDENT,
                    Column("workload_id", "workload", "text"),
                    Column("max_system_tps", "max system_tps"),
                    Column("ttft_p90_ms_best", "best TTFT p90 ms"),
                    Column("usd_per_mtok_output", "USD/Mtok output"),
                    Column("success_rate", "success rate")],
        "metrics": [("max_system_tps", "max system_tps (tokens/s)"),
                    ("ttft_p90_ms_best", "best TTFT p90 (ms)"),
                    ("usd_per_mtok_output", "USD per million output tokens"),
                    ("success_rate", "agentic success rate")],
        "downloads": ["history", "runs"],
    },
}


class _TablesLike:  # the shape of generator.tables.Tables that this module reads
    runs: pd.DataFrame
    points: pd.DataFrame
    agentic: pd.DataFrame
    endpoints: pd.DataFrame
    history: pd.DataFrame


def build_site(results_dir: Path, out_dir: Path, project: Path, base_url: str) -> Path:
    """Build the whole site into `out_dir` and return it (the folder holding index.html)."""
    from generator.tables import build_tables, write_tables

    tables = build_tables(results_dir, project)
    return build_site_from_tables(tables, results_dir, out_dir, project, base_url,
                                  write=write_tables)


def build_site_from_tables(tables: Any, results_dir: Path, out_dir: Path, project: Path,
                           base_url: str,
                           write: Callable[[Any, Path], list[Path]] | None = None) -> Path:
    """The site from already-built tables (tests hand in small ones)."""
    out_dir = out_dir.resolve()
    sources = site_sources_dir()
    with tempfile.TemporaryDirectory(prefix="epbench-site-") as tmp:
        # Result pages render in worker processes while mkdocs builds the rest; they write
        # only once the shell page exists (mkdocs empties out_dir when it starts).
        with _timed("start result-page workers"):
            on_front = frontier_by_run(tables.points)
            rows = [{**r, "frontier": on_front.get(str(r["run_id"]), [])}
                    for r in _records(tables.runs)]
            pages = ResultPages(rows, results_dir, out_dir,
                                Path(tmp) / "shell")
        try:
            docs = Path(tmp) / "docs"
            with _timed("pages and vendored Vega"):
                if (sources / "docs").is_dir():
                    shutil.copytree(sources / "docs", docs)
                docs.mkdir(parents=True, exist_ok=True)
                shutil.copytree(sources / "assets", docs / "assets", dirs_exist_ok=True)
                vendor_vega(docs / "assets" / "vendor")
                nav = _write_pages(docs, tables, project)
                config = _write_config(Path(tmp), docs, out_dir, base_url, nav, sources)
            with _timed("mkdocs build --strict"):
                _run_mkdocs(config)
            with _timed("CSP hashes and shell"):
                _secure_pages(out_dir)
                pages.release(_take_shell(out_dir))
            data = out_dir / "data"
            with _timed("tables to data/"):
                if write is not None:
                    write(tables, data)
                _write_views(tables, data / "view")
            with _timed("result pages (rest)"):
                pages.wait()
        finally:
            pages.close()
    return out_dir


@contextmanager
def _timed(what: str) -> Iterator[None]:
    """Logs how long a step of the build took (INFO; bench/site_scale.py prints them)."""
    start = time.perf_counter()
    yield
    log.info("site build: %s took %.2f s", what, time.perf_counter() - start)


# ---------------------------------------------------------------------------------- pages

def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _board_config(name: str, spec: dict[str, Any], root: str, frame: pd.DataFrame) -> dict:
    chart_specs = charts.charts_for(name)
    needed = {spec["source"], *(c.source for c in chart_specs)}
    export = [c for c in VIEW_COLUMNS[spec["source"]] if c in frame.columns or frame.empty]
    return {
        "page": name,
        "root": root,
        "sources": {s: f"{root}data/view/{s}.json" for s in sorted(needed)},
        "table": {
            "source": spec["source"],
            "where": spec["where"],
            "sort": spec["sort"],
            "caption": spec["title"] + " (filtered rows; click a header to sort)",
            "columns": [c.to_config() for c in spec["columns"]],
            "export_columns": export,
        },
        "charts": [c.to_config() for c in chart_specs],
        "metrics": [{"key": k, "label": label} for k, label in spec.get("metrics", [])],
    }


def _write_pages(docs: Path, tables: Any, project: Path) -> list[Any]:
    """Render every generated page into `docs`; return the mkdocs navigation."""
    _write(docs / "index.md", render("home.md.j2", **home_context(tables)))
    for name, spec in BOARDS.items():
        extra = ""
        if name == "cost":
            keys = ["endpoint_id", "provider", "model", "division", "input_usd_per_mtok",
                    "output_usd_per_mtok", "cached_input_usd_per_mtok", "blended_usd_per_mtok",
                    "usd_per_hour", "effective_date", "source_url"]
            cards = [{k: row.get(k) for k in keys} for row in _records(tables.endpoints)]
            for card in cards:  # a link only to a web page, whatever the file says
                if not str(card["source_url"] or "").startswith(("https://", "http://")):
                    card["source_url"] = None
            extra = render("price_cards.html.j2", rows=cards)
        page = render(
            "board.md.j2",
            title=spec["title"],
            intro=spec["intro"],
            page=name,
            root="../",
            extra_html=extra,
            downloads=[{"name": t, "label": t} for t in spec["downloads"]],
            board=_board_config(name, spec, "../", getattr(tables, spec["source"])),
        )
        _write(docs / f"{name}.md", page)
    workloads_root = data_dir("workloads", project)
    _write(docs / "workloads.md", docs_gen.workloads_catalogue(workloads_root))
    tables_doc = project / "docs" / "tables.md"
    _write(docs / "methodology.md", docs_gen.methodology(schemas_dir(), tables_doc))
    _write(docs / "schemas.md", docs_gen.schema_reference(schemas_dir()))
    _write(docs / SHELL_DIR.replace("/_shell", "/_shell.md"), (
        f"---\ntitle: {SHELL_TITLE}\nsearch:\n  exclude: true\nhide:\n  - toc\n---\n\n"
        f"{SHELL_CONTENT}\n"
    ))
    guides = [{title: path} for title, path in GUIDES if (docs / path).is_file()]
    known = {path for _, path in GUIDES}
    for extra_guide in sorted((docs / "guides").glob("*.md")) if (docs / "guides").is_dir() else []:
        rel = f"guides/{extra_guide.name}"
        if rel not in known:
            guides.append({extra_guide.stem.replace("-", " ").capitalize(): rel})
    nav: list[Any] = [
        {"Home": "index.md"},
        {"Leaderboards": [{"Serving": "serving.md"}, {"Agentic": "agentic.md"},
                          {"Cost": "cost.md"}, {"History": "history.md"}]},
        {"Workloads": "workloads.md"},
        {"Methodology": "methodology.md"},
    ]
    if guides:
        nav.append({"Guides": guides})
    nav.append({"Schema reference": "schemas.md"})
    return nav


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    columns = [str(c) for c in frame.columns]
    return [dict(zip(columns, row, strict=True)) for row in plain_rows(frame)]


def _write_config(tmp: Path, docs: Path, out_dir: Path, base_url: str, nav: list[Any],
                  sources: Path) -> Path:
    config = yaml.safe_load((sources / "mkdocs.yml").read_text(encoding="utf-8"))
    config["docs_dir"] = str(docs)
    config["site_dir"] = str(out_dir)
    config["nav"] = nav
    config["strict"] = True
    config["not_in_nav"] = f"/{SHELL_DIR}.md\n"
    if base_url:
        config["site_url"] = base_url if base_url.endswith("/") else base_url + "/"
    config.setdefault("theme", {})["custom_dir"] = str(sources / "overrides")
    config.setdefault("extra", {})["epb_csp"] = CSP
    path = tmp / "mkdocs.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


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


# ---------------------------------------------------------------------- security headers

_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)


def script_hashes(html: str) -> list[str]:
    """CSP sources for every inline script of a page ('sha256-...')."""
    hashes = set()
    for match in _INLINE_SCRIPT.finditer(html):
        digest = hashlib.sha256(match.group(1).encode("utf-8")).digest()
        hashes.add(f"'sha256-{base64.b64encode(digest).decode('ascii')}'")
    return sorted(hashes)


def secure_html(html: str) -> str:
    """Put the hashes of the page's own inline scripts into its CSP meta tag."""
    return html.replace(HASHES_TOKEN, " ".join(script_hashes(html)))


def _secure_pages(out_dir: Path) -> None:
    for path in out_dir.rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        if HASHES_TOKEN in text:
            path.write_text(secure_html(text), encoding="utf-8")


# --------------------------------------------------------------------------- data views

def plain_rows(frame: pd.DataFrame) -> list[list[Any]]:
    """Rows as lists of plain JSON values (NaN/NA -> None, numpy scalars -> Python), in one
    vectorised pass: per-cell conversion costs seconds at 10,000 results."""
    if frame.empty:
        return []
    values = frame.astype(object).where(frame.notna(), None).to_numpy().tolist()
    return [[_finite(v) for v in row] for row in values] if _has_inf(frame) else values


def _has_inf(frame: pd.DataFrame) -> bool:
    numeric = frame.select_dtypes("number")
    return bool(numeric.size) and bool((numeric.abs() == float("inf")).to_numpy().any())


def _finite(value: Any) -> Any:
    return None if isinstance(value, float) and value in (float("inf"), float("-inf")) else value


def view_table(frame: pd.DataFrame, columns: list[str]) -> dict[str, Any]:
    """A table as compact JSON for the page: column names once, then rows as arrays."""
    present = [c for c in columns if c in frame.columns]
    return {"columns": present, "rows": plain_rows(frame[present]) if present else []}


def _write_views(tables: Any, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, columns in VIEW_COLUMNS.items():
        view = view_table(getattr(tables, name), columns)
        (folder / f"{name}.json").write_text(
            json.dumps(view, ensure_ascii=False, separators=(",", ":"), allow_nan=False),
            encoding="utf-8",
        )


# --------------------------------------------------------------------------- home page

def _pick(frame: pd.DataFrame, column: str, smallest: bool) -> pd.Series | None:
    usable = frame[frame[column].notna()] if column in frame.columns else frame.iloc[0:0]
    if usable.empty:
        return None
    values = pd.to_numeric(usable[column])
    return usable.loc[values.idxmin() if smallest else values.idxmax()]


def home_context(tables: Any) -> dict[str, Any]:
    """Newest results, counts and the best endpoint per question for the home page."""
    runs: pd.DataFrame = tables.runs
    points: pd.DataFrame = tables.points
    agentic: pd.DataFrame = tables.agentic
    note = ""
    rankable = runs[runs["rankable"].fillna(False).astype(bool)] if not runs.empty else runs
    pool = rankable
    if rankable.empty and not runs.empty:
        pool = runs
        note = ("No rankable result yet: these answers come from emulated results, which "
                "show what is measured, not a real endpoint.")
    run_ids = set(pool["run_id"]) if not pool.empty else set()
    by_id = {r["run_id"]: r for r in _records(pool)} if not pool.empty else {}

    def row_of(series: pd.Series | None) -> dict[str, Any] | None:
        return None if series is None else by_id.get(series["run_id"])

    best: list[dict[str, Any]] = []
    serving = pool[pool["workload_kind"] == "serving"] if not pool.empty else pool
    fastest = _pick(serving, "ttft_p90_ms_best", smallest=True)
    best.append({"question": "Fastest first token (lowest TTFT p90)", "row": row_of(fastest),
                 "answer": "" if fastest is None
                 else f"{_g(fastest['ttft_p90_ms_best'])} ms TTFT p90"})
    fast_points = points[points["run_id"].isin(run_ids)] if not points.empty else points
    if not fast_points.empty:
        fast_points = fast_points[pd.to_numeric(fast_points["tps_per_user"]) >= SPEED_FLOOR]
    top = _pick(fast_points, "system_tps", smallest=False)
    best.append({
        "question": f"Most throughput with every user at {SPEED_FLOOR:g} tokens/s or faster",
        "row": row_of(top),
        "answer": "" if top is None else
        f"{_g(top['system_tps'])} tokens/s at {_g(top['tps_per_user'])} tokens/s per user "
        f"(point {top['point']})",
    })
    cheap = _pick(serving, "usd_per_mtok_output", smallest=True)
    best.append({"question": "Cheapest per million output tokens", "row": row_of(cheap),
                 "answer": "" if cheap is None
                 else f"${_g(cheap['usd_per_mtok_output'])} per million output tokens"})
    ag = agentic[agentic["run_id"].isin(run_ids)] if not agentic.empty else agentic
    if not ag.empty:
        ag = ag[pd.to_numeric(ag["usd_per_successful_task"]) > 0]
    value = _pick(ag, "usd_per_successful_task", smallest=True)
    best.append({"question": "Best agentic success per dollar", "row": row_of(value),
                 "answer": "" if value is None else
                 f"${_g(value['usd_per_successful_task'])} per successful task "
                 f"(success rate {_g(value['success_rate'])})"})
    newest = _records(runs.sort_values(["date", "run_id"], ascending=[False, True]).head(10)) \
        if not runs.empty else []
    counts = {
        "runs": len(runs),
        "serving": int((runs["workload_kind"] == "serving").sum()) if not runs.empty else 0,
        "agentic": int((runs["workload_kind"] == "agentic").sum()) if not runs.empty else 0,
        "emulated": int((runs["division"] == "emulated").sum()) if not runs.empty else 0,
        "endpoints": int(runs["endpoint_id"].nunique()) if not runs.empty else 0,
    }
    return {"best": best, "best_note": note, "newest": newest, "counts": counts}


def _g(value: Any) -> str:
    return f"{float(value):.4g}"


# ------------------------------------------------------------------------- result pages

@dataclass(frozen=True)
class Shell:
    """The built shell page, split around its content marker."""

    head: str
    tail: str


def _take_shell(out_dir: Path) -> Shell:
    page = out_dir / SHELL_DIR / "index.html"
    text = page.read_text(encoding="utf-8")
    marker = f"<p>{SHELL_CONTENT}</p>"
    if marker not in text:
        raise RuntimeError("the shell page lost its content marker")  # a theme change; a bug
    head, tail = text.split(marker, 1)
    shutil.rmtree(out_dir / SHELL_DIR)
    _drop_from_sitemap(out_dir)
    return Shell(head, tail)


def _drop_from_sitemap(out_dir: Path) -> None:
    sitemap = out_dir / "sitemap.xml"
    if not sitemap.is_file():
        return
    text = re.sub(r"\s*<url>\s*<loc>[^<]*runs/_shell/</loc>.*?</url>", "",
                  sitemap.read_text(encoding="utf-8"), flags=re.S)
    sitemap.write_text(text, encoding="utf-8")
    with gzip.open(out_dir / "sitemap.xml.gz", "wb") as handle:
        handle.write(text.encode("utf-8"))


class ResultPages:
    """Renders one page per result in worker processes (fork), started before mkdocs runs.

    Each worker renders its chunk's page bodies, then waits for the shell file that
    `release` writes once mkdocs is done, then writes pages and raw JSON copies. Where fork is
    missing, or for a handful of results, everything happens in `release`, in this process.
    """

    def __init__(self, rows: list[dict[str, Any]], results_dir: Path, out_dir: Path,
                 shell_file: Path) -> None:
        self.rows, self.results_dir, self.out_dir = rows, results_dir, out_dir
        self.shell_file = shell_file
        self.written = 0
        self._futures: list[Any] = []
        self._pool: ProcessPoolExecutor | None = None
        workers = min(os.cpu_count() or 1, max(1, len(rows) // 200))
        if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
            size = -(-len(rows) // workers)
            context = multiprocessing.get_context("fork")
            self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)
            self._futures = [
                self._pool.submit(_render_and_write, rows[i:i + size], results_dir, out_dir,
                                  shell_file)
                for i in range(0, len(rows), size)
            ]

    def release(self, shell: Shell) -> None:
        """Hand the built shell to the workers (or render everything here without them)."""
        if self._pool is None:
            bodies = _render_bodies(self.rows, self.results_dir)
            self.written = _write_pages_out(bodies, self.out_dir, shell)
            return
        tmp = self.shell_file.with_suffix(".tmp")
        tmp.write_text(json.dumps({"head": shell.head, "tail": shell.tail}), encoding="utf-8")
        tmp.replace(self.shell_file)  # atomic: a worker never reads half a shell

    def wait(self) -> int:
        """Wait for the workers; the number of result pages written."""
        if self._futures:
            self.written = sum(f.result() for f in self._futures)
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
    title: str
    html: str


def _render_bodies(rows: list[dict[str, Any]], results_dir: Path) -> list[_Body]:
    template = environment().get_template("result.html.j2")
    bodies = []
    for row in rows:
        run_id = str(row.get("run_id", ""))
        rel = str(row.get("result_path") or "")
        if not RUN_ID.match(run_id) or not rel.startswith("results/") or ".." in rel:
            log.warning("skipping a row with an unexpected run id or path: %r", run_id)
            continue
        raw = (results_dir / rel.removeprefix("results/")).read_bytes()
        # The file passed the safe loader and the schema in generator.tables moments ago;
        # plain json here halves the time of 10,000 pages.
        context = result_context(json.loads(raw), row, root="../../")
        bodies.append(_Body(run_id, rel, raw, str(escape(context["title"])),
                            template.render(**context)))
    return bodies


def _write_pages_out(bodies: list[_Body], out_dir: Path, shell: Shell) -> int:
    made: set[Path] = set()
    for body in bodies:
        target = out_dir / body.rel
        if target.parent not in made:
            target.parent.mkdir(parents=True, exist_ok=True)
            made.add(target.parent)
        target.write_bytes(body.raw)
        head = shell.head.replace(SHELL_TITLE, body.title).replace(
            f"{SHELL_DIR}/", f"runs/{body.run_id}/")
        page = out_dir / "runs" / body.run_id / "index.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(head + body.html + shell.tail.replace(SHELL_TITLE, body.title),
                        encoding="utf-8")
    return len(bodies)


def _render_and_write(rows: list[dict[str, Any]], results_dir: Path, out_dir: Path,
                      shell_file: Path) -> int:
    """A worker: render the chunk, wait for the shell (at most ten minutes), write it out."""
    bodies = _render_bodies(rows, results_dir)
    deadline = time.monotonic() + 600
    while not shell_file.is_file():
        if shell_file.with_suffix(".abort").is_file():
            return 0
        if time.monotonic() > deadline:
            raise RuntimeError("the site build never produced its shell page")
        time.sleep(0.05)
    shell = json.loads(shell_file.read_text(encoding="utf-8"))
    return _write_pages_out(bodies, out_dir, Shell(shell["head"], shell["tail"]))
