"""Jinja rendering for the site: one environment, autoescape on for every template.

Every value that reaches a page goes through this module (or, for a result page's repeated
rows, epbench.generator.result_html, which escapes the same way). Templates are HTML fragments or
Markdown pages whose data-bearing parts are raw HTML blocks, so untrusted text is HTML-escaped
and never interpreted as Markdown (a `[x](javascript:...)` in a workload description stays
text). Structured data for the page's JavaScript goes through `json_script`, which makes JSON
safe inside `<script type="application/json">`.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup, escape

from epbench.core import agentic_plan
from epbench.core.paths import site_sources_dir
from epbench.generator import cost
from epbench.generator.checks import CHECKS
from epbench.generator.number_format import fmt_number, fmt_pct, fmt_usd, fmt_value
from epbench.generator.prompt_cache import cache_figures, hit_rate_words
from epbench.generator.result_html import (
    head_row,
    kv_rows,
    pareto_line,
    point_rows,
    price_rows,
    retry_rows,
    task_rows,
)
from epbench.generator.tables import price_known

# Characters that could end the script element or start markup inside it; also the two line
# separators JavaScript once treated as newlines.
_JSON_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def safe_json(value: Any) -> str:
    """JSON text that can sit inside `<script type="application/json">` without closing it."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_default)
    for char, code in _JSON_ESCAPES.items():
        text = text.replace(char, code)
    return text


