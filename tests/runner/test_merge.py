"""`epbench merge`: shard journals joined into one result equal to the unsharded one."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from epbench.core.documents import load_document
from epbench.core.errors import InputError
from epbench.core.journal_file import Journal
from epbench.core.schema import check_schema
from epbench.runner.entry import JOURNAL_FILE, PLAN_FILE, write_json_atomic, write_result
from epbench.runner.merge import merge_runs
from epbench.runner.plan import Plan, build_plan
from epbench.runner.workload import load_serving_workload
from tests.conftest import ROOT

MS = 1_000_000


def header() -> dict[str, Any]:
    return {
        "harness": {"name": "epbench", "version": "0.1.0", "git_sha": None},
        "workload": {
            "id": "chat-short",
            "version": "1.0",
            "sha256": "0" * 64,
            "kind": "serving",
            "pattern": "concurrency",
        },
        "endpoint": load_document(ROOT / "endpoints" / "emulator.yaml"),
        "client": {"python": "3.11", "os": "Linux", "region": None, "rtt_ms": 0.05, "cpus": 2},
        "settings": {"seed": 1, "quick": True, "stream": True},
        "slo": {"ttft_ms": 2000, "tpot_ms": 50},
        "started_at": "2026-01-01T00:00:00Z",
    }


def fake_records(plan: Plan) -> list[dict[str, Any]]:
    """Plausible journal records for every planned request (seeded; some failures)."""
    rng = random.Random(42)
    records = []
    t = 10_000 * MS
    for point in plan.points:
        for req in point.requests:
            t += rng.randint(1, 20) * MS
            first = t + rng.randint(20, 200) * MS
            last = first + rng.randint(100, 900) * MS
            cls = "ok" if rng.random() > 0.1 else rng.choice(["http_5xx", "truncated", "timeout"])
            records.append(
                {
                    "request_id": req.request_id,
                    "point": req.point,
                    "seq": req.seq,
                    "warmup": req.warmup,
                    "t_scheduled_ns": None,
                    "t_send_ns": t,
                    "t_first_ns": first if cls == "ok" else None,
                    "t_last_ns": last if cls == "ok" else None,
                    "t_done_ns": last + MS,
                    "input_tokens": req.input_tokens,
                    "output_tokens": 128 if cls == "ok" else None,
                    "token_source": "usage" if cls == "ok" else None,
                    "status": 200,
                    "class": cls,
                    "error": None,
                    "itl_us": [rng.randint(3000, 9000) for _ in range(5)],
                    "attempts": 1,
                    "retry_s": 0.0,
                    "retry_tokens": 0,
                }
            )
    return records


def write_run(folder: Path, plan: Plan, records: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True)
    write_json_atomic(folder / PLAN_FILE, plan.to_json())
    with Journal(folder / JOURNAL_FILE) as journal:
        for record in records:
            journal.append(record)
    return folder


def test_two_merged_shards_equal_the_unsharded_result_of_the_same_records(tmp_path):
    workload = load_serving_workload(ROOT / "workloads" / "serving" / "chat-short.yaml")
    whole = build_plan(workload, "abcdef0123456789", quick=True)
    whole.meta = header()
    records = fake_records(whole)
    shards = []
    for index in (1, 2):
        plan = build_plan(workload, "abcdef0123456789", quick=True, shard=f"{index}/2")
        plan.meta = header()
        ids = {p.id for p in plan.selected()}
        shards.append(
            write_run(tmp_path / f"shard{index}", plan, [r for r in records if r["point"] in ids])
        )
    unsharded = json.loads(
        write_result(write_run(tmp_path / "whole", whole, records), whole, records).read_text()
    )

    merged_path = merge_runs(shards, tmp_path / "merged")
    merged = json.loads(merged_path.read_text())
    assert check_schema(merged, "result", str(merged_path)) == []
    assert merged["points"] == unsharded["points"]
    assert merged["pareto"] == unsharded["pareto"]
    assert merged["retries"] == unsharded["retries"]
    assert merged["settings"]["shards"] == 2
    assert [p["id"] for p in merged["points"]] == ["c1", "c2", "c4", "c8", "c16", "c32", "c64"]
    lines = Journal.read(tmp_path / "merged" / JOURNAL_FILE)
    assert len([r for r in lines if r.get("type", "request") == "request"]) == len(records)
    assert lines[0]["type"] == "run" and len(lines[0]["spec"]["points"]) == 7
    assert "resumes" not in merged  # shards ran side by side: none of them is a resume


def test_a_shard_holds_the_points_whose_index_modulo_n_is_i_minus_one():
    workload = load_serving_workload(ROOT / "workloads" / "serving" / "chat-short.yaml")
    plan = build_plan(workload, "abcdef0123456789", quick=True, shard="2/3")
    assert [p.id for p in plan.selected()] == ["c2", "c16"]


def test_shards_of_different_workloads_are_refused(tmp_path):
    short = load_serving_workload(ROOT / "workloads" / "serving" / "chat-short.yaml")
    long = load_serving_workload(ROOT / "workloads" / "serving" / "long-context.yaml")
    a = build_plan(short, "abcdef0123456789", quick=True, shard="1/2")
    b = build_plan(long, "abcdef0123456789", quick=True, shard="2/2")
    a.meta = b.meta = header()
    with pytest.raises(InputError):
        merge_runs(
            [write_run(tmp_path / "a", a, []), write_run(tmp_path / "b", b, [])], tmp_path / "m"
        )
