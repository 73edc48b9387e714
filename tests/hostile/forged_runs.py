"""Runs written by a script, as a hostile submitter writes them: a plan built from a workload
file, a journal with a plausible line per planned request, and the result epbench computes
from that journal (so every figure recomputes)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import yaml

from epbench.core.documents import load_document
from epbench.core.journal_file import Journal
from epbench.runner.entry import JOURNAL_FILE, PLAN_FILE, write_json_atomic, write_result
from epbench.runner.plan import build_plan
from epbench.runner.workload import ServingWorkload, load_serving_workload

ROOT = Path(__file__).resolve().parent.parent.parent
MS = 1_000_000


def workload_file(folder: Path, **load: Any) -> Path:
    """A serving workload of one concurrency point (`load` overrides), 32 tokens out."""
    doc = {
        "kind": "serving-workload", "schema_version": 1, "id": "swap", "version": "1.0",
        "description": "a small load", "seed": 1,
        "prompts": {"input_tokens": {"distribution": "fixed", "value": 64}, "max_tokens": 32,
                    "ignore_eos": True},
        "load": {"pattern": "concurrency", "concurrency": [1], "requests_per_point": 80,
                 "warmup_requests": 0, **load},
        "slo": {"ttft_ms": 2000, "tpot_ms": 50}, "timeout_s": 30,
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "swap.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def journal_lines(workload: ServingWorkload, plan: Any) -> list[dict[str, Any]]:
    rng = random.Random(3)
    tokens = workload.max_tokens
    lines: list[dict[str, Any]] = [
        {"type": "run", "spec": plan.spec(workload.slo).to_json()},
        {"type": "session", "t_ns": 9_000 * MS, "at": "2026-11-20T10:00:00.00Z"},
    ]
    t = 10_000 * MS
    for point in plan.selected():
        for req in point.requests:
            gaps = [rng.randint(4000, 9000) for _ in range(tokens - 1)]
            first = t + rng.randint(20, 80) * MS
            last = first + sum(gaps) * 1000
            lines.append({
                "request_id": req.request_id, "point": req.point, "seq": req.seq,
                "warmup": req.warmup, "t_scheduled_ns": None, "t_send_ns": t,
                "t_first_ns": first, "t_last_ns": last, "t_done_ns": last + MS,
                "input_tokens": req.input_tokens, "input_source": "usage",
                "input_requested": req.input_tokens, "output_tokens": tokens,
                "token_source": "usage", "status": 200, "class": "ok", "error": None,
                "itl_us": gaps, "attempts": 1, "retry_s": 0.0, "retry_tokens": 0,
            })
            t = last + 2 * MS
    return lines


def forged_run(folder: Path, workload_path: Path, quick: bool = False,
               run_id: str = "feedc0de12345678", shard: str | None = None) -> Path:
    """A run folder (plan, journal, result) for `workload_path`, written without a run."""
    workload = load_serving_workload(workload_path)
    plan = build_plan(workload, run_id, quick=quick, shard=shard)
    plan.meta = {
        "harness": {"name": "epbench", "version": "0.1.0", "git_sha": None},
        "workload": {"id": workload.id, "version": workload.version, "sha256": workload.sha256,
                     "kind": "serving", "pattern": workload.pattern},
        "endpoint": load_document(ROOT / "endpoints" / "emulator.yaml"),
        "client": {"python": "3.11", "os": "Linux", "region": None, "rtt_ms": 0.05, "cpus": 2},
        "settings": {"seed": workload.seed, "quick": quick, "stream": True,
                     "max_tokens": workload.max_tokens, "ignore_eos": True},
        "slo": workload.slo,
        "started_at": "2026-11-20T10:00:00Z",
    }
    folder.mkdir(parents=True)
    write_json_atomic(folder / PLAN_FILE, plan.to_json())
    lines = journal_lines(workload, plan)
    with Journal(folder / JOURNAL_FILE) as journal:
        for line in lines:
            journal.append(line)
    write_result(folder, plan, lines)
    return folder