def _default(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def json_script(value: Any, element_id: str) -> Markup:
    """A `<script type="application/json" id=...>` element carrying `value`."""
    return Markup(
        f'<script type="application/json" id="{escape(element_id)}">{safe_json(value)}</script>'
    )


_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def code_spans(text: Any) -> Markup:
    """Text from a workload, a schema or a docstring, HTML-escaped, with its Markdown code
    spans (`name`) shown as code instead of printed with their backticks. Nothing else is
    read as Markdown: a link or an HTML tag in the text stays text."""
    return Markup(_CODE_SPAN.sub(r"<code>\1</code>", str(escape("" if text is None else text))))


@cache
def environment(templates: Path | None = None) -> Environment:
    """The one Jinja environment (compiled templates are cached by Jinja inside it)."""
    folder = templates or site_sources_dir() / "templates"
    env = Environment(
        loader=FileSystemLoader(str(folder)),
        autoescape=True,  # every template, whatever its extension
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["num"] = fmt_number
    env.filters["value"] = fmt_value
    env.filters["usd"] = fmt_usd
    env.filters["pct"] = fmt_pct
    env.filters["json_script"] = json_script
    env.filters["code_spans"] = code_spans
    return env


def render(name: str, **context: Any) -> str:
    """Render one template under site/templates with autoescaping."""
    return environment().get_template(name).render(**context)


# ---------------------------------------------------------------------------------------------
# One result's page: the context the `result.html.j2` template renders.

POINT_COLUMNS = [
    "point", "load", "issued", "completed", "failed", "system throughput (tok/s)",
    "per-user speed (tok/s)", "cost per M output tokens",
    "TTFT p50 ms", "TTFT p90 ms", "TTFT p99 ms", "TPOT p90 ms", "ITL p90 ms", "E2E p90 ms",
    "goodput rps", "input tokens", "output tokens", "token source", "errors", "insufficient",
    "on frontier",
    # issue 25: the prompt cache (epbench.generator.prompt_cache)
    "prompt-cache hit rate", "uncached cost per M output tokens",
]
CACHE_CELLS = 2  # the last cells of a points row: hit rate, cost without cache prices
_POINTS_HEAD = head_row(POINT_COLUMNS)
# The run page's price card: each field in words (per-token prices are per million tokens).
PRICE_LABELS = {
    "input_usd_per_mtok": "input, per M tokens",
    "output_usd_per_mtok": "output, per M tokens",
    "cached_input_usd_per_mtok": "cached input, per M tokens",
    "cache_write_input_usd_per_mtok": "cache write, per M tokens",
    "reasoning_usd_per_mtok": "reasoning, per M tokens",
    "usd_per_hour": "per hour of the deployment",
    "power_kw": "power of the deployment (kW)",
    "effective_date": "effective from",
    "source_url": "source",
}
_NOT_DISCLOSURE = {"points", "pareto", "burst", "agentic", "kind", "schema_version", "$schema"}


def flatten(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Leaves of nested mappings as (dotted.path, value); lists of scalars stay one value."""
    out: list[tuple[str, Any]] = []
    _leaves(value, prefix, out)
    return out


def _leaves(value: Any, prefix: str, out: list[tuple[str, Any]]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(item, dict | list):
                _leaves(item, path, out)
            else:
                out.append((path, item))
    elif isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
        for i, item in enumerate(value):
            _leaves(item, f"{prefix}[{i}]", out)
    else:
        out.append((prefix, value))


_EMPTY: dict[str, Any] = {}


def _point_row(point: dict[str, Any], frontier: set[str], card: Any) -> list[Any]:
    """One row of the run page's points table; `card` is the pinned price card (None when the
    result's price is unknown), so an hourly endpoint's cost shows per point."""
    if "concurrency" in point:
        load = f"concurrency {point['concurrency']}"
    else:
        load = f"{point.get('rate')} req/s"
    if point.get("phase"):
        load += f" ({point['phase']})"
    requests = point.get("requests") or _EMPTY
    tokens = point.get("tokens") or _EMPTY
    errors = point.get("errors") or _EMPTY
    error_text = ", ".join([f"{k} {v}" for k, v in errors.items() if v]) or "none"
    ttft = point.get("ttft_ms") or _EMPTY
    tpot = point.get("tpot_ms") or _EMPTY
    itl = point.get("itl_ms") or _EMPTY
    e2e = point.get("e2e_ms") or _EMPTY
    thin = [f"{name} {p}" for name, dist in (("ttft_ms", ttft), ("tpot_ms", tpot),
                                             ("itl_ms", itl), ("e2e_ms", e2e))
            for p in dist.get("insufficient", ())]
    # One point's serving_cost(card, [point]).usd_per_mtok_output, without the run figures.
    usd = (cost.usd_per_mtok_output(cost.point_cost_usd(card, point),
                                    cost.billed_output_tokens(card, point)) if card else None)
    uncached = (cost.usd_per_mtok_output(cost.point_cost_uncached_usd(card, point),
                                         cost.billed_output_tokens(card, point)) if card else None)
    return [
        point.get("id"), load, requests.get("issued"), requests.get("completed"),
        requests.get("failed"), point.get("system_tps"), point.get("tps_per_user"),
        fmt_usd(usd) if card else "—",
        ttft.get("p50"), ttft.get("p90"), ttft.get("p99"), tpot.get("p90"), itl.get("p90"),
        e2e.get("p90"), point.get("goodput_rps"),
        tokens.get("input"), tokens.get("output"), tokens.get("source"), error_text,
        ", ".join(sorted(set(thin))) or "none", point.get("id") in frontier,
        hit_rate_words(*cache_figures([point])), fmt_usd(uncached) if card else "—",
    ]


_AGENTIC_TIMES = [("decision_ms", "decision time"),
                  ("first_tool_delta_ms", "time to the first tool-call delta"),
                  ("tool_ms", "tool time"), ("overhead_ms", "harness overhead"),
                  ("task_wall_ms", "task wall time")]


def _agentic_context(agentic: dict[str, Any]) -> dict[str, Any]:
    """The agentic summary as people read it: labels in words, shares as percentages, dollars
    with a sign (the raw JSON link holds the exact values)."""
    success = agentic.get("success_rate") or {}
    ci = success.get("ci95") or [None, None]
    summary: list[tuple[str, Any]] = [
        ("trials per task (n)", fmt_number(agentic.get("trials"))),
        ("task success rate", fmt_pct(success.get("value"))),
        ("success rate, 95% interval", f"{fmt_pct(ci[0])} to {fmt_pct(ci[-1])}"),
        ("trials counted", fmt_number(success.get("n"))),
    ]
    summary += [(f"pass^{k}", fmt_pct(v)) for k, v in (agentic.get("pass_hat_k") or {}).items()]
    summary += [(f"tool calls: {k.replace('_', ' ')}", fmt_number(v))
                for k, v in (agentic.get("calls") or {}).items()]
    summary.append(("correct call rate", fmt_pct(agentic.get("correct_call_rate"))))
    for name, label in _AGENTIC_TIMES:
        dist = agentic.get(name) or {}
        summary.append((f"{label}, p50 / p90 (n)",
                        f"{fmt_number(dist.get('p50'))} ms / {fmt_number(dist.get('p90'))} ms "
                        f"({fmt_number(dist.get('n'))})"))
    summary += [
        ("cost per task (retries included)", fmt_usd(agentic.get("usd_per_task"))),
        ("cost per successful task", fmt_usd(agentic.get("usd_per_successful_task"))),
        ("share of spend on retries", fmt_pct(agentic.get("retry_spend_share"))),
        ("tokens over the reference path", fmt_pct(agentic.get("excess_tokens_over_reference"))),
    ]
    tasks = []
    for task in agentic.get("tasks") or []:
        counts: dict[str, int] = {}
        for outcome in task.get("outcomes") or []:
            counts[outcome.get("result", "?")] = counts.get(outcome.get("result", "?"), 0) + 1
        tasks.append({
            "id": task.get("id"), "trials": task.get("trials"), "successes": task.get("successes"),
            "outcomes": ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none",
        })
    retry = list((agentic.get("retry_cost") or {}).items())
    return {"summary": summary, "retry": retry, "tasks": tasks,
            "faults": agentic.get("harness_faults") or [],
            "summary_html": kv_rows(summary), "retry_html": retry_rows(retry),
            "tasks_html": task_rows(tasks)}


def arrival_lag(points: Any) -> list[dict[str, Any]]:
    """Open-loop points (Poisson, burst, trace): how far behind its scheduled instant each
    request was sent (`schedule_delay_ms`), and TTFT counted from that instant."""
    out = []
    for point in points:
        lag = point.get("schedule_delay_ms") if isinstance(point, dict) else None
        if not isinstance(lag, dict):
            continue
        ttft = point.get("ttft_from_scheduled_ms") or _EMPTY
        out.append({"point": point.get("id"), "n": lag.get("n"), "p50": lag.get("p50"),
                    "p90": lag.get("p90"), "p99": lag.get("p99"),
                    "insufficient": ", ".join(lag.get("insufficient") or ()) or "none",
                    "ttft_p50": ttft.get("p50"), "ttft_p99": ttft.get("p99")})
    return out


def run_command(doc: dict[str, Any]) -> str:
    """The `epbench run` command that reproduces a result (ids are schema-checked slugs)."""
    parts = ["epbench", "run", "--endpoint", str(doc["endpoint"]["id"]),
             "--workload", str(doc["workload"]["id"])]
    if (doc.get("settings") or {}).get("quick"):
        parts.append("--quick")
    region = (doc.get("client") or {}).get("region")
    if region:
        parts += ["--client-region", str(region)]
    return " ".join(_shell_quote(p) for p in parts)


def _shell_quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def frontier_by_run(points: Any, run_ids: Any = None) -> dict[str, list[str]]:
    """Run id -> ids of its points on the frontier, from the `points` table's `on_pareto`
    (only of `run_ids` when given).

    The run page marks these, so it shows the board's frontier: epbench.core's, over the points
    the validator kept (not the file's own `pareto` list, which may name rejected points).
    """
    out: dict[str, list[str]] = {}
    keep = points["on_pareto"].fillna(False).astype(bool).to_numpy()
    if run_ids is not None:
        keep = keep & points["run_id"].isin(run_ids).to_numpy()
    # plain lists: iterating Arrow-backed columns cell by cell costs ten times more
    for run_id, point in zip(points["run_id"].to_numpy()[keep].tolist(),
                             points["point"].to_numpy()[keep].tolist(), strict=True):
        out.setdefault(str(run_id), []).append(str(point))
    return out


ROW_COLUMNS = ("run_id", "result_path", "journal_path", "flags", "unranked_reasons",
               "rankable", "disclosure_score", "quality", "quality_below", "bfcl", "tier",
               "tier_reason", "confirmation", "confirmed_by")
"""The `runs` columns a result page reads (`result_context` and `result.html.j2`); its row
carries only these (and `frontier`), while its digest is taken over the whole row."""


def result_context(doc: dict[str, Any], row: dict[str, Any], root: str) -> dict[str, Any]:
    """Everything the result page shows, from the result document and its `runs` row.

    `row["frontier"]` lists the run's frontier point ids (frontier_by_run). The `*_html`
    entries are the repeated rows as escaped HTML (epbench.generator.result_html) of the lists
    beside
    them, which stay for tests and other readers."""
    endpoint = doc.get("endpoint") or {}
    frontier = {str(p) for p in row.get("frontier") or ()}
    disclosure_doc = {k: v for k, v in doc.items() if k not in _NOT_DISCLOSURE}
    disclosure_doc["endpoint"] = {k: v for k, v in endpoint.items() if k != "pricing"}
    model = (endpoint.get("model") or {}).get("name", "")
    flags = row.get("flags")
    card = endpoint.get("pricing") if price_known(doc) and endpoint.get("pricing") else None
    points = [_point_row(p, frontier, card) for p in doc.get("points") or ()]
    price_card = flatten(endpoint.get("pricing") or {})
    disclosure = flatten(disclosure_doc)
    return {
        "title": f"{endpoint.get('provider', '')} {model}: {doc['workload']['id']}, "
                 f"{str(doc.get('started_at', ''))[:10]}",
        "doc": doc,
        "workload": doc["workload"],
        "endpoint": endpoint,
        "row": row,
        "root": root,
        "unranked": row.get("unranked_reasons") or [],
        "resumes": doc.get("resumes") or [],
        "journal": row.get("journal_path"),
        "evidence": doc.get("evidence"),
        # the server's side of the first request (epbench.generator.run_pages)
        "first_answer": None,
        "imported": (doc.get("source") or {}).get("format", "epbench") != "epbench",
        "command": run_command(doc),
        "flags": [(str(f), flag_note(str(f))) for f in flags]
                 if isinstance(flags, list | tuple) else [],
        "fallbacks": [fallback_words(f) for f in (doc.get("settings") or {}).get("fallbacks")
                      or () if isinstance(f, dict)],
        "points_head": _POINTS_HEAD,
        "points": points,
        "points_html": point_rows(points),
        "pareto_html": pareto_line(doc.get("pareto") or ()),
        "burst": doc.get("burst"),
        "lag": arrival_lag(doc.get("points") or ()),
        "conversations": [(str(p.get("id", "")), p["conversation"]) for p in doc.get("points") or ()
                          if isinstance(p, dict) and isinstance(p.get("conversation"), dict)],
        "agentic": _agentic_context(doc["agentic"]) if doc.get("agentic") else None,
        "quality": row.get("quality"),
        "quality_below": row.get("quality_below"),
        "bfcl": row.get("bfcl"),
        "price_card": price_card,
        "price_html": price_rows(price_card, PRICE_LABELS),
        "disclosure": disclosure,
        "disclosure_html": kv_rows(disclosure),
    }


def fallback_words(used: dict[str, Any]) -> str:
    """A declared fallback the run used (the result's `settings.fallbacks`), in words; the
    endpoint's own reason follows it."""
    feature, fallback = str(used.get("feature", "")), str(used.get("fallback", ""))
    if (feature, fallback) == (agentic_plan.FEATURE, agentic_plan.NON_STREAMED):
        words = ("Tool calls were not streamed: the endpoint refuses tool calls in a stream, so "
                 "the requests that offer tools were sent with stream: false (the endpoint "
                 "file's declared fallback), and each answer's times are those of the whole "
                 "answer")
    else:
        words = f"Fell back from {feature} to {fallback} (the endpoint file's declared fallback)"
    reason = used.get("reason")
    return f"{words}; the endpoint file says: {reason}" if reason else words


def flag_note(check_id: str) -> str:
    """What a flag on a run page means, in the words of the check that raised it (the runs
    table keeps only check ids); empty for an id no check defines."""
    check = CHECKS.get(check_id)
    if check is None:
        return ""
    if check.severity == "reject-point":
        return f"a point fails the check that {check.description} (such a point is left out " \
               "of the boards)"
    return f"fails the check that {check.description}"
