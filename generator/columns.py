"""Every column of the site's tables, declared once: its name, the table it is in, how its value
is taken from a result, its header on the pages, its unit, how its numbers show, a one-line
definition that links to the methodology section defining it, and what docs/tables.md says.

From here come the tables' columns and their order (epbench.generator.tables builds each row
with the `get` of its columns; the downloads keep that order), the boards' and buyer pages'
headers with their tooltips (`Column`, read by board.js and buyer.js) and docs/tables.md
(epbench.generator.docs_gen.tables_reference; a test holds the committed file to it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from epbench.generator import cost

# Sections of the generated methodology page (docs_gen.methodology's headings).
POINT = "per-measurement-point"
AGENTIC = "agentic-workloads"
COST = "cost"
RULES = "leaderboard-rules"
TABLES = "table-columns"
# Formula blocks (epbench.generator.formulas: the docstrings of the code that computes them).
THROUGHPUT = "formula-throughput"
LATENCY = "formula-latency"
F_MTOK = "formula-usd_per_mtok_output"
F_POINT = "formula-point_cost_usd"
F_CACHE = "formula-cache_block"
F_UNCACHED = "formula-point_cost_uncached_usd"
F_BLEND = "formula-blended_usd_per_mtok"
F_TPD = "formula-output_tokens_per_usd"
F_1K = "formula-usd_per_1k_requests"
F_SUCC = "formula-usd_per_successful_task"
F_TASK = "formula-usd_per_task"
WILSON = "formula-wilson"
PASSK = "formula-passk"
F_RETRY = "formula-retry_spend_share"
F_CAPACITY = "formula-capacity"

# Where a row's value comes from (`Spec.part`): the result itself, its serving sweep (when a
# point was kept), its agentic section, or a step after the rows are built (`filled_by`).
RESULT, SERVING, SECTION, LATER = "result", "serving", "agentic", "later"


@dataclass(frozen=True)
class Spec:
    """One column of one table."""

    name: str
    meaning: str  # docs/tables.md
    get: Callable[[Any], Any] | None = None  # the value, from the table's source (below)
    part: str = RESULT
    filled_by: str = ""  # for part LATER: the module that fills the column
    label: str = ""  # the header on the pages
    unit: str = ""  # the unit of the values (docs/tables.md)
    format: str = ""  # on the pages: tps, ms, usd, pct (a 0..1 share shown as %), int, num
    definition: str = ""  # the header's tooltip
    anchor: str = ""  # the methodology section the tooltip links to
    axis: str = ""  # the figure as a chart axis and the History metric picker name it


# The sources a column's `get` reads. epbench.generator.tables._Builder sets them, once per
# result (Result), measured point (Point), agentic section (Section) and endpoint file.


@dataclass(slots=True)
class Sweep:
    """A run's cost figures: of its serving sweep, else of its agentic spend."""

    cost_usd: float | None = None
    usd_per_mtok_output: float | None = None
    output_tokens_per_usd: float | None = None
    usd_per_1k_requests: float | None = None
    tokens_per_kwh: float | None = None
    usd_per_mtok_output_today: float | None = None


@dataclass(slots=True)
class Result:
    """One valid result, and the figures several of its columns share."""

    doc: dict[str, Any]
    endpoint: dict[str, Any]
    card: Any
    today: Any
    kept: list[dict[str, Any]]
    flags: list[str]
    day: Any
    score: Any
    tier: Any
    reasons: list[Any]
    result_path: str
    journal_path: str | None
    sweep: Sweep
    # the serving sweep (when a point was kept)
    top: int = 0
    each: Any = None  # each kept point's cost at run time
    each_today: Any = None  # and today
    uncached: list[float | None] | None = None
    cache: tuple[float | None, str | None] = (None, None)
    # the agentic section
    spend: Any = None


@dataclass(slots=True)
class Point:
    """One kept point of a serving result, with its cost at run time and today."""

    p: dict[str, Any]
    one: Any
    one_today: Any
    uncached: float | None
    on_pareto: bool
    cache: tuple[float | None, str | None]


@dataclass(slots=True)
class Section:
    """A result's agentic section, with its spend at run time and today."""

    block: dict[str, Any]
    doc: dict[str, Any]
    spend: Any
    spend_today: Any
    model_version: str | None


def p_of(dist: dict[str, Any] | None, key: str) -> float | None:
    """A percentile of a distribution block (None without one)."""
    return None if not dist else dist.get(key)


def ci_of(dist: dict[str, Any] | None, side: int) -> float | None:
    """One end of a distribution's p90 bootstrap interval (None when it carries none)."""
    interval = ((dist or {}).get("ci95") or {}).get("p90")
    return interval[side] if isinstance(interval, list) and len(interval) == 2 else None


def hardware_of(endpoint: dict[str, Any]) -> str | None:
    """`<count>x <accelerator>` of an endpoint block or file (None without an accelerator)."""
    hw = endpoint.get("hardware") or {}
    accelerator = hw.get("accelerator")
    if not accelerator:
        return None
    count = hw.get("count")
    return f"{count}x {accelerator}" if count and count > 1 else str(accelerator)


def model_version_of(endpoint: dict[str, Any]) -> str | None:
    """The model's version, else its snapshot date."""
    model = endpoint.get("model") or {}
    return model.get("version") or model.get("snapshot_date")


def token_sum(points: list[dict[str, Any]], key: str) -> int | None:
    """A token figure summed over points, or None when no point reports it (older results,
    APIs that do not report it): absent is not zero."""
    values = [p["tokens"][key] for p in points if isinstance(p["tokens"].get(key), int)]
    return sum(values) if values else None


TARGET_SPEED = 20.0
"""tokens/s per user: the default target of the buyer pages (a reader's comfortable reading
speed); a run's `tps_at_target` is its highest system throughput at a point that reaches it."""


def _best(r: Result) -> dict[str, Any]:
    return r.kept[r.top]


def _maximum(values: Iterable[Any]) -> Any:
    found = [v for v in values if v is not None]
    return max(found) if found else None


def _minimum(values: Iterable[Any]) -> Any:
    found = [v for v in values if v is not None]
    return min(found) if found else None


def _error_rate(failed: int, issued: int) -> float | None:
    return failed / issued if issued else None


AS_RUNS = "as in `runs`"

