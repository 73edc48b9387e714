"""What every column a reader sees means: its header, unit, how its numbers show, and a
one-line definition that links to the methodology section defining it.

The definitions are written once here and reach each table header as a tooltip and a link
(board.js, buyer.js); the methodology page and docs/tables.md hold the formulas.
"""

from __future__ import annotations

from dataclasses import dataclass

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

# key -> (definition, methodology anchor, number format)
# Formats: "tps" tokens/s, "ms", "usd", "pct" (a 0..1 share shown as %), "int", "num".
DEFINITIONS: dict[str, tuple[str, str, str]] = {
    "endpoint_id": ("The endpoint file (endpoints/<id>.yaml): provider, model, region, price "
                    "card. On the boards the link opens the result behind the row; on the "
                    "ranked table, the endpoint's page.", TABLES, ""),
    "provider": ("Who serves the endpoint.", TABLES, ""),
    "model": ("Model name as the endpoint file gives it.", TABLES, ""),
    "division": ("serviced (an API priced per token), self-hosted (priced per hour) or "
                 "emulated (epbench's own emulator: never ranked).", RULES, ""),
    "region": ("Where the endpoint runs.", TABLES, ""),
    "client_region": ("Where the benchmark client ran: latency includes the network between "
                      "the two.", TABLES, ""),
    "workload_id": ("The workload definition (workloads/...yaml) that was sent.", TABLES, ""),
    "date": ("Run date (UTC) of the result; on the ranked table the link opens the result.",
             TABLES, ""),
    "max_system_tps": ("Highest system throughput over the run's points: output tokens of "
                       "requests completed in the measurement window ÷ window seconds.",
                       THROUGHPUT, "tps"),
    "system_tps": ("System throughput at this point: output tokens of requests completed in "
                   "the measurement window ÷ window seconds, all users together.",
                   THROUGHPUT, "tps"),
    "tps_per_user": ("Per-user speed at this point: 1000 ÷ TPOT p90 in ms, the output "
                     "tokens per second one user sees.", POINT, "tps"),
    "tps_per_user_at_max_tps": ("Per-user speed (1000 ÷ TPOT p90 ms) at the point of highest "
                                "system throughput.", POINT, "tps"),
    "tps_at_target": ("Highest system throughput at a point whose per-user speed reaches the "
                      "buyer pages' default target, 20 tokens/s.", POINT, "tps"),
    "best_tps_per_user": ("Highest per-user speed (1000 ÷ TPOT p90 ms) over the run's points, "
                          "usually at concurrency 1.", POINT, "tps"),
    "ttft_p90_ms_best": ("Lowest time-to-first-token p90 over the run's points (first "
                         "content-bearing event minus send time).", LATENCY, "ms"),
    "ttft_ms_p90": ("Time to first token, 90th percentile at this point: first "
                    "content-bearing event minus send time.", LATENCY, "ms"),
    "error_rate": ("Failed requests ÷ issued requests; every error class counts against the "
                   "endpoint.", POINT, "pct"),
    "usd_per_mtok_output": ("The whole-sweep average: run cost ÷ output tokens × 1,000,000 "
                            "over every point of the sweep, not the cost at any one point. "
                            "The run cost prices input and output tokens with the card "
                            "pinned at run time (self-hosted: hours × $/hour), so it is "
                            "above the card's output price when inputs are long. An agentic "
                            "result has no sweep: its whole spend ÷ its output tokens.",
                            F_MTOK, "usd"),
    "point_usd_per_mtok_output": ("Cost of this point's requests (input and output tokens at "
                                  "the card pinned at run time; self-hosted: the point's hours "
                                  "× $/hour) ÷ its output tokens × 1,000,000.", F_POINT, "usd"),
    "usd_per_mtok_output_at_max_tps": ("$ per M output tokens at the point of highest system "
                                       "throughput: that point's cost (input and output "
                                       "tokens at the card pinned at run time; self-hosted: "
                                       "its hours × $/hour) ÷ its output tokens × 1,000,000, "
                                       "as the home and compare pages show it for their "
                                       "point.", F_POINT, "usd"),
    "usd_per_mtok_output_today": ("The whole-sweep average $ per M output tokens, "
                                  "re-priced with today's card from endpoints/<id>.yaml.",
                                  COST, "usd"),
    "blended_usd_per_mtok": ("(3 × input price + output price) ÷ 4 from the pinned card: a "
                             "3:1 input:output mix (per-token cards only).", F_BLEND, "usd"),
    "output_tokens_per_usd": ("Output tokens ÷ run cost (input and output priced).", F_TPD,
                              "int"),
    "usd_per_1k_requests": ("Run cost ÷ completed requests × 1,000.", F_1K, "usd"),
    "usd_per_successful_task": ("Agentic: total spend, retries included, ÷ successful "
                                "trials.", F_SUCC, "usd"),
    "usd_per_task": ("Agentic: total spend, retries included, ÷ trials.", F_TASK, "usd"),
    "success_rate": ("Agentic: successful trials ÷ trials; endpoint errors count as "
                     "failures.", AGENTIC, "pct"),
    "success_ci_low": ("Lower bound of the 95% Wilson interval of the success rate.", WILSON,
                       "pct"),
    "success_ci_high": ("Upper bound of the 95% Wilson interval of the success rate.",
                        WILSON, "pct"),
    "pass_hat_1": ("pass^1: mean over tasks of the chance one trial succeeds.", PASSK,
                   "pct"),
    "decision_ms_p90": ("Agentic: request sent to the last tool-call argument byte, 90th "
                        "percentile.", AGENTIC, "ms"),
    "correct_call_rate": ("Agentic: tool calls that were valid and correct ÷ tool calls.",
                          AGENTIC, "pct"),
    "retry_spend_share": ("Agentic: spend on repair, recovery and transport retries ÷ total "
                          "spend.", F_RETRY, "pct"),
    # load levels (epbench.core.metrics.capacity)
    "agents_at_slo": ("Agentic with load levels: the most concurrent agents (a measured level, "
                      "never interpolated) up to which every level's success is not below the "
                      "one-agent level's (the quality gate's one-sided test) and its step "
                      "decision p90 meets the workload's SLO.", F_CAPACITY, "int"),
    "agents_per_usd_hour": ("Agents at SLO ÷ the deployment's $ per hour (self-hosted and "
                            "emulated cards).", F_CAPACITY, "num"),
    "disclosure_score": ("Share (0 to 1) of the reproducibility fields the result discloses.",
                         RULES, "num"),
    "flags": ("Findings of epbench validate published with the result.", RULES, ""),
    "rankable": ("Whether the result may be ranked; the tooltip says why not.", RULES, ""),
    "tier": ("Provenance: attested (the project's scheduled benchmark signed it), "
             "attested-by-submitter (epbench's workflow signed it in the submitter's "
             "repository) or self-reported (no valid attestation: shown and ranked only when "
             "you include self-reported results). The tooltip says why.", RULES, ""),
    "cache_hit_rate": ("Prompt-cache hit rate: cached input tokens ÷ input tokens, over the "
                       "requests whose usage reported a cached count. \"not reported by the "
                       "endpoint\" when none did: the endpoint did not say, which is not 0%.",
                       F_CACHE, "pct"),
    "usd_per_mtok_output_uncached_at_max_tps": ("$ per M output tokens at the point of "
                                                "highest system throughput with every input "
                                                "token at the card's input price: beside the "
                                                "cost with cache prices, what the cache "
                                                "saved (the same on an hourly card).",
                                                F_UNCACHED, "usd"),
    "results": ("History: how many results the row stands for (one endpoint, workload and "
                "client region on one day; its figures are their medians). Pick an endpoint "
                "to see each result.", TABLES, "int"),
}


@dataclass(frozen=True)
class Column:
    """A column of a table on a page: row key, header, and how it sorts and shows."""

    key: str
    label: str
    # num, text, link (to the endpoint's page), run (to the run page), list, cache (a hit
    # rate, or the row's cache_status when there is none)
    kind: str = "num"
    define: str = ""  # the DEFINITIONS key, when it is not `key`

    def to_config(self) -> dict[str, str]:
        """The column for the page's JavaScript, with its definition and format."""
        help_text, anchor, number = DEFINITIONS.get(self.define or self.key, ("", "", ""))
        return {"key": self.key, "label": self.label, "kind": self.kind, "help": help_text,
                "anchor": anchor, "format": number or ("num" if self.kind == "num" else "")}
