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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from epbench.core import evidence
from epbench.core.documents import DocumentError, load_document
from epbench.core.metrics.pareto import frontier
from epbench.core.paths import data_dir
from epbench.core.pricing import card_on
from epbench.core.provenance import self_reported
from epbench.core.rankable import rankability
from epbench.core.schema import check_schema, kind_of
from epbench.generator import agentic_suite, cost, quality
from epbench.generator.checks import rejected_points
from epbench.generator.checks.dates import run_date
from epbench.generator.checks.workload_sha import WorkloadIndex
from epbench.generator.confirmation import confirmations
from epbench.generator.disclosure import disclosure
from epbench.generator.prompt_cache import cache_figures
from epbench.generator.report import Report, status_for
from epbench.generator.validate import Checked, Reuse, validate_documents

IDENTITY = ["run_id", "endpoint_id", "provider", "model", "api", "division", "hardware", "region",
            "client_region", "workload_id", "date", "submitter", "disclosure_score", "rankable",
            "unranked_reasons", "tier", "tier_reason"]
TARGET_SPEED = 20.0
"""tokens/s per user: the default target of the buyer pages (a reader's comfortable reading
speed); a run's `tps_at_target` is its highest system throughput at a point that reaches it."""
RUN_COLUMNS = [
    "run_id", "short_id", "submitter", "submitter_relationship", "endpoint_id", "provider",
    "model", "model_version", "division", "hardware", "engine", "region", "client_region",
    "workload_id", "workload_version", "workload_kind", "pattern", "date", "started_at",
    "finished_at", "harness_version", "quick", "disclosure_score", "flags", "rankable",
    "unranked_reasons",
    "source_format", "result_path", "journal_path", "page", "points", "max_system_tps",
    "tps_per_user_at_max_tps",
    "best_tps_per_user", "ttft_p90_ms_best", "error_rate", "usd_per_mtok_output",
    "blended_usd_per_mtok", "output_tokens_per_usd", "usd_per_1k_requests",
    "usd_per_mtok_output_today", "success_rate", "pass_hat_1", "usd_per_successful_task",
    "decision_ms_p90",
    # additions beyond the contract
    "tps_at_target",
    "cost_usd", "tokens_per_kwh", "blended_usd_per_mtok_today", "disclosure_missing",
    "usd_per_mtok_output_at_max_tps",
    *quality.RUN_QUALITY_COLUMNS,
    "api", "ttfa_p90_ms_best", "reasoning_tokens", "cache_read_tokens", "cache_write_tokens",
    "tier", "tier_reason", "confirmation", "confirmed_by",
    # issue 25: the prompt cache (epbench.generator.prompt_cache)
    "cache_hit_rate", "cache_status", "usd_per_mtok_output_uncached_at_max_tps",
]
POINT_COLUMNS = [
    *IDENTITY, "point", "concurrency", "rate", "phase", "system_tps", "tps_per_user",
    "ttft_ms_p50", "ttft_ms_p90", "ttft_ms_p99", "tpot_ms_p90", "itl_ms_p90", "e2e_ms_p90",
    "goodput_rps", "issued", "completed", "failed", "error_rate", "usd_per_mtok_output",
    "on_pareto",
    "cost_usd", "usd_per_mtok_output_today",
    "ttfa_ms_p50", "ttfa_ms_p90", "output_tokens", "reasoning_tokens", "input_tokens",
    "cache_read_tokens", "cache_write_tokens", "ttft_ms_p90_ci_low", "ttft_ms_p90_ci_high",
    # issue 25: the prompt cache (epbench.generator.prompt_cache)
    "cache_hit_rate", "cache_status", "usd_per_mtok_output_uncached",
]
_CALLS = ("ok", "invalid_json", "unknown_tool", "schema_mismatch", "missing_id", "duplicate_id",
          "stream_truncated")