# --- the identity of a result: the first columns of points and agentic, and in runs ---------
IDENTITY: tuple[Spec, ...] = (
    Spec("run_id", "the result's unique run id", lambda r: r.doc["run_id"]),
    Spec("endpoint_id", "endpoint id", lambda r: r.endpoint["id"], label="endpoint",
         definition="The endpoint file (endpoints/<id>.yaml): provider, model, region, price "
                    "card. On the boards the link opens the result behind the row; on the "
                    "ranked table, the endpoint's page.", anchor=TABLES),
    Spec("provider", "provider name from the pinned endpoint block",
         lambda r: r.endpoint["provider"], label="provider",
         definition="Who serves the endpoint.", anchor=TABLES),
    Spec("model", "model name", lambda r: r.endpoint["model"]["name"], label="model",
         definition="Model name as the endpoint file gives it.", anchor=TABLES),
    Spec("api", "the wire API the result used: `openai-chat`, `openai-responses` or "
                "`anthropic-messages` (results written before it existed: `openai-chat`)",
         lambda r: r.endpoint.get("api", "openai-chat"), label="API"),
    Spec("division", "`serviced`, `self-hosted` or `emulated`", lambda r: r.endpoint["division"],
         label="division",
         definition="serviced (an API priced per token), self-hosted (priced per hour) or "
                    "emulated (epbench's own emulator: never ranked).", anchor=RULES),
    Spec("hardware", "hardware description (self-hosted), else null",
         lambda r: hardware_of(r.endpoint)),
    Spec("region", "endpoint region", lambda r: r.endpoint["region"], label="region",
         definition="Where the endpoint runs.", anchor=TABLES),
    Spec("client_region", "where the client ran", lambda r: r.doc["client"].get("region"),
         label="client region",
         definition="Where the benchmark client ran: latency includes the network between "
                    "the two.", anchor=TABLES),
    Spec("workload_id", "workload id", lambda r: r.doc["workload"]["id"], label="workload",
         definition="The workload definition (workloads/...yaml) that was sent.",
         anchor=TABLES),
    Spec("date", "run date, YYYY-MM-DD (from started_at, UTC)",
         lambda r: r.day.isoformat() if r.day else None, label="date",
         definition="Run date (UTC) of the result; on the ranked table the link opens the "
                    "result.", anchor=TABLES),
    Spec("submitter", "submitter id (folder under results/)",
         lambda r: (r.doc.get("submitter") or {}).get("name")),
    Spec("disclosure_score", "share (0..1) of reproducibility fields present",
         lambda r: r.score.score, label="disclosure", unit="share 0..1", format="num",
         definition="Share (0 to 1) of the reproducibility fields the result discloses.",
         anchor=RULES),
    Spec("rankable", "true when `epbench.core.rankable.rankability` finds no reason against "
                     "ranking it (see below)",
         lambda r: not r.reasons, label="ranked",
         definition="Whether the result may be ranked; the tooltip says why not.",
         anchor=RULES),
    Spec("unranked_reasons", "why not, short sentences (self-reported: and why, always first "
                             "for a self-reported result; emulated endpoint; quick run; "
                             "imported without journal; no evidence; no round trips measured "
                             "by the runner; every request failed; error rate above the "
                             "workload's limit; fewer samples than a p90 needs; harness fault; "
                             "resumed after a long gap; tool-call quality below the reference, "
                             "added by the quality gate); in CSV joined by \"; \"",
         lambda r: [reason.text for reason in r.reasons]),
    Spec("tier", "provenance: `attested` (the project's scheduled benchmark signed it), "
                 "`attested-by-submitter` (epbench's reusable workflow at a release tag, in "
                 "the submitter's repository) or `self-reported` (no valid attestation: not "
                 "ranked unless the reader includes self-reported results)",
         lambda r: r.tier.tier, label="provenance",
         definition="Provenance: attested (the project's scheduled benchmark signed it), "
                    "attested-by-submitter (epbench's workflow signed it in the submitter's "
                    "repository) or self-reported (no valid attestation: shown and ranked only "
                    "when you include self-reported results). The tooltip says why.",
         anchor=RULES),
    Spec("tier_reason", "one line: who signed it, or why it is self-reported (e.g. \"no "
                        "attestation bundle\")", lambda r: r.tier.reason),
)
_ID = {spec.name: spec for spec in IDENTITY}

_QUALITY = "epbench.generator.quality"
_SUITE = "epbench.generator.agentic_suite"
_CONFIRM = "epbench.generator.confirmation"

# --- the figures an agentic row and each of its load levels take from an agentic section ----
# (source: the section, a dict: the result's `agentic` block or one level's `summary`)
SECTION_FIGURES: tuple[Spec, ...] = (
    Spec("success_rate", "share of successful trials", lambda s: s["success_rate"]["value"],
         label="success rate", unit="share 0..1", format="pct",
         definition="Agentic: successful trials ÷ trials; endpoint errors count as failures.",
         anchor=AGENTIC),
    Spec("success_ci_low", "lower end of the 95% confidence interval of success_rate",
         lambda s: s["success_rate"]["ci95"][0], label="95% low", unit="share 0..1",
         format="pct", definition="Lower bound of the 95% Wilson interval of the success "
                                  "rate.", anchor=WILSON),
    Spec("success_ci_high", "upper end of the 95% confidence interval of success_rate",
         lambda s: s["success_rate"]["ci95"][1], label="95% high", unit="share 0..1",
         format="pct", definition="Upper bound of the 95% Wilson interval of the success "
                                  "rate.", anchor=WILSON),
    Spec("pass_hat_1", "pass^1", lambda s: s["pass_hat_k"].get("1"), label="pass^1",
         unit="share 0..1", format="pct",
         definition="pass^1: mean over tasks of the chance one trial succeeds.",
         anchor=PASSK),
    Spec("decision_ms_p50", "request sent to last tool-call argument byte, p50",
         lambda s: p_of(s["decision_ms"], "p50"), unit="ms"),
    Spec("decision_ms_p90", "request sent to last tool-call argument byte, p90",
         lambda s: p_of(s["decision_ms"], "p90"), label="decision p90 (ms)", unit="ms",
         format="ms", definition="Agentic: request sent to the last tool-call argument byte, "
                                 "90th percentile.", anchor=AGENTIC),
    Spec("tool_ms_p90", "tool execution time, p90", lambda s: p_of(s["tool_ms"], "p90"),
         unit="ms"),
    Spec("task_wall_ms_p90", "task wall time, p90", lambda s: p_of(s["task_wall_ms"], "p90"),
         unit="ms"),
)
_FIG = {spec.name: spec for spec in SECTION_FIGURES}
_SECTION_GETS = [(spec.name, spec.get) for spec in SECTION_FIGURES if spec.get is not None]

