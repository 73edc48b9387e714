"""What `epbench run` tells the user at the end: a table per point (serving) or per task
(agentic), the same as JSON (`--json`), and whether the run measured what it set out to.

Everything here reads what the run wrote: result.json, and for the per-task call classes and
retry cost of an agentic run, the journal beside it (the result keeps those per workload).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from epbench.core.journal_file import Journal
from epbench.core.metrics.passk import pass_hat_k_task
from epbench.runner.failure_text import first_errors
from epbench.runner.run_folder import JOURNAL_FILE


def report(result: dict[str, Any], path: str) -> dict[str, Any]:
    """The end-of-run summary of one result, as a JSON-ready dict."""
    out: dict[str, Any] = {
        "result": path,
        "workload": result["workload"]["id"],
        "endpoint": result["endpoint"].get("id"),
        "problems": shortfalls(result),
        "errors": first_errors(Path(path).parent / JOURNAL_FILE),
    }
    settings = result.get("settings") or {}
    if settings.get("fallbacks"):
        out["fallbacks"] = settings["fallbacks"]
    if settings.get("calibration"):
        out["calibration"] = settings["calibration"]
    if result.get("agentic"):
        levels = result["agentic"].get("levels") or []
        # with load levels the tasks are the baseline level's, and so are their calls
        per_task = _journal_by_task(Path(path).parent / JOURNAL_FILE,
                                    levels[0]["concurrency"] if levels else None)
        if levels:
            out["levels"] = [_level_row(level) for level in levels]
            out["capacity"] = result["agentic"]["capacity"]
        out["tasks"] = [
            {**_task_row(t), **per_task.get(t["id"], {"calls": {}, "retry_cost": {}})}
            for t in result["agentic"]["tasks"]
        ]
        agentic = result["agentic"]
        out["calls"] = {k: v for k, v in agentic["calls"].items() if v}
        out["retry_cost"] = agentic["retry_cost"]
        out["success_rate"] = agentic["success_rate"]["value"]
    else:
        out["points"] = [_point_row(p) for p in result.get("points", [])]
        turns = {p["id"]: _turns_row(p["conversation"]) for p in result.get("points", [])
                 if p.get("conversation")}
        if turns:
            out["turns"] = turns
        out["warnings"] = [
            f"point {p['id']}: input tokens {p['input_calibration']['ratio_median']:.3f} times "
            "the requested length (more than 5% off)"
            for p in result.get("points", [])
            if (p.get("input_calibration") or {}).get("off")
        ]
    return out


def _point_row(point: dict[str, Any]) -> dict[str, Any]:
    req = point["requests"]
    calibration = point.get("input_calibration") or {}
    return {
        "point": point["id"],
        "ok": req["completed"],
        "failed": req["failed"],
        "failed_by_class": {k: v for k, v in point["errors"].items() if v},
        "ttft_p50_ms": point["ttft_ms"].get("p50"),
        "ttft_p90_ms": point["ttft_ms"].get("p90"),
        "tpot_p50_ms": point["tpot_ms"].get("p50"),
        "tpot_p90_ms": point["tpot_ms"].get("p90"),
        "system_tps": point["system_tps"],
        "tps_per_user": point["tps_per_user"],
        "goodput_rps": point["goodput_rps"],
        "input_tokens_actual_median": calibration.get("actual_median"),
        "input_tokens_requested_median": calibration.get("requested_median"),
        "input_tokens_ratio": calibration.get("ratio_median"),
        "input_tokens_source": point["tokens"].get("input_source", "usage"),
        # null with a reason when the endpoint's usage carried no cached count (not 0)
        "cache_hit_rate": (point.get("cache") or {}).get("hit_rate"),
        "cache_reason": (point.get("cache") or {}).get("reason"),
    }


def _turns_row(block: dict[str, Any]) -> list[dict[str, Any]]:
    """A conversation point's turns: TTFT p50 and input tokens p50 per turn (1 is the first)."""
    return [{"turn": t["turn"] + 1, "ttft_p50_ms": t["ttft_ms"]["p50"],
             "input_tokens_p50": t["input_tokens"]["p50"]} for t in block["turns"]]


def _task_row(task: dict[str, Any]) -> dict[str, Any]:
    n, c = task["trials"], task["successes"]
    results: dict[str, int] = {}
    for outcome in task["outcomes"]:
        results[outcome["result"]] = results.get(outcome["result"], 0) + 1
    return {
        "task": task["id"],
        "successes": c,
        "trials": n,
        "pass_1": pass_hat_k_task(c, n, 1) if n else None,
        f"pass_{n}": pass_hat_k_task(c, n, n) if n else None,
        "results": results,
    }


