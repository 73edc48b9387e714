"""The Markdown pages of the site, rendered with Jinja (autoescaped) into the temporary mkdocs
docs folder, and the navigation whose top level is the header tabs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from markupsafe import Markup

from epbench.core.paths import data_dir, schemas_dir
from epbench.generator import agentic_suite, buyer, docs_gen
from epbench.generator.boards import BOARDS, board_config
from epbench.generator.capacity_view import capacity_context
from epbench.generator.downloads import parts as download_parts
from epbench.generator.entity_pages import SLUG, write_entity_pages
from epbench.generator.latest import latest_views
from epbench.generator.plain_json import records
from epbench.generator.render import render
from epbench.generator.run_pages import SHELL_DIR, shell_page

if TYPE_CHECKING:
    from epbench.generator.tables import Tables

GUIDES = [
    ("How to submit", "guides/submit.md"),
    ("Continuous benchmarking", "guides/continuous.md"),
    ("Add an agentic workload", "guides/agentic-workload.md"),
    ("API: OpenAI chat completions", "guides/api-openai-chat.md"),
    ("API: OpenAI Responses", "guides/api-openai-responses.md"),
    ("API: Anthropic Messages", "guides/api-anthropic-messages.md"),
]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")



def write_pages(docs: Path, tables: Tables, project: Path,
                views: dict[str, pd.DataFrame] | None = None,
                entity_pages: Callable[[], frozenset[str]] | None = None,
                workloads: list[docs_gen.WorkloadDoc] | None = None) -> list[Any]:
    """Render every generated page into `docs`; return the mkdocs navigation. `views` holds
    the latest-result views (`epbench.generator.latest.latest_views`, or `board_views`, which
    includes them) when the build has made them already; None: made here, once.
    `entity_pages` gives the workload ids with a page once the endpoint and workload pages are
    written, when the caller has them written elsewhere (`write_entity_pages` in a forked
    process: epbench.generator.site); None: they are written here. `workloads`:
    `docs_gen.workload_docs` of the project's workloads, when the caller has them."""
    views = latest_views(tables) if views is None else views
    suite = agentic_suite.pools(tables.agentic)
    _write(docs / "index.md", render("home.md.j2", **home_context(tables, views["latest"],
                                                                   suite)))
    _write(docs / "compare.md", render("compare.md.j2", **compare_context(views)))
    dated = download_parts(tables)
    for name, spec in BOARDS.items():
        extra = ""
        before = Markup(render("agentic_suite.html.j2", pools=suite, shown=0, root="../",
                               more="", anchor="suite", heading="Over the whole suite",
                               filters_below=True, controls=SUITE_CONTROLS["board"])) \
            if name == "agentic" else ""
        if name == "cost":
            keys = ["endpoint_id", "provider", "model", "division", "input_usd_per_mtok",
                    "output_usd_per_mtok", "cached_input_usd_per_mtok", "blended_usd_per_mtok",
                    "usd_per_hour", "effective_date", "source_url"]
            cards = [{k: row.get(k) for k in keys} for row in records(tables.endpoints)]
            with_page = set(tables.runs["endpoint_id"]) if not tables.runs.empty else set()
            for card in cards:  # a link only to a web page, whatever the file says
                card["page"] = card["endpoint_id"] in with_page and bool(
                    SLUG.match(str(card["endpoint_id"])))
                if not str(card["source_url"] or "").startswith(("https://", "http://")):
                    card["source_url"] = None
            extra = Markup(render("price_cards.html.j2", rows=cards))
        page = render(
            "board.md.j2",
            title=spec["title"],
            intro=spec["intro"],
            page=name,
            root="../",
            extra_html=extra,
            before_html=before,
            downloads=[{"name": t, "label": t, "parts": dated.get(t)} for t in spec["downloads"]],
            board=board_config(name, spec, "../", tables.runs if spec["source"] == "history"
                               else getattr(tables, spec["source"])),
        )
        _write(docs / f"{name}.md", page)
    workloads_root = data_dir("workloads", project)
    workloads = docs_gen.workload_docs(workloads_root) if workloads is None else workloads
    with_pages = entity_pages() if entity_pages is not None \
        else write_entity_pages(docs, tables, views, workloads_root, workloads)
    _write(docs / "workloads.md",
           docs_gen.workloads_catalogue(workloads_root, with_pages, workloads))
    tables_doc = project / "docs" / "tables.md"
    _write(docs / "methodology.md", docs_gen.methodology(schemas_dir(), tables_doc))
    _write(docs / "schemas.md", docs_gen.schema_reference(schemas_dir()))
    _write(docs / f"{SHELL_DIR}.md", shell_page())
    guides = [{title: path} for title, path in GUIDES if (docs / path).is_file()]
    known = {path for _, path in GUIDES}
    for extra_guide in sorted((docs / "guides").glob("*.md")) if (docs / "guides").is_dir() else []:
        rel = f"guides/{extra_guide.name}"
        if rel not in known:
            guides.append({extra_guide.stem.replace("-", " ").capitalize(): rel})
    # The top level is the header tabs (mkdocs-material `navigation.tabs`).
    nav: list[Any] = [
        {"Home": "index.md"},
        {"Serving": "serving.md"},
        {"Agentic": "agentic.md"},
        {"Cost": "cost.md"},
        {"History": "history.md"},
        {"Compare": "compare.md"},
        {"Workloads": "workloads.md"},
        {"Methodology": [{"Metrics and rules": "methodology.md"},
                         {"Schema reference": "schemas.md"}]},
    ]
    if guides:
        nav.append({"Submit": guides})
    return nav