# Agentic workloads with load levels (epbench.core.metrics.capacity): agents at SLO, per $/hour,
# the SLO, and per level the figures its chart draws (`load_levels`, a list of dicts)
LOAD_COLUMNS = ["agents_at_slo", "agents_per_usd_hour", "agents_slo_decision_p90_ms",
                "load_levels"]
AGENTIC_COLUMNS = [
    *IDENTITY, "trials", "tasks", "success_rate", "success_ci_low", "success_ci_high",
    "pass_hat_1", "pass_hat_k", "decision_ms_p50", "decision_ms_p90", "first_tool_delta_ms_p90",
    "tool_ms_p90", "overhead_ms_p90", "task_wall_ms_p90",
    *(f"calls_{c}" for c in _CALLS), "correct_call_rate",
    *(f"retry_{tag}_{m}" for tag in cost.TAGS for m in ("requests", "tokens", "seconds", "usd")),
    "usd_per_task", "usd_per_successful_task", "retry_spend_share",
    "excess_tokens_over_reference",
    "usd_per_successful_task_today",
    "model_version", "success_n", "quality_workload", "reference_endpoint", "source_category",
    *quality.AGENTIC_QUALITY_COLUMNS,
    "reasoning_tokens", "cache_read_tokens", "cache_write_tokens",
    *agentic_suite.SUITE_COLUMNS,
    *LOAD_COLUMNS,
]
ENDPOINT_COLUMNS = [
    "endpoint_id", "provider", "model", "model_version", "division", "region", "hardware",
    "input_usd_per_mtok", "output_usd_per_mtok", "cached_input_usd_per_mtok", "usd_per_hour",
    "effective_date", "source_url", "blended_usd_per_mtok",
    "power_kw", "rate_limit_tier",
]
HISTORY_COLUMNS = [
    "endpoint_id", "provider", "model", "workload_id", "date", "run_id", "division", "rankable",
    "tier", "tier_reason", "max_system_tps", "ttft_p90_ms_best", "usd_per_mtok_output",
    "success_rate",
]
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


def _hardware(endpoint: dict[str, Any]) -> str | None:
    hw = endpoint.get("hardware") or {}
    accelerator = hw.get("accelerator")
    if not accelerator:
        return None
    count = hw.get("count")
    return f"{count}x {accelerator}" if count and count > 1 else str(accelerator)


def _model_version(endpoint: dict[str, Any]) -> str | None:
    model = endpoint.get("model") or {}
    return model.get("version") or model.get("snapshot_date")


def _p(dist: dict[str, Any] | None, key: str) -> float | None:
    return None if not dist else dist.get(key)


def _ci(dist: dict[str, Any] | None, side: int) -> float | None:
    """One end of a distribution's p90 bootstrap interval (None when it carries none)."""
    interval = ((dist or {}).get("ci95") or {}).get("p90")
    return interval[side] if isinstance(interval, list) and len(interval) == 2 else None


_TODAY: dict[tuple[str, str, int], cost.Card | None] = {}


def _token_sum(points: list[dict[str, Any]], key: str) -> int | None:
    """A token figure summed over points, or None when no point reports it (older results,
    APIs that do not report it): absent is not zero."""
    values = [p["tokens"][key] for p in points if isinstance(p["tokens"].get(key), int)]
    return sum(values) if values else None


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
    """The table rows one valid result contributes: dicts by column name, or lists in the
    tables' column order (as the build cache keeps them)."""

    runs: list[Any]
    points: list[Any]
    agentic: list[Any]


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


