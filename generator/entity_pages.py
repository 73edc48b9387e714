"""A page per endpoint and per workload.

Endpoint: its identity, today's price card and the pinned cards its results ran under, the
newest result per workload, and the history board narrowed to it (trend charts of the headline
figures, each mark a run, and the runs behind them). Workload: its definition rendered for
people (tools and tasks included) and the leaderboard for that workload alone (the buyer's
ranked table for a serving workload, the agentic board for an agentic one).

Ids become folder names only when they are the schema's slug (`^[a-z0-9][a-z0-9._-]{0,63}$`);
anything else gets no page.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from epbench.core.documents import DocumentError
from epbench.generator import buyer, docs_gen
from epbench.generator.boards import BOARDS, board_config
from epbench.generator.capacity_view import capacity_context
from epbench.generator.plain_json import records
from epbench.generator.render import render
from epbench.generator.trace_page import trace_view

if TYPE_CHECKING:
    from epbench.generator.tables import Tables

SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
ROOT = "../../"


def _slugs(values: pd.Series) -> list[str]:
    return sorted({str(v) for v in values.dropna() if SLUG.match(str(v))})


# Columns with one value on every row of one endpoint's board: its page names them above it,
# and at 1366 px they would push the figures out of view.
_ONE_ENDPOINT = ("provider", "model")


def _narrowed(name: str, where: dict[str, Any], frame: pd.DataFrame, title: str) -> dict:
    columns = [c for c in BOARDS[name]["columns"]
               if "endpoint_id" not in where or c.key not in _ONE_ENDPOINT]
    spec = dict(BOARDS[name], where={**BOARDS[name]["where"], **where}, title=title,
                columns=columns)
    return board_config(name, spec, ROOT, frame)  # frame: which columns exist


def _price_history(runs: pd.DataFrame) -> list[dict[str, Any]]:
    """The pinned cards the endpoint's results ran under: each change of blended price, by
    date (per-token cards; hourly cards have no blended price)."""
    if "blended_usd_per_mtok" not in runs.columns:
        return []
    # An hourly card has no blended price: its results add no row (a dash read as "free").
    rows = runs[["date", "blended_usd_per_mtok", "run_id"]].dropna(
        subset=["date", "blended_usd_per_mtok"])
    rows = rows.sort_values(["date", "run_id"])
    price, before = rows["blended_usd_per_mtok"], rows["blended_usd_per_mtok"].shift()
    same = (price == before) | (price.isna() & before.isna())
    same.iloc[:1] = False  # the first card is a change
    return records(rows[~same.to_numpy()])


def endpoint_page(endpoint_id: str, tables: Tables, latest: dict[str, pd.DataFrame],
                  workload_pages: frozenset[str] = frozenset()) -> str:
    """One endpoint's page (Markdown with raw HTML)."""
    runs = tables.runs[tables.runs["endpoint_id"] == endpoint_id]
    card = tables.endpoints[tables.endpoints["endpoint_id"] == endpoint_id]
    newest = runs.sort_values(["date", "run_id"], ascending=[False, True]).head(1)
    identity = records(newest)[0] if not newest.empty else {}
    serving = latest["latest"]
    serving = serving[serving["endpoint_id"] == endpoint_id] if not serving.empty else serving
    latest_runs = runs[runs["run_id"].isin(set(serving["run_id"]) if not serving.empty else set())]
    agentic = latest["latest_agentic"]
    agentic = agentic[agentic["endpoint_id"] == endpoint_id] if not agentic.empty else agentic
    return render(
        "endpoint.md.j2",
        endpoint_id=endpoint_id,
        identity=identity,
        card=records(card)[0] if not card.empty else None,
        prices=_price_history(runs),
        serving=records(latest_runs.sort_values(["workload_id", "client_region"])),
        agentic=records(agentic.sort_values(["workload_id"])) if not agentic.empty else [],
        root=ROOT,
        workload_pages=workload_pages,
        capacity=capacity_context(agentic),
        board=_narrowed("history", {"endpoint_id": endpoint_id}, tables.runs,
                        f"Every result of {endpoint_id}"),
    )


def workload_page(doc: docs_gen.WorkloadDoc, tables: Tables, latest: pd.DataFrame,
                  trace: dict[str, Any] | None = None) -> str:
    """One workload's page: its definition and its own leaderboard (a trace workload: its
    trace's source and charts, epbench.generator.trace_page)."""
    picker = None
    board = None
    source = latest if doc.kind == "serving" else tables.agentic
    measured = not source.empty and bool((source["workload_id"] == doc.id).any())
    if not measured:
        pass  # no board of empty frames: the page says there is no result yet
    elif doc.kind == "serving":
        picker = buyer.page_config("home", ROOT, latest[latest["workload_id"] == doc.id])
    else:
        board = _narrowed("agentic", {"workload_id": doc.id}, tables.agentic,
                          f"Agentic results on {doc.id}")
    return render("workload.md.j2", w=doc, picker=picker, board=board, root=ROOT, trace=trace)


def _trace_of(workloads_root: Path, doc: docs_gen.WorkloadDoc) -> dict[str, Any] | None:
    """The trace section of a trace workload's page (None for other workloads)."""
    if doc.kind != "serving":
        return None
    path = workloads_root / doc.file.removeprefix("workloads/")
    try:
        data = docs_gen.workload_document(path)
    except DocumentError:
        return None  # the page says the file could not be read
    return trace_view(data, path) if isinstance(data, dict) else None


def write_entity_pages(docs: Path, tables: Tables, latest: dict[str, pd.DataFrame],
                       workloads_root: Path,
                       workloads: list[docs_gen.WorkloadDoc] | None = None) -> frozenset[str]:
    """Write every endpoint and workload page under `docs`; the workload ids that got one.
    `workloads`: `docs_gen.workload_docs(workloads_root)` when the caller has them."""
    done: set[str] = set()
    for doc in docs_gen.workload_docs(workloads_root) if workloads is None else workloads:
        if doc.problem or not SLUG.match(doc.id) or doc.id in done:
            continue
        path = docs / "workloads" / f"{doc.id}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        trace = _trace_of(workloads_root, doc)
        path.write_text(workload_page(doc, tables, latest["latest"], trace), encoding="utf-8")
        done.add(doc.id)
    with_pages = frozenset(done)
    for endpoint_id in _slugs(tables.runs["endpoint_id"]) if not tables.runs.empty else []:
        path = docs / "endpoints" / f"{endpoint_id}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(endpoint_page(endpoint_id, tables, latest, with_pages), encoding="utf-8")
    return with_pages