# ------------------------------------------------------------------ home and compare

NEWEST_SHOWN = 8  # rows of the home page's "Newest results"
# The rows the page carries for it: buyer.js shows the first NEWEST_SHOWN the reader's
# controls let in (without JavaScript, the newest NEWEST_SHOWN of all).
NEWEST_POOL = 48
SUITE_SHOWN = 5  # endpoints in the home page's "Most reliable at tool calling"
# The controls that choose a suite pool, as each page labels them (buyer.js, board.js).
SUITE_CONTROLS = {
    "home": {"self": "Include self-reported results", "unranked": "Include unranked results"},
    "board": {"self": "Include self-reported results", "unranked": "Include emulated results"},
}


def _gate(run: dict[str, Any]) -> str:
    """Which of the home page's controls lets a run into its "Newest results": none (ranked),
    "self_reported" (unranked only because it is self-reported) or "unranked"."""
    if run.get("rankable"):
        return ""
    reasons = run.get("unranked_reasons") or []
    if run.get("tier") == "self-reported" and len(reasons) <= 1:
        return "self_reported"
    return "unranked"


def home_context(tables: Tables, latest: pd.DataFrame | None = None,
                 suite: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The home page: the buyer's ranked table (configured here, drawn by buyer.js), the
    newest results and the counts. `latest`: the "latest" view, `suite` the agentic suite's
    pools (`agentic_suite.pools`), if made already."""
    runs: pd.DataFrame = tables.runs
    latest = latest_views(tables)["latest"] if latest is None else latest
    newest = [{**r, "gate": _gate(r)} for r in records(
        runs.sort_values(["date", "run_id"], ascending=[False, True]).head(NEWEST_POOL))] \
        if not runs.empty else []
    counts = {
        "runs": len(runs),
        "serving": int((runs["workload_kind"] == "serving").sum()) if not runs.empty else 0,
        "agentic": int((runs["workload_kind"] == "agentic").sum()) if not runs.empty else 0,
        "emulated": int((runs["division"] == "emulated").sum()) if not runs.empty else 0,
        "endpoints": int(runs["endpoint_id"].nunique()) if not runs.empty else 0,
    }
    table = Markup(render("agentic_suite.html.j2",
                          pools=agentic_suite.pools(tables.agentic) if suite is None else suite,
                          shown=SUITE_SHOWN, root="", more="agentic/#suite",
                          anchor="most-reliable", heading="Most reliable at tool calling",
                          filters_below=False, controls=SUITE_CONTROLS["home"]))
    return {"picker": buyer.page_config("home", "", latest), "newest": newest,
            "newest_shown": NEWEST_SHOWN, "counts": counts, "suite": table}


def compare_context(views: dict[str, pd.DataFrame]) -> dict[str, Any]:
    """The compare page's configuration, from the latest-result views."""
    return {"picker": buyer.page_config("compare", "../", views["latest"]),
            "limit": buyer.COMPARE_LIMIT, "root": "../",
            "capacity": capacity_context(views["latest_agentic"])}