class _Builder:
    def __init__(self, results_dir: Path, project: Path, build: int = 0) -> None:
        self.results_dir = results_dir
        self.project = project
        self.build = build or time.monotonic_ns()
        self.runs: list[dict[str, Any]] = []
        self.points: list[dict[str, Any]] = []
        self.agentic: list[dict[str, Any]] = []

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
        flags = sorted({f.check for f in item.findings if f.severity in ("flag", "reject-point")})
        day = run_date(doc)
        score = disclosure(doc)
        workload = doc["workload"]
        tier = item.provenance or self_reported("no attestation checked")
        reasons = rankability(doc, ranking_limits(self.project, workload["kind"], workload["id"]),
                              tier)
        identity = {
            "run_id": doc["run_id"],
            "endpoint_id": endpoint["id"],
            "provider": endpoint["provider"],
            "model": endpoint["model"]["name"],
            "api": endpoint.get("api", "openai-chat"),
            "division": endpoint["division"],
            "hardware": _hardware(endpoint),
            "region": endpoint["region"],
            "client_region": doc["client"].get("region"),
            "workload_id": doc["workload"]["id"],
            "date": day.isoformat() if day else None,
            "submitter": (doc.get("submitter") or {}).get("name"),
            "disclosure_score": score.score,
            "rankable": not reasons,
            "unranked_reasons": [reason.text for reason in reasons],
            "tier": tier.tier,
            "tier_reason": tier.reason,
        }
        run = {
            **identity,
            "short_id": doc["run_id"][:8],
            "submitter_relationship": (doc.get("submitter") or {}).get("relationship"),
            "model_version": _model_version(endpoint),
            "engine": (endpoint.get("hardware") or {}).get("engine"),
            "workload_version": doc["workload"]["version"],
            "workload_kind": doc["workload"]["kind"],
            "pattern": doc["workload"].get("pattern"),
            "started_at": doc["started_at"],
            "finished_at": doc["finished_at"],
            "harness_version": doc["harness"]["version"],
            "quick": bool(doc["settings"].get("quick")),
            "flags": flags,
            "source_format": (doc.get("source") or {}).get("format", "epbench"),
            "result_path": self.result_path(item.path),
            "journal_path": self.journal_path(item.path, doc),
            "page": f"runs/{doc['run_id']}/",
            "points": len(kept),
            "disclosure_missing": score.missing,
            "blended_usd_per_mtok": cost.blended_usd_per_mtok(card) if card else None,
            "blended_usd_per_mtok_today": cost.blended_usd_per_mtok(today) if today else None,
        }
        if kept:
            self._serving(run, identity, kept, card, today, doc)
        if "agentic" in doc:
            self._agentic(run, identity, doc, card, today)
        self.runs.append(run)

    def _serving(self, run: dict[str, Any], identity: dict[str, Any], kept: list[dict[str, Any]],
                 card: cost.Card | None, today: cost.Card | None, doc: dict[str, Any]) -> None:
        top = max(range(len(kept)), key=lambda i: kept[i]["system_tps"])
        best = kept[top]
        users = [p["tps_per_user"] for p in kept if p.get("tps_per_user") is not None]
        ttfts = [p["ttft_ms"]["p90"] for p in kept if p["ttft_ms"].get("p90") is not None]
        ttfas = [_p(p.get("ttfa_ms"), "p90") for p in kept]
        answer_firsts = [v for v in ttfas if v is not None]
        issued = sum(p["requests"]["issued"] for p in kept)
        failed = sum(p["requests"]["failed"] for p in kept)
        at_run, each = cost.serving_costs(card, kept) if card else (_NO_COST, None)
        at_today, each_today = cost.serving_costs(today, kept) if today else (None, None)
        uncached = [_uncached(card, p) for p in kept]
        run["cache_hit_rate"], run["cache_status"] = cache_figures(kept)
        run["usd_per_mtok_output_uncached_at_max_tps"] = uncached[top]
        run.update(
            max_system_tps=best["system_tps"],
            tps_per_user_at_max_tps=best.get("tps_per_user"),
            tps_at_target=max((p["system_tps"] for p in kept
                               if (p.get("tps_per_user") or 0) >= TARGET_SPEED), default=None),
            best_tps_per_user=max(users) if users else None,
            ttft_p90_ms_best=min(ttfts) if ttfts else None,
            ttfa_p90_ms_best=min(answer_firsts) if answer_firsts else None,
            reasoning_tokens=_token_sum(kept, "reasoning"),
            cache_read_tokens=_token_sum(kept, "cached_input"),
            cache_write_tokens=_token_sum(kept, "cache_write"),
            error_rate=failed / issued if issued else None,
            cost_usd=at_run.cost_usd,
            usd_per_mtok_output=at_run.usd_per_mtok_output,
            # the point the board's row stands for: the same figure as that point's row
            usd_per_mtok_output_at_max_tps=each[top].usd_per_mtok_output if each else None,
            output_tokens_per_usd=at_run.output_tokens_per_usd,
            usd_per_1k_requests=at_run.usd_per_1k_requests,
            tokens_per_kwh=at_run.tokens_per_kwh,
            usd_per_mtok_output_today=at_today.usd_per_mtok_output if at_today else None,
        )
        on_front = {row["point"] for row in frontier(kept)}
        for i, p in enumerate(kept):
            one = each[i] if each is not None else _NO_COST
            one_today = each_today[i] if each_today is not None else None
            req = p["requests"]
            self.points.append({
                **identity,
                "point": p["id"],
                "concurrency": p.get("concurrency"),
                "rate": p.get("rate"),
                "phase": p.get("phase"),
                "system_tps": p["system_tps"],
                "tps_per_user": p.get("tps_per_user"),
                "ttft_ms_p50": _p(p["ttft_ms"], "p50"),
                "ttft_ms_p90": _p(p["ttft_ms"], "p90"),
                "ttft_ms_p99": _p(p["ttft_ms"], "p99"),
                "ttft_ms_p90_ci_low": _ci(p["ttft_ms"], 0),
                "ttft_ms_p90_ci_high": _ci(p["ttft_ms"], 1),
                "tpot_ms_p90": _p(p["tpot_ms"], "p90"),
                "itl_ms_p90": _p(p["itl_ms"], "p90"),
                "e2e_ms_p90": _p(p["e2e_ms"], "p90"),
                "goodput_rps": p["goodput_rps"],
                "issued": req["issued"],
                "completed": req["completed"],
                "failed": req["failed"],
                "error_rate": req["failed"] / req["issued"] if req["issued"] else None,
                "usd_per_mtok_output": one.usd_per_mtok_output,
                "on_pareto": p["id"] in on_front,
                "cost_usd": one.cost_usd,
                "usd_per_mtok_output_today": one_today.usd_per_mtok_output if one_today else None,
                "ttfa_ms_p50": _p(p.get("ttfa_ms"), "p50"),
                "ttfa_ms_p90": _p(p.get("ttfa_ms"), "p90"),
                "output_tokens": p["tokens"]["output"],
                "reasoning_tokens": p["tokens"].get("reasoning"),
                "input_tokens": p["tokens"]["input"],
                "cache_read_tokens": p["tokens"].get("cached_input"),
                "cache_write_tokens": p["tokens"].get("cache_write"),
                **dict(zip(("cache_hit_rate", "cache_status"), cache_figures([p]), strict=True)),
                "usd_per_mtok_output_uncached": uncached[i],
            })

    def _agentic(self, run: dict[str, Any], identity: dict[str, Any], doc: dict[str, Any],
                 card: cost.Card | None, today: cost.Card | None) -> None:
        block = doc["agentic"]
        spend = cost.agentic_cost(card, doc) if card else _NO_SPEND
        spend_today = cost.agentic_cost(today, doc, pinned=False) if today else None
        tokens = block.get("tokens") or {}
        output = int(tokens.get("output", 0))
        requests = sum(int(block["retry_cost"][t]["requests"]) for t in cost.TAGS)
        run.update(
            success_rate=block["success_rate"]["value"],
            pass_hat_1=block["pass_hat_k"].get("1"),
            usd_per_successful_task=spend.usd_per_successful_task,
            decision_ms_p90=_p(block["decision_ms"], "p90"),
        )
        if not run.get("points"):
            today_total = spend_today.total_usd if spend_today else None
            run.update(
                cost_usd=spend.total_usd,
                usd_per_mtok_output=cost.usd_per_mtok_output(spend.total_usd, output),
                output_tokens_per_usd=cost.output_tokens_per_usd(spend.total_usd, output),
                usd_per_1k_requests=cost.usd_per_1k_requests(spend.total_usd, requests),
                usd_per_mtok_output_today=cost.usd_per_mtok_output(today_total, output),
            )
        row: dict[str, Any] = {
            **identity,
            "trials": block["trials"],
            "tasks": len(block["tasks"]),
            **section_figures(block),
            "pass_hat_k": dict(block["pass_hat_k"]),
            "first_tool_delta_ms_p90": _p(block["first_tool_delta_ms"], "p90"),
            "overhead_ms_p90": _p(block["overhead_ms"], "p90"),
            "correct_call_rate": block.get("correct_call_rate"),
            "usd_per_task": spend.usd_per_task,
            "usd_per_successful_task": spend.usd_per_successful_task,
            "retry_spend_share": spend.retry_spend_share,
            "excess_tokens_over_reference": block.get("excess_tokens_over_reference"),
            "reasoning_tokens": tokens.get("reasoning"),
            "cache_read_tokens": tokens.get("cached_input"),
            "cache_write_tokens": tokens.get("cache_write"),
            "usd_per_successful_task_today": (
                spend_today.usd_per_successful_task if spend_today else None
            ),
            "model_version": run.get("model_version"),
            "success_n": block["success_rate"]["n"],
            "quality_workload": bool(doc["workload"].get("quality")),
            "reference_endpoint": bool(doc["endpoint"]["model"].get("reference")),
            "source_category": (doc["workload"].get("source") or {}).get("category"),
        }
        row.update(load_row(block))
        for name in _CALLS:
            row[f"calls_{name}"] = block["calls"][name]
        for tag in cost.TAGS:
            entry = block["retry_cost"][tag]
            row[f"retry_{tag}_requests"] = entry["requests"]
            row[f"retry_{tag}_tokens"] = entry["tokens"]
            row[f"retry_{tag}_seconds"] = entry["seconds"]
            row[f"retry_{tag}_usd"] = spend.usd_by_tag.get(tag)
        self.agentic.append(row)


