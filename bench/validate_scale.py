"""Validating 10,000 result files, each with its journal, from a cold start: how long.

    python bench/validate_scale.py [--files 10000] [--requests 64]

Generates a results/ tree of valid, distinct results in a temporary folder: each result has
its own gzipped journal beside it (distinct bytes, so a distinct sha256), built from one of 20
seeded journal templates (two closed-loop points, `--requests` measured requests each, 16
output tokens a request), with figures computed by epbench.core.summary exactly as `epbench run`
does. Endpoint and workload files are written so identity checks pass. Then, each timed:

- cold: `validate_paths` on the whole tree with an empty recomputation cache, as CI on a
  fresh machine runs it: every journal read, inflated and hashed, and every figure of every
  point (percentiles, bootstrap intervals, windows, throughput, goodput, Pareto membership)
  recomputed from it and compared with the result. This is the figure with the target;
- warm: the same again, now that the recomputation cache (epbench.generator.checks.verified) holds
  the verdicts of the cold run (each journal is still read, inflated and hashed);
- `build_tables` on every result (validating and aggregating, as `epbench build` does).

Target (issue 10): validating 10,000 results with their journals in under 60 s on a 2-core
machine. Each line prints the CPU seconds and the load average beside the wall time, since a
shared machine's other work lengthens the wall time but not the CPU time.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from epbench.core import evidence  # noqa: E402
from epbench.core.journal_records import run_line  # noqa: E402
from epbench.core.runspec import PointSpec, RunSpec  # noqa: E402
from epbench.core.summary import summarize_run  # noqa: E402
from epbench.generator.tables import build_tables  # noqa: E402
from epbench.generator.validate import validate_paths  # noqa: E402

SAMPLE = ROOT / "tests/data/results/alice/acme-llama-8b/2026-11-20-chat-short-a1b2c3d4.json"
TEMPLATES = 20
MS = 1_000_000


def journal(seed: int, requests: int) -> tuple[list[dict[str, Any]], RunSpec]:
    """A plausible journal of two closed-loop points (c1, c8), seeded."""
    rng = random.Random(seed)
    spec = RunSpec(pattern="concurrency", seed=1,
                   points=[PointSpec("c1", 0, concurrency=1), PointSpec("c8", 1, concurrency=8)],
                   slo={"ttft_ms": 2000.0, "tpot_ms": 50.0})
    lines: list[dict[str, Any]] = [run_line(spec=spec.to_json())]
    t = 10_000 * MS
    for point in spec.points:
        for seq in range(max(requests, point.concurrency or 1)):
            t += rng.randint(1, 5) * MS
            gaps = [rng.randint(4000, 9000) for _ in range(15)]
            first = t + rng.randint(20, 80) * MS
            last = first + sum(gaps) * 1000
            ok = rng.random() > 0.005
            lines.append({
                "request_id": f"{point.id}-{seq:05d}", "point": point.id, "seq": seq,
                "warmup": False, "t_scheduled_ns": None, "t_send_ns": t,
                "t_first_ns": first if ok else None, "t_last_ns": last if ok else None,
                "t_done_ns": last + MS, "input_tokens": 128, "input_requested": 128,
                "output_tokens": 16 if ok else None,
                "token_source": "usage" if ok else None, "status": 200 if ok else 503,
                "class": "ok" if ok else "http_5xx", "error": None, "itl_us": gaps if ok else [],
                "attempts": 1, "retry_s": 0.0, "retry_tokens": 0,
            })
    return lines, spec


def encode(lines: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(x, separators=(",", ":")).encode() + b"\n" for x in lines)


def generate(project: Path, count: int, requests: int) -> int:
    """`count` valid results with journals under project/results; the bytes of one journal."""
    workload = project / "workloads" / "serving" / "chat-short.yaml"
    workload.parent.mkdir(parents=True)
    workload.write_text(json.dumps({  # the plan the journals ran (workload.plan compares)
        "kind": "serving-workload", "schema_version": 1, "id": "chat-short", "version": "1.0",
        "description": "the scale bench's load", "seed": 1,
        "prompts": {"input_tokens": {"distribution": "fixed", "value": 128}, "max_tokens": 16},
        "sampling": {"temperature": 0.0, "top_p": 1.0},
        "load": {"pattern": "concurrency", "concurrency": [1, 8],
                 "requests_per_point": requests, "warmup_requests": 0},
        "slo": {"ttft_ms": 2000, "tpot_ms": 50},
    }))
    sha = hashlib.sha256(workload.read_bytes()).hexdigest()
    base = json.loads(SAMPLE.read_text())
    base["workload"]["sha256"] = sha
    base["settings"].update(max_tokens=16)
    (project / "endpoints").mkdir()
    for e in range(20):
        endpoint = {**base["endpoint"], "id": f"acme-{e:02d}"}
        (project / "endpoints" / f"acme-{e:02d}.yaml").write_text(json.dumps(endpoint))
    templates = []
    for k in range(TEMPLATES):
        lines, spec = journal(k, requests)
        templates.append((lines, summarize_run(spec, lines)))
    size = 0
    for i in range(count):
        lines, figures = templates[i % TEMPLATES]
        day = 1 + i % 28
        session = {"type": "session", "t_ns": 9_000 * MS, "at": f"2026-11-{day:02d}T10:00:{i}Z"}
        data = encode([lines[0], session, *lines[1:]])  # the session line makes it distinct
        doc = copy.deepcopy(base)
        doc.update({k: v for k, v in figures.items()})
        doc["evidence"] = evidence.describe(data)
        doc["run_id"] = f"{i:08x}-scale"
        doc["submitter"]["name"] = f"sub{i % 100:03d}"
        doc["endpoint"]["id"] = f"acme-{i % 20:02d}"
        doc["started_at"] = f"2026-11-{day:02d}T10:00:00Z"
        doc["finished_at"] = f"2026-11-{day:02d}T10:05:00Z"
        path = (project / "results" / doc["submitter"]["name"] / doc["endpoint"]["id"]
                / f"2026-11-{day:02d}-chat-short-{doc['run_id'][:8]}.json")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc))
        packed = path.with_name(path.stem + evidence.SUFFIX)
        evidence.pack(data, packed)
        size = packed.stat().st_size
    return size


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (the pool workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(what: Any) -> tuple[Any, float, float]:
    started, cpu = time.perf_counter(), cpu_seconds()
    out = what()
    return out, time.perf_counter() - started, cpu_seconds() - cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=64, help="measured requests a point")
    args = parser.parse_args()
    cpus = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="epbench-scale-") as tmp:
        project = Path(tmp)
        os.environ["EPBENCH_CACHE_DIR"] = str(project / "cache")
        started = time.perf_counter()
        size = generate(project, args.files, args.requests)
        print(f"generated {args.files} results, each with its journal ({2 * args.requests} "
              f"requests, {size} bytes gzipped), in {time.perf_counter() - started:.1f} s "
              f"({cpus} cpus)")
        results = project / "results"
        runs = []
        for name in ("cold", "warm"):
            load = os.getloadavg()[0]
            report, wall, cpu = timed(lambda: validate_paths([results]))
            assert not report.blocking and len(report.files) == args.files, \
                report.summary_line()
            runs.append(wall)
            print(f"{name + ':':10s} {wall:6.2f} s  {args.files / wall:6.0f} files/s  (cpu "
                  f"{cpu:.1f} s, {cpu / args.files * 1000:.1f} ms a result; load average "
                  f"{load:.1f} on {cpus} cpus)")
        load = os.getloadavg()[0]
        tables, build_s, build_cpu = timed(lambda: build_tables(results, project))
        assert len(tables.runs) == args.files and len(tables.points) == 2 * args.files
        print(f"aggregate: {build_s:6.2f} s  {args.files / build_s:6.0f} files/s  (cpu "
              f"{build_cpu:.1f} s; validation included, warm; load average {load:.1f})")
        cold = runs[0]
        verdict = "ok" if cold < 60 else "OVER the 60 s target"
        print(f"validate {args.files} results with their journals, cold: {cold:.2f} s "
              f"(target 60 s): {verdict}")
        return 0 if cold < 60 else 1


if __name__ == "__main__":
    raise SystemExit(main())
