"""From trial records to the result's `agentic` section (schemas/result.schema.json).

Every trial counts: endpoint errors, step and tool-error limits and harness faults are all
failures (a harness fault left out would raise the success rate); each harness fault is also
listed with its traceback summary, and makes the result not rankable (epbench.core.rankable).
The runner calls `summarize` (`summarize_load` for a workload with load levels) when the run
ends; `epbench validate` calls it again on the trial lines of the journal and compares.

With load levels the section is the baseline's (the first level's: what a one-level workload
reports, so boards compare like with like), plus `levels` (each level's own section, its
trials per task, outcomes and failed requests by class, and per successful task: tokens,
retry tokens and retry dollars) and `capacity` (epbench.core.metrics.capacity: agents at SLO).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from epbench.core.agentic_plan import Load
from epbench.core.cost_ledger import TAGS, CostLedger
from epbench.core.metrics.capacity import Level, capacity
from epbench.core.metrics.passk import pass_hat_k
from epbench.core.metrics.percentiles import summarize as summarize_sample
from epbench.core.metrics.wilson import wilson
from epbench.core.trial_record import CLASSES, TrialRecord


def dist(values: Sequence[float]) -> dict[str, Any]:
    """A `dist` of the agentic section: the shared percentiles at full precision, no CIs."""
    return summarize_sample(values, seed=None, digits=None)


def _round(value: float | None, digits: int = 9) -> float | None:
    return None if value is None else round(value, digits)


def summarize(
    task_ids: Sequence[str],
    trials: int,
    records: Sequence[TrialRecord],
    card: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The `agentic` section from every trial of every task (tasks in the workload's order)."""
    by_task: dict[str, list[TrialRecord]] = {task_id: [] for task_id in task_ids}
    for rec in records:
        by_task.setdefault(rec.task, []).append(rec)
    tasks_out, counts = [], []
    for task_id, recs in by_task.items():
        recs = sorted(recs, key=lambda r: r.trial)
        counted = recs
        successes = sum(r.result == "success" for r in counted)
        counts.append((successes, len(counted)))
        tasks_out.append(
            {
                "id": task_id,
                "trials": len(counted),
                "successes": successes,
                "outcomes": [r.outcome() for r in recs],
            }
        )
    counted_all = list(records)
    n = len(counted_all)
    wins = sum(r.result == "success" for r in counted_all)
    low, high = wilson(wins, n)
    calls = {c: sum(r.calls.get(c, 0) for r in records) for c in CLASSES}
    total_calls = sum(calls.values())
    ledger = CostLedger(card)
    for rec in records:
        if rec.costs:
            ledger.merge(rec.costs)
    total_usd = ledger.total_usd()
    retry_usd = ledger.retry_usd()
    excess = [
        (r.input_tokens + r.output_tokens - r.reference_tokens) / r.reference_tokens
        for r in counted_all
        if r.result == "success" and r.reference_tokens
    ]
    retry_cost = {}
    for tag, cost in ledger.to_dict().items():
        retry_cost[tag] = {
            "requests": cost["requests"],
            "tokens": cost["tokens"],
            "seconds": round(cost["seconds"], 6),
            "usd": _round(cost["usd"]),
        }
    return {
        "trials": trials,
        "tasks": tasks_out,
        "pass_hat_k": pass_hat_k(counts),
        "success_rate": {"value": wins / n if n else 0.0, "ci95": [low, high], "n": n},
        "calls": calls,
        "correct_call_rate": sum(r.correct_calls for r in records) / total_calls
        if total_calls
        else None,
        "decision_ms": dist([v for r in records for v in r.decision_ms]),
        "first_tool_delta_ms": dist([v for r in records for v in r.first_tool_delta_ms]),
        "tool_ms": dist([v for r in records for v in r.tool_ms]),
        "overhead_ms": dist([r.overhead_ms for r in records if r.overhead_ms is not None]),
        "task_wall_ms": dist([r.wall_ms for r in counted_all]),
        "tokens": {
            "input": sum(r.input_tokens for r in records),
            "output": sum(r.output_tokens for r in records),
            # absent (not 0) when no request's usage reported them
            **{key: sum(r.token_detail.get(key, 0) for r in records)
               for key in ("cached_input", "cache_write", "reasoning")
               if any(key in r.token_detail for r in records)},
        },
        "retry_cost": retry_cost,
        "usd_per_task": _round(total_usd / n) if total_usd is not None and n else None,
        "usd_per_successful_task": _round(total_usd / wins)
        if total_usd is not None and wins
        else None,
        "retry_spend_share": (retry_usd / total_usd)
        if total_usd and retry_usd is not None
        else None,
        "excess_tokens_over_reference": sum(excess) / len(excess) if excess else None,
        "harness_faults": [_fault(r) for r in records if r.result == "harness_fault"],
    }


def _fault(record: TrialRecord) -> dict[str, Any]:
    out: dict[str, Any] = {
        "task": record.task[:64], "trial": record.trial,
        "message": (record.harness_fault or "")[:1000],
    }
    if record.harness_traceback:
        out["traceback"] = record.harness_traceback[:2000]
    return out


RETRY_TAGS = TAGS[1:]  # repair, recovery, transport: what a task paid beyond its productive steps

RESULTS = ("success", "failed", "endpoint_error", "max_steps", "max_tool_errors",
           "harness_fault")
"""A trial's outcome results (result.schema.json), each level's count of them in this order."""


def summarize_load(
    task_ids: Sequence[str],
    load: Load,
    records: Sequence[TrialRecord],
    card: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The `agentic` section of a workload with load levels: the baseline level's section,
    with every level in `levels` and agents at SLO in `capacity`."""
    levels, measured = [], []
    for concurrency, trials in zip(load.concurrency, load.trials, strict=True):
        recs = [r for r in records if r.level == concurrency]
        section = summarize(task_ids, trials, recs, card)
        levels.append(_level(concurrency, trials, section, recs))
        rate = section["success_rate"]
        measured.append(Level(concurrency, sum(r.result == "success" for r in recs), rate["n"],
                              section["decision_ms"]["p90"]))
    out = dict(levels[0]["summary"])
    out["levels"] = levels
    out["capacity"] = capacity(measured, load.decision_p90_ms, card)
    return out


def _level(concurrency: int, trials: int, section: dict[str, Any],
           recs: Sequence[TrialRecord]) -> dict[str, Any]:
    wins = sum(r.result == "success" for r in recs)
    errors: dict[str, int] = {}
    for rec in recs:
        for cls, count in rec.errors.items():
            errors[cls] = errors.get(cls, 0) + count
    tokens = sum(r.input_tokens + r.output_tokens for r in recs)
    retry = section["retry_cost"]
    retry_tokens = sum(retry[tag]["tokens"] for tag in RETRY_TAGS)
    retry_usd = [retry[tag]["usd"] for tag in RETRY_TAGS]
    return {
        "concurrency": concurrency,
        "trials_per_task": trials,
        "results": {key: sum(r.result == key for r in recs) for key in RESULTS},
        "request_errors": dict(sorted(errors.items())),
        "tokens_per_successful_task": tokens / wins if wins else None,
        "retry_tokens_per_successful_task": retry_tokens / wins if wins else None,
        "retry_usd_per_successful_task": _round(sum(u or 0.0 for u in retry_usd) / wins)
        if wins and None not in retry_usd else None,
        "harness_lag_ms": dist([v for r in recs for v in r.tool_lag_ms]),
        "summary": section,
    }
