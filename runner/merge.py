"""`epbench merge`: join the journals of a run's shards into one result.

Every shard of one run was planned from the same workload file, so their plan.json files
hold the same points (each shard ran the ones whose index % N == I-1). The merge copies the
shard journals into one events.jsonl under `out` and summarizes them with the same code as an
unsharded run (`epbench.core.summary.summarize_run` over every point), so the merged numbers are
exactly those an unsharded run of the same records would give.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from epbench.core.errors import InputError
from epbench.core.journal_file import Journal
from epbench.core.journal_records import SHARD_LINE
from epbench.runner.plan import Plan
from epbench.runner.run_folder import JOURNAL_FILE, PLAN_FILE, read_plan_doc, write_json_atomic
from epbench.runner.serving_run import write_result


def merge_runs(run_dirs: list[Path], out: Path) -> Path:
    """Write out/events.jsonl, out/plan.json and out/result.json; the result path."""
    if not run_dirs:
        raise InputError("epbench merge: name at least one run folder")
    plans = [Plan.from_json(read_plan_doc(Path(d))) for d in run_dirs]
    first = plans[0]
    for d, plan in zip(run_dirs, plans, strict=True):
        if plan.workload_sha256 != first.workload_sha256 or [p.id for p in plan.points] != [
            p.id for p in first.points
        ]:
            raise InputError(
                f"{d}: this shard ran another workload or plan than {run_dirs[0]}; "
                "merge shards of one run"
            )
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    merged = Plan.from_json(first.to_json())
    merged.shard = None
    merged.meta = dict(first.meta)
    merged.meta["started_at"] = min(p.meta["started_at"] for p in plans)
    records: list[dict[str, Any]] = [
        dict(merged.run_line(merged.meta.get("slo") or {}))
    ]
    seen: set[str] = set()
    for d in run_dirs:
        records.append(dict(SHARD_LINE))
        for record in Journal.read(Path(d) / JOURNAL_FILE):
            kind = record.get("type", "request")
            if kind == "run":
                continue
            if kind == "request":
                if record["request_id"] in seen:
                    continue
                seen.add(record["request_id"])
            records.append(record)
    write_json_atomic(out / PLAN_FILE, merged.to_json())
    journal_path = out / JOURNAL_FILE
    if journal_path.exists():
        journal_path.unlink()
    with Journal(journal_path) as journal:
        for record in records:
            journal.append(record)
    return write_result(out, merged, records, extra_settings={"shards": len(run_dirs)})