def _uncached(card: cost.Card | None, point: dict[str, Any]) -> float | None:
    """$ per M output tokens of the point with every input token at the input price."""
    if not card:
        return None
    return cost.usd_per_mtok_output(cost.point_cost_uncached_usd(card, point),
                                    cost.billed_output_tokens(card, point))


def section_figures(section: dict[str, Any]) -> dict[str, Any]:
    """The figures an agentic row and a load level's row both take from an agentic section:
    success with its interval, pass^1, decision p50/p90, tool and task-wall p90."""
    rate = section["success_rate"]
    return {
        "success_rate": rate["value"],
        "success_ci_low": rate["ci95"][0],
        "success_ci_high": rate["ci95"][1],
        "pass_hat_1": section["pass_hat_k"].get("1"),
        "decision_ms_p50": _p(section["decision_ms"], "p50"),
        "decision_ms_p90": _p(section["decision_ms"], "p90"),
        "tool_ms_p90": _p(section["tool_ms"], "p90"),
        "task_wall_ms_p90": _p(section["task_wall_ms"], "p90"),
    }


def load_row(block: dict[str, Any]) -> dict[str, Any]:
    """The LOAD_COLUMNS of an agentic section (all None without load levels)."""
    cap = block.get("capacity")
    if not cap:
        return dict.fromkeys(LOAD_COLUMNS)
    gate = {row["concurrency"]: row for row in cap["levels"]}
    levels = []
    for level in block["levels"]:
        section, agents = level["summary"], level["concurrency"]
        levels.append({
            "agents": agents, **section_figures(section),
            "trials": section["success_rate"]["n"],
            "decision_ms_p99": _p(section["decision_ms"], "p99"),
            "harness_lag_ms_p90": _p(level["harness_lag_ms"], "p90"),
            "tokens_per_successful_task": level["tokens_per_successful_task"],
            "retry_tokens_per_successful_task": level["retry_tokens_per_successful_task"],
            "usd_per_successful_task": section["usd_per_successful_task"],
            "errors": sum(level["request_errors"].values()),
            "at_slo": bool(gate.get(agents, {}).get("at_slo")),
        })
    return {"agents_at_slo": cap["agents_at_slo"],
            "agents_per_usd_hour": cap["agents_per_usd_hour"],
            "agents_slo_decision_p90_ms": cap["decision_p90_slo_ms"], "load_levels": levels}


