"""Aggregation: every valid result into tidy pandas tables, written as JSON and CSV.

The tables are the site's data and the public download (epbench.generator.downloads writes them);
docs/tables.md lists every column.
Rejected files never reach them (the validation report says why); a point rejected by a
`reject-point` finding is dropped from its result; flagged rows carry their check ids in
`flags`. Costs come from epbench.generator.cost, on the price card pinned in the result ("at run
time") and on the card in the current endpoints/<id>.yaml ("today").
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from operator import itemgetter
from pathlib import Path
from typing import Any

import pandas as pd

from epbench.core import evidence
from epbench.core.documents import DocumentError, load_document
from epbench.core.findings import Finding
from epbench.core.metrics.pareto import frontier
from epbench.core.paths import data_dir
from epbench.core.pricing import card_on
from epbench.core.provenance import self_reported
from epbench.core.rankable import rankability
from epbench.core.schema import check_schema, kind_of
from epbench.generator import agentic_suite, columns, cost, quality
from epbench.generator.checks import rejected_points
from epbench.generator.checks.date import run_date
from epbench.generator.checks.workload.sha import WorkloadIndex
from epbench.generator.confirmation import confirmations
from epbench.generator.disclosure import disclosure
from epbench.generator.prompt_cache import cache_figures
from epbench.generator.report import Report, status_for
from epbench.generator.row_frames import frames
from epbench.generator.validate import Checked, FileCheck, files_to_check, report_on
from epbench.generator.worker_pool import each_file

IDENTITY = [spec.name for spec in columns.IDENTITY]
TARGET_SPEED = columns.TARGET_SPEED
# The tables' columns in order: declared, with how each value is taken, in
# epbench.generator.columns.
RUN_COLUMNS = columns.names("runs")
POINT_COLUMNS = columns.names("points")
AGENTIC_COLUMNS = columns.names("agentic")
ENDPOINT_COLUMNS = columns.names("endpoints")
HISTORY_COLUMNS = columns.names("history")
TABLE_NAMES = ("runs", "points", "agentic", "endpoints", "history")
TABLE_COLUMNS = {"runs": RUN_COLUMNS, "points": POINT_COLUMNS, "agentic": AGENTIC_COLUMNS}
"""The tables made from results' rows, with their columns in row order."""


@dataclass
class Tables:
    """The site's tables, and the validation report of what was excluded and why."""

    runs: pd.DataFrame
    points: pd.DataFrame
    agentic: pd.DataFrame
    endpoints: pd.DataFrame
    history: pd.DataFrame
    report: Report = field(default_factory=Report)
    sources: dict[str, str] = field(default_factory=dict)
    """`result_path` -> sha256 of the file, for the files an incremental build knows."""


_TODAY: dict[tuple[str, str, int], cost.Card | None] = {}


def _card_today(project: Path, endpoint_id: str, build: int) -> cost.Card | None:
    """Today's card for an endpoint, read once per build and process."""
    key = (str(project), endpoint_id, build)
    if key not in _TODAY:
        if len(_TODAY) > 10_000:
            _TODAY.clear()
        _TODAY[key] = cost.todays_card(project, endpoint_id)
    return _TODAY[key]


_LIMITS: dict[tuple[str, str, str], dict[str, Any]] = {}


def ranking_limits(project: Path, kind: str, workload_id: str) -> dict[str, Any]:
    """The workload file's `ranking` block (read once per process), or {}."""
    key = (str(project), kind, workload_id)
    if key not in _LIMITS:
        path = WorkloadIndex(project).file_for(workload_id, kind)
        block: Any = None
        if path is not None:
            try:
                doc = load_document(path)
            except DocumentError:
                doc = None
            block = doc.get("ranking") if isinstance(doc, dict) else None
        _LIMITS[key] = block if isinstance(block, dict) else {}
    return _LIMITS[key]


@dataclass(frozen=True)
class Rows:
    """The table rows one valid result contributes, each a list in its table's column order
    (`TABLE_COLUMNS`), as the frames are built from them and the build cache keeps them."""

    runs: list[list[Any]]
    points: list[list[Any]]
    agentic: list[list[Any]]


@dataclass(frozen=True)
class RowMaker:
    """Builds one result's rows; picklable, so it runs in the validation workers."""

    results_dir: Path
    project: Path
    build: int = field(default_factory=time.monotonic_ns)

    def __call__(self, item: Checked) -> Rows | None:
        if item.kind != "result" or item.document is None:
            return None
        builder = _Builder(self.results_dir, self.project, self.build)
        builder.add(item)
        return Rows(builder.runs, builder.points, builder.agentic)


