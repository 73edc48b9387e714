"""Agentic summaries agree with their own task outcomes.

- each task: successes <= trials, one outcome per trial, successes == outcomes marked success
- success_rate.value == total successes / total trials, success_rate.n == total trials
- pass_hat_k["1"] == mean over tasks of successes / trials
- usd_per_successful_task == usd_per_task * trials / successes (both from the same spend)
"""

from __future__ import annotations

from typing import Any

from epbench.core.findings import Finding
from epbench.core.metrics.passk import pass_hat_k
from epbench.generator.checks.base import Subject, check, close, fmt, on_result

TASK_COUNTS = check(
    "agentic.task-counts", "reject",
    "each task's successes and trials agree with its outcomes",
    "write one outcome per trial and count successes from the outcomes",
)
SUCCESS_RATE = check(
    "agentic.success-rate", "flag",
    "success_rate equals total successes / total trials, with n = total trials",
    "recompute success_rate from the tasks",
)
PASS_HAT_1 = check(
    "agentic.pass-hat-1", "flag",
    "pass^1 equals the mean over tasks of successes / trials",
    "recompute pass_hat_k from the tasks: pass^k = mean over tasks of C(c,k)/C(n,k)",
)
USD_PER_SUCCESS = check(
    "agentic.usd-per-success", "flag",
    "usd_per_successful_task equals total spend / successful trials",
    "divide the total spend (retries included) by the number of successful trials",
)
MISSING = check(
    "agentic.missing", "reject",
    "an agentic result has an `agentic` block; a serving one has points",
    "re-run `epbench run`; a result of this workload kind needs its summary block",
)


def check_agentic(result: dict[str, Any], file: str) -> list[Finding]:
    out: list[Finding] = []
    block = result["agentic"]
    total_trials = 0
    total_successes = 0
    counts = []
    for i, task in enumerate(block["tasks"]):
        where = f"/agentic/tasks/{i}"
        outcomes = task["outcomes"]
        wins = sum(1 for o in outcomes if o["result"] == "success")
        if task["successes"] > task["trials"]:
            out.append(TASK_COUNTS.at(file, f"{where}/successes",
                                      f"task {task['id']!r} has more successes than trials"))
        elif len(outcomes) != task["trials"]:
            out.append(TASK_COUNTS.at(file, f"{where}/outcomes",
                                      f"task {task['id']!r} has {task['trials']} trials but "
                                      f"{len(outcomes)} outcomes"))
        elif wins != task["successes"]:
            out.append(TASK_COUNTS.at(file, f"{where}/successes",
                                      f"task {task['id']!r} says {task['successes']} successes, "
                                      f"its outcomes show {wins}"))
        total_trials += task["trials"]
        total_successes += task["successes"]
        counts.append((task["successes"], task["trials"]))
    if out:
        return out
    rate = block["success_rate"]
    if total_trials:
        expected = total_successes / total_trials
        if not close(rate["value"], expected, abs_tol=1e-6) or rate["n"] != total_trials:
            out.append(SUCCESS_RATE.at(
                file, "/agentic/success_rate",
                f"success_rate is {fmt(rate['value'])} over n = {rate['n']}, the tasks give "
                f"{fmt(expected)} over n = {total_trials}",
            ))
    recomputed = pass_hat_k(counts)
    if "1" in recomputed and "1" in block["pass_hat_k"]:
        expected = recomputed["1"]
        if not close(block["pass_hat_k"]["1"], expected, abs_tol=1e-6):
            out.append(PASS_HAT_1.at(
                file, "/agentic/pass_hat_k/1",
                f"pass^1 is {fmt(block['pass_hat_k']['1'])}, the tasks give {fmt(expected)}",
            ))
    per_task = block["usd_per_task"]
    per_success = block["usd_per_successful_task"]
    if per_task is not None and total_successes and total_trials:
        expected = per_task * total_trials / total_successes
        if per_success is None or not close(per_success, expected, abs_tol=1e-9):
            out.append(USD_PER_SUCCESS.at(
                file, "/agentic/usd_per_successful_task",
                f"usd_per_successful_task is {fmt(per_success)}, usd_per_task x trials / "
                f"successes is {fmt(expected)}",
            ))
    return out


@on_result(10)
def _on_missing(s: Subject) -> list[Finding]:
    kind = s.doc["workload"]["kind"]
    if kind == "serving" and not s.doc["points"]:
        return [MISSING.at(s.file, "/points", "a serving result has no points")]
    if kind == "agentic" and "agentic" not in s.doc:
        return [MISSING.at(s.file, "/agentic", "an agentic result has no agentic block")]
    return []


@on_result(30)
def _on_result(s: Subject) -> list[Finding]:
    return check_agentic(s.doc, s.file) if "agentic" in s.doc else []