_PER_SUCCESS = Spec("usd_per_successful_task", "total spend / successful trials (retries "
                                              "included)",
                    lambda a: a.spend.usd_per_successful_task, label="per successful task ($)",
                    unit="USD", format="usd",
                    definition="Agentic: total spend, retries included, ÷ successful trials.",
                    anchor=F_SUCC)


def _run_of(spec: Spec, meaning: str, get: Callable[[Result], Any], **facets: str) -> Spec:
    """An agentic figure as a column of runs: its header and definition, its own meaning."""
    return replace(spec, meaning=meaning, get=get, part=SECTION, **facets)


# --- runs: one row per valid result (source: Result) -------------------------------------------
RUNS: tuple[Spec, ...] = (
    _ID["run_id"],
    Spec("short_id", "first 8 characters of run_id (as in the file name)",
         lambda r: r.doc["run_id"][:8]),
    _ID["submitter"],
    Spec("submitter_relationship", "`provider`, `customer` or `independent`",
         lambda r: (r.doc.get("submitter") or {}).get("relationship")),
    _ID["endpoint_id"], _ID["provider"], _ID["model"],
    Spec("model_version", "model version or snapshot (null if not disclosed)",
         lambda r: model_version_of(r.endpoint)),
    _ID["division"], _ID["hardware"],
    Spec("engine", "serving engine (self-hosted), else null",
         lambda r: (r.endpoint.get("hardware") or {}).get("engine")),
    _ID["region"], _ID["client_region"], _ID["workload_id"],
    Spec("workload_version", "workload version", lambda r: r.doc["workload"]["version"]),
    Spec("workload_kind", "`serving` or `agentic`", lambda r: r.doc["workload"]["kind"]),
    Spec("pattern", "`concurrency`, `poisson`, `burst`, `conversation` or `agentic`",
         lambda r: r.doc["workload"].get("pattern")),
    _ID["date"],
    Spec("started_at", "ISO 8601 start time", lambda r: r.doc["started_at"]),
    Spec("finished_at", "ISO 8601 end time", lambda r: r.doc["finished_at"]),
    Spec("harness_version", "epbench (or importer source) version",
         lambda r: r.doc["harness"]["version"]),
    Spec("quick", "true if run with `--quick` (shortened points)",
         lambda r: bool(r.doc["settings"].get("quick"))),
    _ID["disclosure_score"],
    Spec("flags", "list of finding ids (severity flag) attached to this result",
         lambda r: r.flags, label="flags",
         definition="Findings of epbench validate published with the result.", anchor=RULES),
    _ID["rankable"], _ID["unranked_reasons"],
    Spec("source_format", "`epbench`, `mlperf-endpoints` or `vllm-bench`",
         lambda r: (r.doc.get("source") or {}).get("format", "epbench")),
    Spec("result_path", "raw JSON relative to the site root: "
                        "`results/<submitter>/<endpoint>/<file>.json`", lambda r: r.result_path),
    Spec("journal_path", "the run's journal (evidence) relative to the site root, beside its "
                         "result: `results/<submitter>/<endpoint>/<file>.events.jsonl.gz`; "
                         "null when the result pins none (imported, or written before "
                         "journals were submitted). Its uncompressed bytes hash to the "
                         "result's `evidence.sha256`", lambda r: r.journal_path),
    Spec("page", "the run's page: `runs/<run_id>/`", lambda r: f"runs/{r.doc['run_id']}/"),
    Spec("points", "number of measured points", lambda r: len(r.kept)),
    Spec("max_system_tps", "highest system output tokens/s over the points",
         lambda r: _best(r)["system_tps"], SERVING, label="max system throughput (tok/s)",
         axis="max system throughput (tokens/s)", unit="tokens/s", format="tps",
         definition="Highest system throughput over the run's points: output tokens of "
                    "requests completed in the measurement window ÷ window seconds.",
         anchor=THROUGHPUT),
    Spec("tps_per_user_at_max_tps", "tps_per_user of the point with max_system_tps",
         lambda r: _best(r).get("tps_per_user"), SERVING,
         label="per-user speed there (tok/s)", unit="tokens/s", format="tps",
         definition="Per-user speed (1000 ÷ TPOT p90 ms) at the point of highest system "
                    "throughput.", anchor=POINT),
    Spec("best_tps_per_user", "highest tps_per_user over the points",
         lambda r: _maximum(p.get("tps_per_user") for p in r.kept), SERVING,
         label="best per-user speed (tok/s)", axis="best per-user speed (tokens/s)",
         unit="tokens/s", format="tps",
         definition="Highest per-user speed (1000 ÷ TPOT p90 ms) over the run's points, "
                    "usually at concurrency 1.", anchor=POINT),
    Spec("ttft_p90_ms_best", "lowest p90 TTFT over the points",
         lambda r: _minimum(p["ttft_ms"].get("p90") for p in r.kept), SERVING,
         label="best TTFT p90 (ms)", unit="ms", format="ms",
         definition="Lowest time-to-first-token p90 over the run's points (first "
                    "content-bearing event minus send time).", anchor=LATENCY),
    Spec("error_rate", "failed / issued over all points",
         lambda r: _error_rate(sum(p["requests"]["failed"] for p in r.kept),
                               sum(p["requests"]["issued"] for p in r.kept)), SERVING,
         label="error rate", unit="share 0..1", format="pct",
         definition="Failed requests ÷ issued requests; every error class counts against the "
                    "endpoint.", anchor=POINT),
    Spec("usd_per_mtok_output", "the whole-sweep average: run cost / output tokens * 1e6 over "
                                "every point, price card pinned at run time (agentic: its "
                                "whole spend / its output tokens)",
         lambda r: r.sweep.usd_per_mtok_output,
         label="whole-sweep average $ per M output tokens",
         axis="whole-sweep average USD per million output tokens",
         unit="USD per M output tokens", format="usd",
         definition="The whole-sweep average: run cost ÷ output tokens × 1,000,000 over every "
                    "point of the sweep, not the cost at any one point. The run cost prices "
                    "input and output tokens with the card pinned at run time (self-hosted: "
                    "hours × $/hour), so it is above the card's output price when inputs are "
                    "long. An agentic result has no sweep: its whole spend ÷ its output "
                    "tokens.", anchor=F_MTOK),
    Spec("blended_usd_per_mtok", "(3 * input price + output price) / 4, pinned card (per-token "
                                 "cards only)",
         lambda r: cost.blended_usd_per_mtok(r.card) if r.card else None,
         label="card blended 3:1 ($/Mtok)", unit="USD per M tokens", format="usd",
         definition="(3 × input price + output price) ÷ 4 from the pinned card: a 3:1 "
                    "input:output mix (per-token cards only).", anchor=F_BLEND),
    Spec("output_tokens_per_usd", "output tokens / run cost",
         lambda r: r.sweep.output_tokens_per_usd, label="output tokens per USD",
         unit="tokens per USD", format="int",
         definition="Output tokens ÷ run cost (input and output priced).", anchor=F_TPD),
    Spec("usd_per_1k_requests", "run cost / completed requests * 1000",
         lambda r: r.sweep.usd_per_1k_requests, label="per 1k requests ($)",
         unit="USD per 1000 requests", format="usd",
         definition="Run cost ÷ completed requests × 1,000.", anchor=F_1K),
    Spec("usd_per_mtok_output_today", "as usd_per_mtok_output, with today's card from "
                                      "endpoints/<id>.yaml (null if none)",
         lambda r: r.sweep.usd_per_mtok_output_today, label="same average, today's card",
         unit="USD per M output tokens", format="usd",
         definition="The whole-sweep average $ per M output tokens, re-priced with today's "
                    "card from endpoints/<id>.yaml.", anchor=COST),
    _run_of(_FIG["success_rate"], "agentic: task success rate (null for serving)",
            lambda r: r.doc["agentic"]["success_rate"]["value"], axis="agentic success rate"),
    _run_of(_FIG["pass_hat_1"], "agentic: pass^1 (null for serving)",
            lambda r: r.doc["agentic"]["pass_hat_k"].get("1")),
    _run_of(_PER_SUCCESS, "agentic: total spend (retries included) / successful trials",
            lambda r: r.spend.usd_per_successful_task),
    _run_of(_FIG["decision_ms_p90"], "agentic: p90 decision time",
            lambda r: p_of(r.doc["agentic"]["decision_ms"], "p90"),
            axis="agentic decision time p90 (ms)"),
    Spec("tps_at_target", "highest system_tps over the points whose tps_per_user reaches the "
                          "buyer pages' default target, 20 tokens/s (null when none does)",
         lambda r: max((p["system_tps"] for p in r.kept
                        if (p.get("tps_per_user") or 0) >= TARGET_SPEED), default=None),
         SERVING, axis="throughput at the default target, 20 tokens/s per user (tokens/s)",
         unit="tokens/s", format="tps",
         definition="Highest system throughput at a point whose per-user speed reaches the "
                    "buyer pages' default target, 20 tokens/s.", anchor=POINT),
    Spec("cost_usd", "total cost of the run at run time (points' costs summed; agentic: all "
                     "tags)", lambda r: r.sweep.cost_usd, unit="USD"),
    Spec("tokens_per_kwh", "output tokens per kWh (hourly cards with power_kw)",
         lambda r: r.sweep.tokens_per_kwh, unit="tokens per kWh"),
    Spec("blended_usd_per_mtok_today", "blended 3:1 price of today's card",
         lambda r: cost.blended_usd_per_mtok(r.today) if r.today else None,
         unit="USD per M tokens"),
    Spec("disclosure_missing", "list of the reproducibility fields the result does not "
                               "disclose", lambda r: r.score.missing),
    Spec("usd_per_mtok_output_at_max_tps", "usd_per_mtok_output of the point with "
                                           "max_system_tps (that point's row in `points`): the "
                                           "figure the boards show",
         lambda r: r.each[r.top].usd_per_mtok_output if r.each else None, SERVING,
         label="$ per M output tokens at max throughput", unit="USD per M output tokens",
         format="usd",
         definition="$ per M output tokens at the point of highest system throughput: that "
                    "point's cost (input and output tokens at the card pinned at run time; "
                    "self-hosted: its hours × $/hour) ÷ its output tokens × 1,000,000, as the "
                    "home and compare pages show it for their point.", anchor=F_POINT),
    Spec("quality", "tool-call quality gate, when the endpoint has gated quality results: this "
                    "run's comparison (or, on its other rows, the endpoint's lowest-p one) as "
                    "\"rate [95% interval] vs reference rate [95% interval] (p = ...)\"",
         part=LATER, filled_by=_QUALITY, label="tool-call quality vs reference"),
    Spec("quality_below", "true when that comparison is below the reference (p < 0.01 that the "
                          "rate is under 97% of it)", part=LATER, filled_by=_QUALITY),
    Spec("bfcl", "the endpoint's latest result per BFCL category: list of {category, "
                 "workload_id, success_rate, low, high, n, reference_rate}",
         part=LATER, filled_by=_QUALITY),
    _ID["api"],
    Spec("ttfa_p90_ms_best", "lowest p90 time to the first answer token (reasoning excluded) "
                             "over the points; null for results written before it was "
                             "recorded",
         lambda r: _minimum(p_of(p.get("ttfa_ms"), "p90") for p in r.kept), SERVING,
         label="best answer-token p90 (ms)", unit="ms"),
    Spec("reasoning_tokens", "reasoning tokens the endpoint reported, summed over the points "
                             "(part of the output tokens); null when none reported them",
         lambda r: token_sum(r.kept, "reasoning"), SERVING, unit="tokens"),
    Spec("cache_read_tokens", "input tokens read from the endpoint's prompt cache, summed over "
                              "the points; null when none reported them",
         lambda r: token_sum(r.kept, "cached_input"), SERVING, unit="tokens"),
    Spec("cache_write_tokens", "input tokens written to the endpoint's prompt cache, summed "
                               "over the points; null when none reported them",
         lambda r: token_sum(r.kept, "cache_write"), SERVING, unit="tokens"),
    _ID["tier"], _ID["tier_reason"],
    Spec("confirmation", "a self-reported serving result held against the scheduled "
                         "benchmark's attested runs of the same endpoint and workload within "
                         "14 days (generator/confirmation.py): `confirmed` (throughput and "
                         "TTFT p90 agree at every common point: within the 95% interval, or "
                         "within 10%), `disagrees`, or null", part=LATER, filled_by=_CONFIRM),
    Spec("confirmed_by", "the run id of that attested run", part=LATER, filled_by=_CONFIRM),
    # issue 25: the prompt cache (epbench.generator.prompt_cache)
    Spec("cache_hit_rate", "prompt-cache hit rate over the points: cached input tokens / input "
                           "tokens of the requests whose usage reported a cached count "
                           "(points' `cache` blocks pooled); null when none reported one, "
                           "which is not 0",
         lambda r: r.cache[0], SERVING, label="prompt-cache hit rate", unit="share 0..1",
         format="pct",
         definition="Prompt-cache hit rate: cached input tokens ÷ input tokens, over the "
                    "requests whose usage reported a cached count. \"not reported by the "
                    "endpoint\" when none did: the endpoint did not say, which is not 0%.",
         anchor=F_CACHE),
    Spec("cache_status", "`reported`, `partly reported (k of n requests)` (the rate is over "
                         "those k), `not reported by the endpoint` (cache_hit_rate null) or "
                         "`no input tokens`; null for results written before cache figures",
         lambda r: r.cache[1], SERVING),
    Spec("usd_per_mtok_output_uncached_at_max_tps", "as usd_per_mtok_output_at_max_tps with "
                                                    "every input token at the card's input "
                                                    "price (no cached-input or cache-write "
                                                    "prices): beside it, what the cache saved "
                                                    "(equal on hourly cards)",
         lambda r: r.uncached[r.top] if r.uncached else None, SERVING,
         label="same, without cache prices", unit="USD per M output tokens", format="usd",
         definition="$ per M output tokens at the point of highest system throughput with "
                    "every input token at the card's input price: beside the cost with cache "
                    "prices, what the cache saved (the same on an hourly card).",
         anchor=F_UNCACHED),
)