@dataclass
class Derived:
    """One checked file (its document dropped) and the rows it gives the tables: None for a
    file that is not a result, one the checks rejected, or one whose rows could not be made."""

    checked: Checked
    rows: Rows | None


@dataclass(frozen=True)
class RowCheck:
    """A file checked (`validate.FileCheck`) and, when it is a result the checks kept, its
    rows made in the same process: in a validation worker only the outcome and the rows travel
    back, not the document, and the rows are made on every core."""

    check: FileCheck
    make: RowMaker

    def __call__(self, path: Path) -> Derived:
        item = self.check(path)
        rows = None
        if item.document is not None and status_for(item.findings) != "rejected":
            try:
                rows = self.make(item)
            except Exception as exc:  # a bug in making one result's rows must not stop the others
                item.findings.append(Finding(
                    item.display, "", "internal.error", "reject",
                    f"aggregating this file failed ({type(exc).__name__})",
                    "open an issue with this file attached",
                ))
        item.document = None
        return Derived(item, rows)


def row_check(results_dir: Path, project: Path) -> RowCheck:
    """The task of a build's workers over the result files under `results_dir`."""
    return RowCheck(FileCheck(None, datetime.now(UTC)), RowMaker(results_dir, project))


class _Builder:
    def __init__(self, results_dir: Path, project: Path, build: int = 0) -> None:
        self.results_dir = results_dir
        self.project = project
        self.build = build or time.monotonic_ns()
        # each row a list in its table's column order (TABLE_COLUMNS), as `Rows` keeps them
        self.runs: list[list[Any]] = []
        self.points: list[list[Any]] = []
        self.agentic: list[list[Any]] = []

    def card_today(self, endpoint_id: str) -> cost.Card | None:
        return _card_today(self.project, endpoint_id, self.build)

    def result_path(self, path: Path) -> str:
        """results/<path inside the results folder> (the path as given when outside it):
        Path.relative_to on the absolute paths, done on the strings (POSIX separators)."""
        full = os.path.abspath(path)
        root = os.path.abspath(self.results_dir)
        if full == root:
            return "results/."
        inside = root if root.endswith(os.sep) else root + os.sep
        if os.sep != "/" or not full.startswith(inside):
            return _result_path_slow(path, self.results_dir)
        return f"results/{full[len(inside):]}"

    def journal_path(self, path: Path, doc: dict[str, Any]) -> str | None:
        """The journal beside a result that pins one (validation has checked it is there and
        hashes to the pin), as the site copies it; None for a result without evidence (and for
        an imported one, whose journal nothing checked)."""
        if not doc.get("evidence") or (doc.get("source") or {}).get("format",
                                                                     "epbench") != "epbench":
            return None
        return self.result_path(path.with_name(path.stem + evidence.SUFFIX))

    def add(self, item: Checked) -> None:
        doc: dict[str, Any] = item.document
        endpoint = doc["endpoint"]
        card: cost.Card | None = endpoint["pricing"] if price_known(doc) else None
        today = self.card_today(endpoint["id"]) if card is not None else None
        dropped = rejected_points(item.findings)
        kept = [p for i, p in enumerate(doc["points"]) if i not in dropped]
        workload = doc["workload"]
        tier = item.provenance or self_reported("no attestation checked")
        reasons = rankability(doc, ranking_limits(self.project, workload["kind"], workload["id"]),
                              tier)
        result = columns.Result(
            doc=doc, endpoint=endpoint, card=card, today=today, kept=kept,
            flags=sorted({f.check for f in item.findings
                          if f.severity in ("flag", "reject-point")}),
            day=run_date(doc), score=disclosure(doc), tier=tier, reasons=reasons,
            result_path=self.result_path(item.path),
            journal_path=self.journal_path(item.path, doc), sweep=_NO_SWEEP)
        identity = [get(result) for _, get in _IDENTITY]
        section = None
        if kept:
            self._serving(result)
        if "agentic" in doc:
            section = self._section(result)
        run = identity + [get(result) for _, get in _RUN_PARTS[columns.RESULT]]
        if kept:
            run += [get(result) for _, get in _RUN_PARTS[columns.SERVING]]
        if section is not None:
            run += [get(result) for _, get in _RUN_PARTS[columns.SECTION]]
            own = [get(section) for _, get in _AGENTIC_OWN]
            self.agentic.append(_AGENTIC_ROW.row(identity + own))
        if kept:
            self._points(result, identity)
        self.runs.append(_RUN_ROWS[bool(kept), section is not None].row(run))

    def _serving(self, r: columns.Result) -> None:
        """The figures of the serving sweep that several columns share."""
        kept, card, today = r.kept, r.card, r.today
        r.top = max(range(len(kept)), key=lambda i: kept[i]["system_tps"])
        at_run, r.each = cost.serving_costs(card, kept) if card else (_NO_COST, None)
        at_today, r.each_today = cost.serving_costs(today, kept) if today else (None, None)
        r.uncached = [_uncached(card, p) for p in kept]
        r.cache = cache_figures(kept)
        r.sweep = columns.Sweep(
            cost_usd=at_run.cost_usd, usd_per_mtok_output=at_run.usd_per_mtok_output,
            output_tokens_per_usd=at_run.output_tokens_per_usd,
            usd_per_1k_requests=at_run.usd_per_1k_requests,
            tokens_per_kwh=at_run.tokens_per_kwh,
            usd_per_mtok_output_today=at_today.usd_per_mtok_output if at_today else None)

    def _points(self, r: columns.Result, identity: list[Any]) -> None:
        kept = r.kept
        each_today = r.each_today
        on_front = {row["point"] for row in frontier(kept)}
        uncached = r.uncached or []
        for i, p in enumerate(kept):
            source = columns.Point(
                p=p, one=r.each[i] if r.each is not None else _NO_COST,
                one_today=each_today[i] if each_today is not None else None,
                uncached=uncached[i], on_pareto=p["id"] in on_front, cache=cache_figures([p]))
            self.points.append(_POINT_ROW.row(identity + [get(source) for _, get in _POINT_OWN]))

    def _section(self, r: columns.Result) -> columns.Section:
        """The agentic section's spend; a run without a kept point takes its cost figures."""
        doc, card, today = r.doc, r.card, r.today
        block = doc["agentic"]
        spend = cost.agentic_cost(card, doc) if card else _NO_SPEND
        spend_today = cost.agentic_cost(today, doc, pinned=False) if today else None
        r.spend = spend
        if not r.kept:
            output = int((block.get("tokens") or {}).get("output", 0))
            requests = sum(int(block["retry_cost"][t]["requests"]) for t in cost.TAGS)
            today_total = spend_today.total_usd if spend_today else None
            r.sweep = columns.Sweep(
                cost_usd=spend.total_usd,
                usd_per_mtok_output=cost.usd_per_mtok_output(spend.total_usd, output),
                output_tokens_per_usd=cost.output_tokens_per_usd(spend.total_usd, output),
                usd_per_1k_requests=cost.usd_per_1k_requests(spend.total_usd, requests),
                usd_per_mtok_output_today=cost.usd_per_mtok_output(today_total, output))
        return columns.Section(block=block, doc=doc, spend=spend, spend_today=spend_today,
                               model_version=columns.model_version_of(r.endpoint))