def _level_row(level: dict[str, Any]) -> dict[str, Any]:
    section = level["summary"]
    decision, rate = section["decision_ms"], section["success_rate"]
    return {
        "agents": level["concurrency"], "successes": level["results"]["success"],
        "trials": rate["n"], "ci95": rate["ci95"],
        "decision_p50_ms": decision["p50"], "decision_p90_ms": decision["p90"],
        "decision_p99_ms": decision["p99"], "tool_p90_ms": section["tool_ms"]["p90"],
        "lag_p90_ms": level["harness_lag_ms"]["p90"],
        "task_p90_ms": section["task_wall_ms"]["p90"],
        "tokens_per_success": level["tokens_per_successful_task"],
        "retry_tokens_per_success": level["retry_tokens_per_successful_task"],
        "errors": level["request_errors"],
    }


def _journal_by_task(path: Path, level: int | None = None) -> dict[str, dict[str, Any]]:
    """Per task, from the journal's request lines (of one load level, with load levels): call
    classes, and what requests sent after the first of each step cost (`repair`, `recovery`,
    `transport`)."""
    out: dict[str, dict[str, Any]] = {}
    for line in Journal.read(path) if path.is_file() else []:
        task = line.get("task")
        if line.get("type") != "request" or not isinstance(task, str) \
                or line.get("level") != level:
            continue
        row = out.setdefault(task, {"calls": {}, "retry_cost": {}})
        for cls, n in (line.get("calls") or {}).items():
            row["calls"][cls] = row["calls"].get(cls, 0) + int(n)
        tag = line.get("tag")
        if tag and tag != "productive":
            cost = row["retry_cost"].setdefault(tag, {"requests": 0, "tokens": 0, "seconds": 0.0})
            cost["requests"] += 1
            cost["tokens"] += int(line.get("input_tokens") or 0) + int(
                line.get("output_tokens") or 0
            )
            spent = max(0, int(line.get("t_done_ns") or 0) - int(line.get("t_send_ns") or 0))
            cost["seconds"] += spent / 1e9 + float(line.get("backoff_s") or 0.0)
    return out


def shortfalls(result: dict[str, Any]) -> list[str]:
    """Why the run did not measure what it set out to (empty: it did). A point where every
    measured request failed, or an agentic run where no trial got past the endpoint."""
    problems = []
    for point in result.get("points", []):
        req = point["requests"]
        if req["issued"] and not req["completed"]:
            classes = ", ".join(f"{k} {v}" for k, v in point["errors"].items() if v)
            problems.append(f"point {point['id']}: every request failed ({classes})")
    agentic = result.get("agentic")
    if agentic:
        outcomes = [o for t in agentic["tasks"] for o in t["outcomes"]]
        if outcomes and all(o["result"] == "endpoint_error" for o in outcomes):
            problems.append("agentic: every trial ended in an endpoint error")
    return problems