# --- points: one row per measured point of a serving result (source: Point) -----------------
POINTS: tuple[Spec, ...] = (
    *IDENTITY,
    Spec("point", "point id (e.g. `c8`, `r2.5`)", lambda s: s.p["id"]),
    Spec("concurrency", "closed-loop concurrency, else null", lambda s: s.p.get("concurrency")),
    Spec("rate", "open-loop arrival rate (requests/s), else null", lambda s: s.p.get("rate"),
         unit="requests/s"),
    Spec("phase", "burst phase (`base`, `spike`, `recovery`), else null",
         lambda s: s.p.get("phase")),
    Spec("system_tps", "output tokens completed in the window / window seconds",
         lambda s: s.p["system_tps"], unit="tokens/s",
         format="tps",
         definition="System throughput at this point: output tokens of requests completed in "
                    "the measurement window ÷ window seconds, all users together.",
         anchor=THROUGHPUT),
    Spec("tps_per_user", "1000 / tpot_ms p90", lambda s: s.p.get("tps_per_user"),
         label="per-user speed (tok/s)", unit="tokens/s", format="tps",
         definition="Per-user speed at this point: 1000 ÷ TPOT p90 in ms, the output tokens "
                    "per second one user sees.", anchor=POINT),
    Spec("ttft_ms_p50", "time to first token, p50", lambda s: p_of(s.p["ttft_ms"], "p50"),
         unit="ms"),
    Spec("ttft_ms_p90", "time to first token, p90", lambda s: p_of(s.p["ttft_ms"], "p90"),
         label="TTFT p90 (ms)", unit="ms", format="ms",
         definition="Time to first token, 90th percentile at this point: first "
                    "content-bearing event minus send time.", anchor=LATENCY),
    Spec("ttft_ms_p99", "time to first token, p99", lambda s: p_of(s.p["ttft_ms"], "p99"),
         unit="ms"),
    Spec("tpot_ms_p90", "time per output token, p90", lambda s: p_of(s.p["tpot_ms"], "p90"),
         unit="ms"),
    Spec("itl_ms_p90", "inter-token latency, p90", lambda s: p_of(s.p["itl_ms"], "p90"),
         unit="ms"),
    Spec("e2e_ms_p90", "end-to-end latency, p90", lambda s: p_of(s.p["e2e_ms"], "p90"),
         unit="ms"),
    Spec("goodput_rps", "requests/s meeting every SLO of the workload",
         lambda s: s.p["goodput_rps"], unit="requests/s"),
    Spec("issued", "requests issued", lambda s: s.p["requests"]["issued"]),
    Spec("completed", "requests completed", lambda s: s.p["requests"]["completed"]),
    Spec("failed", "requests failed", lambda s: s.p["requests"]["failed"]),
    Spec("error_rate", "failed / issued",
         lambda s: _error_rate(s.p["requests"]["failed"], s.p["requests"]["issued"]),
         label="errors", unit="share 0..1", format="pct",
         definition="Failed requests ÷ issued requests; every error class counts against the "
                    "endpoint.", anchor=POINT),
    Spec("usd_per_mtok_output", "point cost / output tokens * 1e6 (pinned card)",
         lambda s: s.one.usd_per_mtok_output, label="$ per M output tokens",
         unit="USD per M output tokens", format="usd",
         definition="Cost of this point's requests (input and output tokens at the card "
                    "pinned at run time; self-hosted: the point's hours × $/hour) ÷ its "
                    "output tokens × 1,000,000.", anchor=F_POINT),
    Spec("on_pareto", "true when the point is on the result's Pareto frontier",
         lambda s: s.on_pareto),
    Spec("cost_usd", "the point's cost at run time", lambda s: s.one.cost_usd, unit="USD"),
    Spec("usd_per_mtok_output_today", "as usd_per_mtok_output, with today's card (null if "
                                      "none)",
         lambda s: s.one_today.usd_per_mtok_output if s.one_today else None,
         unit="USD per M output tokens"),
    Spec("ttfa_ms_p50", "time to the first answer token (text or tool call; reasoning does "
                        "not count), p50", lambda s: p_of(s.p.get("ttfa_ms"), "p50"),
         unit="ms"),
    Spec("ttfa_ms_p90", "time to the first answer token, p90",
         lambda s: p_of(s.p.get("ttfa_ms"), "p90"), unit="ms"),
    Spec("output_tokens", "the point's output tokens (every measured request)",
         lambda s: s.p["tokens"]["output"], unit="tokens"),
    Spec("reasoning_tokens", "reasoning tokens reported in usage (part of output_tokens); null "
                             "when not reported", lambda s: s.p["tokens"].get("reasoning"),
         unit="tokens"),
    Spec("input_tokens", "the point's input tokens (every measured request)",
         lambda s: s.p["tokens"]["input"], unit="tokens"),
    Spec("cache_read_tokens", "prompt-cache reads reported in usage; null when not reported",
         lambda s: s.p["tokens"].get("cached_input"), unit="tokens"),
    Spec("cache_write_tokens", "prompt-cache writes reported in usage; null when not reported",
         lambda s: s.p["tokens"].get("cache_write"), unit="tokens"),
    Spec("ttft_ms_p90_ci_low", "lower end of the 95% bootstrap interval of ttft_ms_p90 (null "
                               "when the result carries none)",
         lambda s: ci_of(s.p["ttft_ms"], 0), unit="ms"),
    Spec("ttft_ms_p90_ci_high", "upper end of that interval",
         lambda s: ci_of(s.p["ttft_ms"], 1), unit="ms"),
    # issue 25: the prompt cache (epbench.generator.prompt_cache)
    Spec("cache_hit_rate", "cached input tokens / input tokens of the point's requests whose "
                           "usage reported a cached count (the result's `cache.hit_rate`); "
                           "null when none reported one, which is not 0",
         lambda s: s.cache[0], unit="share 0..1"),
    Spec("cache_status", "as in `runs`, for this point", lambda s: s.cache[1]),
    Spec("usd_per_mtok_output_uncached", "as usd_per_mtok_output with every input token at the "
                                         "card's input price (no cache prices)",
         lambda s: s.uncached, unit="USD per M output tokens"),
)