_NO_COST = cost.RunCost(None, 0, 0, 0.0, None, None, None, None, None)
_NO_SPEND = cost.AgenticCost(None, {}, None, None, None)


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
        rows.append({
            "endpoint_id": doc["id"],
            "provider": doc["provider"],
            "model": doc["model"]["name"],
            "model_version": _model_version(doc),
            "division": doc["division"],
            "region": doc["region"],
            "hardware": _hardware(doc),
            "input_usd_per_mtok": card.get("input_usd_per_mtok"),
            "output_usd_per_mtok": card.get("output_usd_per_mtok"),
            "cached_input_usd_per_mtok": card.get("cached_input_usd_per_mtok"),
            "usd_per_hour": card.get("usd_per_hour"),
            "effective_date": card.get("effective_date"),
            "source_url": card.get("source_url"),
            "blended_usd_per_mtok": cost.blended_usd_per_mtok(card),
            "power_kw": card.get("power_kw"),
            "rate_limit_tier": (doc.get("rate_limits") or {}).get("tier"),
        })
    return rows


STORED = "rows in the build cache's frames"
"""`Checked.derived` of a file whose rows the build cache keeps
(epbench.generator.build.row_store)."""


def tables_from_checked(checked: list[Checked], report: Report, results_dir: Path,
                        project: Path) -> Tables:
    """Tables from already-validated files (their documents are kept unless rejected), built
    the way the build cache builds them (per shard, then together:
    epbench.generator.build.row_store)."""
    from epbench.generator.build.build_cache import shard_of
    from epbench.generator.build.row_store import assemble, shard_frames

    make = RowMaker(results_dir, project)
    root = os.path.abspath(results_dir)
    by_shard: dict[int, dict[str, Rows]] = {}
    order = []
    for item in checked:
        if item.kind != "result" or status_for(item.findings) == "rejected":
            continue
        rows = item.derived if isinstance(item.derived, Rows) else make(item)
        if rows is None:
            continue
        rel = os.path.relpath(os.path.abspath(item.path), root).replace(os.sep, "/")
        by_shard.setdefault(shard_of(rel), {})[rel] = Rows(*(
            [r if isinstance(r, list) else [r.get(c) for c in columns] for r in getattr(rows, n)]
            for n, columns in (("runs", RUN_COLUMNS), ("points", POINT_COLUMNS),
                               ("agentic", AGENTIC_COLUMNS))))
        order.append(rel)
    shards = [shard_frames(by_shard[n], TABLE_COLUMNS) for n in sorted(by_shard)]
    return tables_from_frames(assemble(shards, order, TABLE_COLUMNS), report, project)


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


def build_tables(results_dir: Path, project: Path, reuse: Reuse | None = None) -> Tables:
    """Validate every file under results_dir and aggregate the ones that were not rejected.
    With `reuse` (the incremental build, epbench.generator.build.cached_tables), files it
    knows are not read again."""
    if not results_dir.is_dir():
        return tables_from_checked([], Report(), results_dir, project)
    report, checked = validate_documents([results_dir], None, None,
                                         post=RowMaker(results_dir, project), reuse=reuse)
    return tables_from_checked(checked, report, results_dir, project)


__all__ = ["AGENTIC_COLUMNS", "ENDPOINT_COLUMNS", "HISTORY_COLUMNS", "POINT_COLUMNS",
           "RUN_COLUMNS", "Tables", "build_tables"]
