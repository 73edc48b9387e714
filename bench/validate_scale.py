"""Validating and aggregating 10,000 result files: how long, and how many files per second.

    python bench/validate_scale.py [--files 10000] [--workers N]

Generates a results/ tree of valid, distinct results (from the serviced sample in
tests/data/results, with its workload file) in a temporary folder, then times, each from a
cold start of its own:
- `validate_paths` (what `epbench validate results/` runs);
- `build_tables` (the data step of `epbench build`: it validates every file itself, then
  aggregates the valid ones with pandas), i.e. validating and aggregating.
Target: validating and aggregating 10,000 files in under 30 s on a 2-core machine.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator.tables import build_tables  # noqa: E402
from generator.validate import validate_paths  # noqa: E402

SAMPLE = ROOT / "tests/data/results/alice/acme-llama-8b/2026-11-20-chat-short-a1b2c3d4.json"


def generate(project: Path, count: int) -> None:
    """`count` valid results under project/results, spread over 100 submitters and 20 endpoints."""
    workload = project / "workloads" / "serving" / "chat-short.yaml"
    workload.parent.mkdir(parents=True)
    workload.write_text("id: chat-short\n")
    sha = hashlib.sha256(workload.read_bytes()).hexdigest()
    base = json.loads(SAMPLE.read_text())
    base["workload"]["sha256"] = sha
    for i in range(count):
        doc = copy.deepcopy(base)
        doc["run_id"] = f"{i:08x}-scale"
        doc["submitter"]["name"] = f"sub{i % 100:03d}"
        doc["endpoint"]["id"] = f"acme-{i % 20:02d}"
        day = 1 + i % 28
        doc["started_at"] = f"2026-11-{day:02d}T10:00:00Z"
        doc["finished_at"] = f"2026-11-{day:02d}T10:05:00Z"
        path = (project / "results" / doc["submitter"]["name"] / doc["endpoint"]["id"]
                / f"2026-11-{day:02d}-chat-short-{doc['run_id'][:8]}.json")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc))


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (the pool workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="epbench-scale-") as tmp:
        project = Path(tmp)
        started = time.perf_counter()
        generate(project, args.files)
        print(f"generated {args.files} results in {time.perf_counter() - started:.1f} s "
              f"({os.cpu_count()} cpus)")
        load = os.getloadavg()[0]
        started, cpu = time.perf_counter(), cpu_seconds()
        report = validate_paths([project / "results"])
        validate_s, validate_cpu = time.perf_counter() - started, cpu_seconds() - cpu
        assert not report.blocking and len(report.files) == args.files, report.summary_line()
        print(f"validate:  {validate_s:6.2f} s  {args.files / validate_s:8.0f} files/s  "
              f"(cpu {validate_cpu:.1f} s)")
        started, cpu = time.perf_counter(), cpu_seconds()
        tables = build_tables(project / "results", project)
        build_s, build_cpu = time.perf_counter() - started, cpu_seconds() - cpu
        assert len(tables.runs) == args.files and len(tables.points) == 2 * args.files
        print(f"aggregate: {build_s:6.2f} s  {args.files / build_s:8.0f} files/s  "
              f"(cpu {build_cpu:.1f} s; validation included)")
        print(f"load average at start: {load:.1f} on {os.cpu_count()} cpus; on an idle machine "
              f"validate + aggregate would take about {build_cpu / (os.cpu_count() or 1):.1f} s")
        verdict = "ok" if build_s < 30 else "OVER the 30 s target"
        print(f"validate + aggregate: {build_s:.2f} s for {args.files} files: {verdict}")
        return 0 if build_s < 30 else 1


if __name__ == "__main__":
    raise SystemExit(main())