_CALLS = ("ok", "invalid_json", "unknown_tool", "schema_mismatch", "missing_id", "duplicate_id",
          "stream_truncated")
_RETRY = {"requests": ("requests", "requests"), "tokens": ("tokens", "tokens"),
          "seconds": ("seconds", "s"), "usd": ("spend at the pinned card", "USD")}


def _calls(name: str) -> Spec:
    return Spec(f"calls_{name}", f"tool calls of validity class `{name}`",
                lambda a: a.block["calls"][name])


def _retry(tag: str, measure: str) -> Spec:
    what, unit = _RETRY[measure]
    if measure == "usd":
        return Spec(f"retry_{tag}_usd", f"{what} of the `{tag}` requests",
                    lambda a: a.spend.usd_by_tag.get(tag), unit=unit)
    return Spec(f"retry_{tag}_{measure}", f"{what} of the `{tag}` requests",
                lambda a: a.block["retry_cost"][tag][measure], unit=unit)


def _levels(a: Section) -> list[dict[str, Any]] | None:
    """Per load level, the figures its chart draws (None without load levels)."""
    cap = a.block.get("capacity")
    if not cap:
        return None
    gate = {row["concurrency"]: row for row in cap["levels"]}
    levels = []
    for level in a.block["levels"]:
        section, agents = level["summary"], level["concurrency"]
        levels.append({
            "agents": agents, **section_figures(section),
            "trials": section["success_rate"]["n"],
            "decision_ms_p99": p_of(section["decision_ms"], "p99"),
            "harness_lag_ms_p90": p_of(level["harness_lag_ms"], "p90"),
            "tokens_per_successful_task": level["tokens_per_successful_task"],
            "retry_tokens_per_successful_task": level["retry_tokens_per_successful_task"],
            "usd_per_successful_task": section["usd_per_successful_task"],
            "errors": sum(level["request_errors"].values()),
            "at_slo": bool(gate.get(agents, {}).get("at_slo")),
        })
    return levels


