"""The Markdown pages of the site, rendered with Jinja (autoescaped) into the temporary mkdocs
docs folder, and the navigation whose top level is the header tabs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
from markupsafe import Markup

from epcore.paths import data_dir, schemas_dir
from generator import docs_gen
from generator.boards import BOARDS, board_config
from generator.plain_json import records
from generator.render import render
from generator.run_pages import SHELL_DIR, shell_page

GUIDES = [
    ("How to submit", "guides/submit.md"),
    ("Continuous benchmarking", "guides/continuous.md"),
    ("Add an agentic workload", "guides/agentic-workload.md"),
]
SPEED_FLOOR = 20.0  # tokens/s per user for "most throughput at a given per-user speed"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")



def write_pages(docs: Path, tables: Any, project: Path) -> list[Any]:
    """Render every generated page into `docs`; return the mkdocs navigation."""
    _write(docs / "index.md", render("home.md.j2", **home_context(tables)))
    for name, spec in BOARDS.items():
        extra = ""
        if name == "cost":
            keys = ["endpoint_id", "provider", "model", "division", "input_usd_per_mtok",
                    "output_usd_per_mtok", "cached_input_usd_per_mtok", "blended_usd_per_mtok",
                    "usd_per_hour", "effective_date", "source_url"]
            cards = [{k: row.get(k) for k in keys} for row in records(tables.endpoints)]
            for card in cards:  # a link only to a web page, whatever the file says
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
            downloads=[{"name": t, "label": t} for t in spec["downloads"]],
            board=board_config(name, spec, "../", getattr(tables, spec["source"])),
        )
        _write(docs / f"{name}.md", page)
    workloads_root = data_dir("workloads", project)
    _write(docs / "workloads.md", docs_gen.workloads_catalogue(workloads_root))
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
    by_id = {r["run_id"]: r for r in records(pool)} if not pool.empty else {}

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
    newest = records(runs.sort_values(["date", "run_id"], ascending=[False, True]).head(10)) \
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