def _getters(specs: tuple[columns.Spec, ...], part: str | None = None,
             skip: tuple[columns.Spec, ...] = ()) -> tuple[tuple[str, Callable[[Any], Any]], ...]:
    """(name, get) of the columns a row takes with their `get` (not the ones a later step
    fills)."""
    return tuple((s.name, s.get) for s in specs if s.get is not None and s not in skip
                 and (part is None or s.part == part))


_IDENTITY = _getters(columns.IDENTITY)
_RUN_PARTS = {part: _getters(columns.RUNS, part, skip=columns.IDENTITY)
              for part in (columns.RESULT, columns.SERVING, columns.SECTION)}
_POINT_OWN = _getters(columns.POINTS, skip=columns.IDENTITY)
_AGENTIC_OWN = _getters(columns.AGENTIC_ROWS, skip=columns.IDENTITY)


@dataclass(frozen=True)
class _Order:
    """A table's row from the values of some getters: taken in the getters' order (as a dict
    of them would be filled, a later name over an earlier), and put in the table's column
    order by one C-level gather, None where no getter fills a column."""

    take: Callable[[list[Any]], Any]
    width: int

    @classmethod
    def of(cls, table: str, *parts: tuple[tuple[str, Callable[[Any], Any]], ...]) -> _Order:
        getters = [g for part in parts for g in part]
        position = {name: i for i, (name, _) in enumerate(getters)}
        columns_ = TABLE_COLUMNS[table]
        missing = len(getters)  # the None appended after the values
        return cls(itemgetter(*[position.get(c, missing) for c in columns_]), len(columns_))

    def row(self, values: list[Any]) -> list[Any]:
        values.append(None)
        taken = self.take(values)
        return list(taken) if self.width > 1 else [taken]