def _capacity(key: str) -> Callable[[Section], Any]:
    def get(a: Section) -> Any:
        cap = a.block.get("capacity")
        return cap[key] if cap else None
    return get


def _section(spec: Spec) -> Spec:
    """A section figure as an agentic row's column (source: Section)."""
    get = spec.get
    assert get is not None

    def of_block(a: Section) -> Any:
        return get(a.block)

    return Spec(spec.name, spec.meaning, of_block, label=spec.label, unit=spec.unit,
                format=spec.format, definition=spec.definition, anchor=spec.anchor)


# --- agentic: one row per agentic result (source: Section) -------------------------------------
AGENTIC_ROWS: tuple[Spec, ...] = (
    *IDENTITY,
    Spec("trials", "n, trials per task", lambda a: a.block["trials"]),
    Spec("tasks", "number of tasks", lambda a: len(a.block["tasks"])),
    *(_section(_FIG[n]) for n in ("success_rate", "success_ci_low", "success_ci_high",
                                  "pass_hat_1")),
    Spec("pass_hat_k", "dict k -> pass^k", lambda a: dict(a.block["pass_hat_k"])),
    *(_section(_FIG[n]) for n in ("decision_ms_p50", "decision_ms_p90")),
    Spec("first_tool_delta_ms_p90", "request sent to first tool-call delta, p90",
         lambda a: p_of(a.block["first_tool_delta_ms"], "p90"), unit="ms"),
    _section(_FIG["tool_ms_p90"]),
    Spec("overhead_ms_p90", "harness overhead, p90",
         lambda a: p_of(a.block["overhead_ms"], "p90"), unit="ms"),
    _section(_FIG["task_wall_ms_p90"]),
    *(_calls(name) for name in _CALLS),
    Spec("correct_call_rate", "share of correct calls", lambda a: a.block.get("correct_call_rate"),
         label="correct calls", unit="share 0..1", format="pct",
         definition="Agentic: tool calls that were valid and correct ÷ tool calls.",
         anchor=AGENTIC),
    *(_retry(tag, m) for tag in cost.TAGS for m in ("requests", "tokens", "seconds", "usd")),
    Spec("usd_per_task", "total spend / trials (retries included)",
         lambda a: a.spend.usd_per_task, label="per task ($)", unit="USD", format="usd",
         definition="Agentic: total spend, retries included, ÷ trials.", anchor=F_TASK),
    _PER_SUCCESS,
    Spec("retry_spend_share", "(repair + recovery + transport USD) / total USD",
         lambda a: a.spend.retry_spend_share, label="retry spend share", unit="share 0..1",
         format="pct", definition="Agentic: spend on repair, recovery and transport retries ÷ "
                                  "total spend.", anchor=F_RETRY),
    Spec("excess_tokens_over_reference", "mean over successful trials of extra tokens vs the "
                                         "reference path (ratio)",
         lambda a: a.block.get("excess_tokens_over_reference")),
    Spec("usd_per_successful_task_today", "usd_per_successful_task with today's card (null if "
                                          "none)",
         lambda a: a.spend_today.usd_per_successful_task if a.spend_today else None,
         unit="USD"),
    Spec("model_version", "the endpoint's model version", lambda a: a.model_version),
    Spec("success_n", "trials behind success_rate", lambda a: a.block["success_rate"]["n"]),
    Spec("quality_workload", "the workload is a quality workload (`quality: true`)",
         lambda a: bool(a.doc["workload"].get("quality"))),
    Spec("reference_endpoint", "the endpoint file marks it as the model vendor's own "
                               "(`model.reference`)",
         lambda a: bool(a.doc["endpoint"]["model"].get("reference"))),
    Spec("source_category", "the dataset's own category of an imported workload (e.g. BFCL "
                            "`simple_python`)",
         lambda a: (a.doc["workload"].get("source") or {}).get("category")),
    Spec("quality", "this result against the model's reference: both rates with 95% intervals "
                    "and p", part=LATER, filled_by=_QUALITY, label="quality vs reference"),
    Spec("quality_reference_run", "run id of the reference result for this model and workload",
         part=LATER, filled_by=_QUALITY),
    Spec("quality_reference_rate", "the reference's success rate", part=LATER,
         filled_by=_QUALITY),
    Spec("quality_reference_low", "lower end of the reference's 95% interval", part=LATER,
         filled_by=_QUALITY),
    Spec("quality_reference_high", "upper end of the reference's 95% interval", part=LATER,
         filled_by=_QUALITY),
    Spec("quality_p", "one-sided p-value that success is below 97% of the reference (null for "
                      "the reference itself)", part=LATER, filled_by=_QUALITY),
    Spec("quality_below", "quality_p < 0.01", part=LATER, filled_by=_QUALITY),
    Spec("reasoning_tokens", "reasoning tokens over every request whose usage reported them; "
                             "null when none did",
         lambda a: (a.block.get("tokens") or {}).get("reasoning"), unit="tokens"),
    Spec("cache_read_tokens", "prompt-cache reads over every request whose usage reported "
                              "them; null when none did",
         lambda a: (a.block.get("tokens") or {}).get("cached_input"), unit="tokens"),
    Spec("cache_write_tokens", "prompt-cache writes over every request whose usage reported "
                               "them; null when none did",
         lambda a: (a.block.get("tokens") or {}).get("cache_write"), unit="tokens"),
    Spec("suite_workloads", "the endpoint over the agentic suite "
                            "(`epbench.generator.agentic_suite`): how many workloads its newest "
                            "ranked result per workload covers; the suite_ columns are the same "
                            "on each of the endpoint's ranked rows and null on unranked ones",
         part=LATER, filled_by=_SUITE),
    Spec("suite_success_n", "trials pooled over those results (sum of success_n)", part=LATER,
         filled_by=_SUITE),
    Spec("suite_success_rate", "pooled successes (sum of round(success_rate x success_n)) / "
                               "suite_success_n", part=LATER, filled_by=_SUITE),
    Spec("suite_success_ci_low", "lower end of the Wilson 95% interval of the pooled successes "
                                 "over suite_success_n", part=LATER, filled_by=_SUITE),
    Spec("suite_success_ci_high", "upper end of that interval", part=LATER, filled_by=_SUITE),
    Spec("suite_decision_ms_p50", "median of those results' decision_ms_p50", part=LATER,
         filled_by=_SUITE, unit="ms"),
    Spec("suite_usd_per_successful_task", "sum of usd_per_task x success_n / pooled successes "
                                          "(null when a pooled result has no price or nothing "
                                          "succeeded)", part=LATER, filled_by=_SUITE,
         unit="USD"),
    # load levels (epbench.core.metrics.capacity)
    Spec("agents_at_slo", "a workload with load levels (`load:`): the most concurrent agents, "
                          "a measured level, up to which every level's success is not below "
                          "the first level's (the quality gate's one-sided test) and its step "
                          "decision p90 meets the workload's SLO "
                          "(`epbench.core.metrics.capacity`); null without load levels",
         _capacity("agents_at_slo"), label="agents at SLO", format="int",
         definition="Agentic with load levels: the most concurrent agents (a measured level, "
                    "never interpolated) up to which every level's success is not below the "
                    "one-agent level's (the quality gate's one-sided test) and its step "
                    "decision p90 meets the workload's SLO.", anchor=F_CAPACITY),
    Spec("agents_per_usd_hour", "agents_at_slo / the pinned card's usd_per_hour (hourly cards; "
                                "null otherwise or at 0 agents)",
         _capacity("agents_per_usd_hour"), label="agents per $/h", unit="agents per USD/hour",
         format="num", definition="Agents at SLO ÷ the deployment's $ per hour (self-hosted "
                                  "and emulated cards).", anchor=F_CAPACITY),
    Spec("agents_slo_decision_p90_ms", "the workload's SLO on each level's step decision p90",
         _capacity("decision_p90_slo_ms"), unit="ms"),
    Spec("load_levels", "per level, a list of objects: agents, success_rate, success_ci_low, "
                        "success_ci_high, trials, pass_hat_1, decision_ms_p50/p90/p99, "
                        "tool_ms_p90, harness_lag_ms_p90 (tool waits beyond their seeded "
                        "latency: the client's own lag), task_wall_ms_p90, "
                        "tokens_per_successful_task, retry_tokens_per_successful_task, "
                        "usd_per_successful_task (the level's own, at the pinned card), errors "
                        "(failed requests), at_slo", _levels),
)