def fmt(value: Any, digits: int = 1) -> str:
    """A figure for a terminal table: '-' for none, `digits` decimals for a float."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def render(summary: dict[str, Any]) -> str:
    """The summary as a plain-text table (what `epbench run` prints)."""
    lines = [f"{summary['workload']} on {summary['endpoint']}: {summary['result']}"]
    if "points" in summary:
        head = ("point", "ok", "failed", "ttft p50/p90 ms", "tpot p50/p90 ms", "sys tok/s",
                "tok/s/user", "goodput rps", "input act/req", "cache hit")
        rows: list[tuple[str, ...]] = [head]
        for p in summary["points"]:
            ratio = p["input_tokens_ratio"]
            rows.append((
                p["point"], str(p["ok"]),
                str(p["failed"]) + "".join(f" {k}:{v}" for k, v in p["failed_by_class"].items()),
                f"{fmt(p['ttft_p50_ms'])}/{fmt(p['ttft_p90_ms'])}",
                f"{fmt(p['tpot_p50_ms'], 2)}/{fmt(p['tpot_p90_ms'], 2)}",
                fmt(p["system_tps"]), fmt(p["tps_per_user"]), fmt(p["goodput_rps"], 2),
                f"{fmt(p['input_tokens_actual_median'], 0)}/"
                f"{fmt(p['input_tokens_requested_median'], 0)}"
                + (f" ({ratio:.2f})" if ratio is not None else f" ({p['input_tokens_source']})"),
                _cache_cell(p),
            ))
        lines += _table(rows)
        for point, turns in summary.get("turns", {}).items():
            lines.append(f"{point} by turn (ttft p50 ms, input tokens): " + ", ".join(
                f"{t['turn']}: {fmt(t['ttft_p50_ms'])} ({fmt(t['input_tokens_p50'], 0)})"
                for t in turns))
    if "tasks" in summary:
        task_rows: list[tuple[str, ...]] = [
            ("task", "success", "pass^1", "pass^n", "results", "calls", "retry cost")
        ]
        for t in summary["tasks"]:
            n = t["trials"]
            task_rows.append((
                t["task"], f"{t['successes']}/{n}", fmt(t["pass_1"], 2),
                fmt(t.get(f"pass_{n}"), 2),
                ", ".join(f"{k} {v}" for k, v in sorted(t["results"].items())),
                ", ".join(f"{k} {v}" for k, v in sorted(t["calls"].items()) if v) or "-",
                ", ".join(f"{tag} {c['requests']} req {c['seconds']:.2f} s"
                          for tag, c in sorted(t["retry_cost"].items())) or "-",
            ))
        lines += _table(task_rows)
        lines.append("calls, all tasks: "
                     + (", ".join(f"{k} {v}" for k, v in summary["calls"].items()) or "none"))
        spent = [f"{tag} {c['requests']} req/{c['tokens']} tok/{c['seconds']:.2f} s"
                 for tag, c in summary["retry_cost"].items() if c["requests"]]
        lines.append("cost by tag, all tasks: " + (", ".join(spent) or "none"))
    if "levels" in summary:
        lines += _levels_table(summary["levels"], summary["capacity"])
    for fallback in summary.get("fallbacks", []):
        lines.append(f"fallback: {fallback['feature']} -> {fallback['fallback']}"
                     + (f" ({fallback['reason']})" if fallback.get("reason") else ""))
    calibration = summary.get("calibration")
    if calibration and calibration.get("source") == "none":
        lines.append("input lengths: not calibrated (the endpoint reports no usage)")
    for cls, row in summary.get("errors", {}).items():
        lines.append(f"error {cls}: {row['count']} requests, the first said: {row['first'] or '-'}")
    for warning in summary.get("warnings", []):
        lines.append(f"warning: {warning}")
    for problem in summary["problems"]:
        lines.append(f"problem: {problem}")
    return "\n".join(lines)


def _cache_cell(row: dict[str, Any]) -> str:
    """The hit rate as a percentage, or why there is none ("not reported", never 0%)."""
    if row["cache_hit_rate"] is not None:
        return f"{row['cache_hit_rate'] * 100:.1f}%"
    return {"not_reported": "not reported", "no_input": "no input"}.get(
        row["cache_reason"] or "", "-")


def _levels_table(levels: list[dict[str, Any]], cap: dict[str, Any]) -> list[str]:
    rows: list[tuple[str, ...]] = [("agents", "success [95% CI]", "decision p50/p90/p99 ms",
                                    "tool p90 ms", "lag p90 ms", "task p90 ms", "tok/success",
                                    "errors")]
    for row in levels:
        low, high = row["ci95"]
        rows.append((
            str(row["agents"]), f"{row['successes']}/{row['trials']} [{low:.2f}, {high:.2f}]",
            f"{fmt(row['decision_p50_ms'], 0)}/{fmt(row['decision_p90_ms'], 0)}/"
            f"{fmt(row['decision_p99_ms'], 0)}",
            fmt(row["tool_p90_ms"], 0), fmt(row["lag_p90_ms"], 0), fmt(row["task_p90_ms"], 0),
            fmt(row["tokens_per_success"], 0),
            ", ".join(f"{k} {v}" for k, v in row["errors"].items()) or "-",
        ))
    per_hour = cap.get("agents_per_usd_hour")
    return ["", "load levels (the tasks above are the first level's):", *_table(rows),
            f"agents at SLO: {cap['agents_at_slo']} (decision p90 <= "
            f"{fmt(cap['decision_p90_slo_ms'], 0)} ms, success not below {cap['baseline']} "
            "agent" + ("s" if cap["baseline"] != 1 else "") + ")"
            + (f"; {per_hour:.1f} agents per $/hour" if per_hour is not None else "")]


def _table(rows: Sequence[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in rows]