_RUN_ROWS = {(kept, section): _Order.of(
    "runs", _IDENTITY, _RUN_PARTS[columns.RESULT],
    *([_RUN_PARTS[columns.SERVING]] if kept else []),
    *([_RUN_PARTS[columns.SECTION]] if section else []))
    for kept in (False, True) for section in (False, True)}
"""A run's row by whether it has kept points (the serving columns) and an agentic section."""
_POINT_ROW = _Order.of("points", _IDENTITY, _POINT_OWN)
_AGENTIC_ROW = _Order.of("agentic", _IDENTITY, _AGENTIC_OWN)
_ENDPOINT = _getters(columns.ENDPOINTS)


def _uncached(card: cost.Card | None, point: dict[str, Any]) -> float | None:
    """$ per M output tokens of the point with every input token at the input price."""
    if not card:
        return None
    return cost.usd_per_mtok_output(cost.point_cost_uncached_usd(card, point),
                                    cost.billed_output_tokens(card, point))


section_figures = columns.section_figures


_NO_COST = cost.RunCost(None, 0, 0, 0.0, None, None, None, None, None)
_NO_SPEND = cost.AgenticCost(None, {}, None, None, None)
_NO_SWEEP = columns.Sweep()


def _result_path_slow(path: Path, results_dir: Path) -> str:
    try:
        rel = Path(os.path.abspath(path)).relative_to(os.path.abspath(results_dir))
    except ValueError:
        return path.as_posix()
    return f"results/{rel.as_posix()}"


def price_known(result: dict[str, Any]) -> bool:
    """False for imported results whose source had no price card (`source.unmapped` lists
    pricing): their placeholder card must not read as "free"."""
    unmapped = (result.get("source") or {}).get("unmapped") or []
    return not any(str(item).startswith("pricing") for item in unmapped)


def _endpoint_rows(project: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    folder = data_dir("endpoints", project)  # the project's, else the shipped ones
    if not folder.is_dir():
        return rows
    for path in sorted(folder.iterdir()):
        if path.suffix not in (".yaml", ".yml", ".json") or path.is_symlink():
            continue
        try:
            doc = load_document(path)
        except DocumentError:
            continue
        if kind_of(doc) != "endpoint" or check_schema(doc, "endpoint", str(path)):
            continue
        card = card_on(doc["pricing"]) or {}
        rows.append({name: get((doc, card)) for name, get in _ENDPOINT})
    return rows


def tables_from_frames(frames: dict[str, pd.DataFrame], report: Report,
                       project: Path) -> Tables:
    """The tables from the accepted results' rows: the quality gate, the order, history and
    the endpoints."""
    runs, points, agentic = frames["runs"], frames["points"], frames["agentic"]
    quality.apply_gate(agentic, runs, points)
    agentic_suite.add_suite(agentic)
    runs = confirmations(runs, points)
    if not runs.empty:
        runs = runs.sort_values(["date", "run_id"], ascending=[False, True], ignore_index=True)
    return Tables(
        runs=runs,
        points=points,
        agentic=agentic,
        endpoints=pd.DataFrame(_endpoint_rows(project), columns=ENDPOINT_COLUMNS),
        history=runs[HISTORY_COLUMNS].sort_values(["endpoint_id", "date"], ignore_index=True),
        report=report,
    )


def build_tables(results_dir: Path, project: Path) -> Tables:
    """Validate every file under results_dir and aggregate the ones that were not rejected
    (each result's rows made where it was checked). The incremental build, which reads no
    unchanged file again, is `epbench.generator.build.cached_tables`."""
    if not results_dir.is_dir():
        return tables_from_frames(frames({}, [], TABLE_COLUMNS), Report(), project)
    files, known = files_to_check([results_dir], None)
    made = each_file(row_check(results_dir, project), files)
    report = report_on([d.checked for d in made] + known, [results_dir], None)
    root = os.path.abspath(results_dir)
    rows = {os.path.relpath(os.path.abspath(d.checked.path), root).replace(os.sep, "/"): d.rows
            for d in made if d.rows is not None and status_for(d.checked.findings) != "rejected"}
    return tables_from_frames(frames(rows, list(rows), TABLE_COLUMNS), report, project)


__all__ = ["AGENTIC_COLUMNS", "ENDPOINT_COLUMNS", "HISTORY_COLUMNS", "POINT_COLUMNS",
           "RUN_COLUMNS", "Tables", "build_tables"]