# --- endpoints: one row per endpoint file in endpoints/ (source: (file, its card today)) -----
_FILE = "from the endpoint file"


def _card(key: str) -> Callable[[tuple[dict[str, Any], dict[str, Any]]], Any]:
    return lambda e: e[1].get(key)


ENDPOINTS: tuple[Spec, ...] = (
    Spec("endpoint_id", _FILE, lambda e: e[0]["id"]),
    Spec("provider", _FILE, lambda e: e[0]["provider"]),
    Spec("model", _FILE, lambda e: e[0]["model"]["name"]),
    Spec("model_version", _FILE, lambda e: model_version_of(e[0])),
    Spec("division", _FILE, lambda e: e[0]["division"]),
    Spec("region", _FILE, lambda e: e[0]["region"]),
    Spec("hardware", _FILE, lambda e: hardware_of(e[0])),
    Spec("input_usd_per_mtok", "today's per-token price card: input", _card("input_usd_per_mtok"),
         unit="USD per M tokens"),
    Spec("output_usd_per_mtok", "today's per-token price card: output",
         _card("output_usd_per_mtok"), unit="USD per M tokens"),
    Spec("cached_input_usd_per_mtok", "today's per-token price card: cached input",
         _card("cached_input_usd_per_mtok"), unit="USD per M tokens"),
    Spec("usd_per_hour", "today's hourly price (self-hosted)", _card("usd_per_hour"),
         unit="USD per hour"),
    Spec("effective_date", "date the price card took effect", _card("effective_date")),
    Spec("source_url", "where the price was read", _card("source_url")),
    Spec("blended_usd_per_mtok", "(3 * input + output) / 4",
         lambda e: cost.blended_usd_per_mtok(e[1]), unit="USD per M tokens"),
    Spec("power_kw", "average power draw of an hourly-priced deployment", _card("power_kw"),
         unit="kW"),
    Spec("rate_limit_tier", "the provider's rate-limit tier used",
         lambda e: (e[0].get("rate_limits") or {}).get("tier")),
)

# --- history: runs narrowed to what changes over time (taken from runs) ----------------------
_RUN = {spec.name: spec for spec in RUNS}
HISTORY: tuple[Spec, ...] = tuple(
    _RUN[name] for name in ("endpoint_id", "provider", "model", "workload_id", "date", "run_id",
                            "division", "rankable", "tier", "tier_reason", "max_system_tps",
                            "ttft_p90_ms_best", "usd_per_mtok_output", "success_rate"))

# --- columns of the pages' views only (not in the downloads) -----------------------------------
VIEW_ONLY: tuple[Spec, ...] = (
    Spec("results", "History: how many results the row stands for", part=LATER,
         filled_by="epbench.generator.history_views", label="results", format="int",
         definition="History: how many results the row stands for (one endpoint, workload "
                    "and client region on one day; its figures are their medians). Pick an "
                    "endpoint to see each result.", anchor=TABLES),
)

TABLE_SPECS: dict[str, tuple[Spec, ...]] = {
    "runs": RUNS, "points": POINTS, "agentic": AGENTIC_ROWS, "endpoints": ENDPOINTS,
    "history": HISTORY,
}
"""Every download table, its columns in order."""
TITLES = {
    "runs": "one row per valid result",
    "points": "one row per measured point of a serving result",
    "agentic": "one row per agentic result",
    "endpoints": "one row per endpoint file in endpoints/",
    "history": "runs narrowed to what changes over time",
}


def names(table: str) -> list[str]:
    """The columns of a download table, in order."""
    return [spec.name for spec in TABLE_SPECS[table]]


def filled_by(table: str, module: str) -> list[str]:
    """The columns of a table that `module` fills after the rows are built."""
    return [spec.name for spec in TABLE_SPECS[table] if spec.filled_by == module]


def section_figures(section: dict[str, Any]) -> dict[str, Any]:
    """The figures an agentic row and a load level's row both take from an agentic section:
    success with its interval, pass^1, decision p50/p90, tool and task-wall p90."""
    return {name: get(section) for name, get in _SECTION_GETS}


def axis_of(key: str, table: str = "") -> str:
    """How a chart axis or a metric picker names a column's figure."""
    spec = spec_of(key, table)
    if spec is None or not (spec.axis or spec.label):
        raise ValueError(f"column {key!r} has no label in epbench.generator.columns")
    return spec.axis or spec.label


def spec_of(key: str, table: str = "") -> Spec | None:
    """A column's declaration: in `table` when it is there, else the first table that has it
    (runs, points, agentic, ...), else a view-only column."""
    for group in ((TABLE_SPECS.get(table, ()),) if table else ()) + (
            *TABLE_SPECS.values(), VIEW_ONLY):
        for spec in group:
            if spec.name == key:
                return spec
    return None


DEFINITIONS: dict[str, tuple[str, str, str]] = {
    f"{table}.{spec.name}": (spec.definition, spec.anchor, spec.format)
    for table, specs in (*TABLE_SPECS.items(), ("view", VIEW_ONLY)) for spec in specs
    if spec.definition
}
"""`table.column` -> (definition, methodology anchor, number format): every tooltip."""


@dataclass(frozen=True)
class Column:
    """A column of a table on a page: row key, header, and how it sorts and shows. The header,
    definition and format are the registry's (`spec_of`) unless given."""

    key: str
    label: str = ""  # the page's own header, when its context names the figure differently
    # num, text, link (to the endpoint's page), run (to the run page), list, cache (a hit
    # rate, or the row's cache_status when there is none)
    kind: str = "num"
    define: str = ""  # the registry key of the definition, when it is not `key`

    def to_config(self, table: str = "") -> dict[str, str]:
        """The column for the page's JavaScript, with its definition and format (the
        declaration in `table`, the page's source, when it has one)."""
        spec = spec_of(self.define or self.key, table)
        label = self.label or (spec.label if spec else "")
        if not label:
            raise ValueError(f"column {self.key!r} has no header: give it a label in "
                             "epbench.generator.columns")
        help_text, anchor, number = ((spec.definition, spec.anchor, spec.format) if spec
                                     else ("", "", ""))
        return {"key": self.key, "label": label, "kind": self.kind, "help": help_text,
                "anchor": anchor, "format": number or ("num" if self.kind == "num" else "")}
