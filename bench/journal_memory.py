"""Peak memory and time of `epbench validate` on the largest journals a result may carry.

    python bench/journal_memory.py                      # both cases at the 256 MiB cap
    python bench/journal_memory.py --bomb-mib 64 --large-mib 64
    python bench/journal_memory.py --cases bomb

Two results are built under bench/.cache/journal_memory/ (a project of its own: results/,
workloads/serving/), each validated by `python -m epbench.cli validate <result>` in a child
process whose peak resident memory is the kernel's own figure (`os.wait4` -> ru_maxrss, taken
by a small launcher process, see LAUNCHER):

    bomb   a small, real-looking run whose journal is its run line followed by `{}` lines up
           to --bomb-mib inflated (a gzip of a few hundred KB): must be one rejection
    large  a legitimate journal near the cap: a four-point sweep of 128-token requests, one
           journal line per planned request, written like the runner writes them, with the
           result computed from it by epbench's own summarizer: must validate

The figure to hold is peak RSS under 512 MB at the 256 MiB cap (issue 21, item 6).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from epbench.core import evidence  # noqa: E402
from epbench.core.documents import load_document  # noqa: E402
from epbench.generator.submit import expected_relpath, with_submitter  # noqa: E402
from epbench.runner.plan import build_plan  # noqa: E402
from epbench.runner.serving_run import write_result  # noqa: E402
from epbench.runner.workload import load_serving_workload  # noqa: E402

MIB = 1024 * 1024
MS = 1_000_000
# A small launcher runs the command and reports its peak RSS: the kernel carries a process's
# peak across exec, so a child forked from a large process (this one, the test runner)
# would report its parent's memory; one forked from this small launcher reports its own.
LAUNCHER = (
    "import os, subprocess, sys\n"
    "child = subprocess.Popen(sys.argv[1:])\n"
    "_, status, usage = os.wait4(child.pid, 0)\n"
    "print(f'peak_rss_kb={usage.ru_maxrss} cpu_s={usage.ru_utime + usage.ru_stime}', "
    "file=sys.stderr)\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)

TOKENS = 128


def workload(project: Path, wid: str, per_point: int, levels: list[int]) -> Path:
    doc = {
        "kind": "serving-workload", "schema_version": 1, "id": wid, "version": "1.0",
        "description": "a journal-size benchmark", "seed": 7,
        "prompts": {"input_tokens": {"distribution": "normal", "mean": 128, "stddev": 16,
                                     "min": 64, "max": 192},
                    "max_tokens": TOKENS, "ignore_eos": True},
        "load": {"pattern": "concurrency", "concurrency": levels,
                 "requests_per_point": per_point, "warmup_requests": 0},
        "slo": {"ttft_ms": 2000, "tpot_ms": 50}, "timeout_s": 30,
    }
    path = project / "workloads" / "serving" / f"{wid}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def request_line(req: Any, t: int, rng: random.Random) -> tuple[bytes, int]:
    gaps = [rng.randint(4000, 9000) for _ in range(TOKENS - 1)]
    first = t + rng.randint(20, 80) * MS
    last = first + sum(gaps) * 1000
    line = orjson.dumps({
        "request_id": req.request_id, "point": req.point, "seq": req.seq,
        "warmup": req.warmup, "t_scheduled_ns": None, "t_send_ns": t, "t_first_ns": first,
        "t_first_answer_ns": first, "t_last_ns": last, "t_done_ns": last + MS,
        "input_tokens": req.input_tokens, "input_source": "usage",
        "input_requested": req.input_tokens, "output_tokens": TOKENS, "token_source": "usage",
        "reasoning_tokens": None, "cache_read_tokens": None, "cache_write_tokens": None,
        "status": 200, "class": "ok", "error": None, "itl_us": gaps, "attempts": 1,
        "retry_s": 0.0, "retry_tokens": 0,
    })
    return line + b"\n", last


def write_run(project: Path, wid: str, per_point: int, levels: list[int]) -> Path:
    """A run folder (plan, events.jsonl, result.json) of a planned sweep, written without a
    run, and the result placed in the project's results/ with its gzipped journal."""
    loaded = load_serving_workload(workload(project, wid, per_point, levels))
    plan = build_plan(loaded, "feedc0de" + os.urandom(4).hex(), quick=False)
    plan.meta = {
        "harness": {"name": "epbench", "version": "0.1.0", "git_sha": None},
        "workload": {"id": loaded.id, "version": loaded.version, "sha256": loaded.sha256,
                     "kind": "serving", "pattern": "concurrency"},
        "endpoint": load_document(ROOT / "endpoints" / "emulator.yaml"),
        "client": {"python": "3.11", "os": "Linux", "region": None, "rtt_ms": 0.05, "cpus": 2},
        "settings": {"seed": loaded.seed, "quick": False, "stream": True, "max_tokens": TOKENS,
                     "ignore_eos": True},
        "slo": loaded.slo, "started_at": "2026-11-20T10:00:00Z",
    }
    run = project / "runs" / wid
    run.mkdir(parents=True, exist_ok=True)
    rng = random.Random(3)
    t = 10_000 * MS
    with (run / "events.jsonl").open("wb") as out:
        out.write(orjson.dumps({"type": "run", "spec": plan.spec(loaded.slo).to_json()}) + b"\n")
        out.write(b'{"type":"session","t_ns":9000000000,"at":"2026-11-20T10:00:00.00Z"}\n')
        for point in plan.points:
            for req in point.requests:
                line, t = request_line(req, t, rng)
                out.write(line)
    journal = run / "events.jsonl"
    data = journal.read_bytes()
    records = evidence.load(journal, evidence.describe(data))
    write_result(run, plan, records)
    return place(project, run / "result.json", data)


def place(project: Path, result_path: Path, journal: bytes) -> Path:
    doc = with_submitter(json.loads(result_path.read_text()), "bench", None, "independent")
    doc["evidence"] = evidence.describe(journal)
    target = project / "results" / expected_relpath(doc)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(doc, indent=2))
    evidence.pack(journal, target.with_name(target.stem + evidence.SUFFIX))
    return target


def bomb(project: Path, mib: int) -> Path:
    """A small run's result whose journal is its run line, then `{}` lines to `mib` MiB."""
    small = write_run(project, "bomb", 8, [1])
    packed = small.with_name(small.stem + evidence.SUFFIX)
    first = gzip.decompress(packed.read_bytes()).split(b"\n", 1)[0] + b"\n"
    body = b"{}\n" * ((mib * MIB - len(first)) // 3)
    return place(project, small, first + body)


def measure(result: Path) -> dict[str, Any]:
    """Validate `result` in a child process: exit code, first line, peak RSS (MB), seconds."""
    packed = result.with_name(result.stem + evidence.SUFFIX)
    pinned = json.loads(result.read_text())["evidence"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "EPBENCH_CACHE_DIR": str(result.parent / "c")}
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", LAUNCHER, sys.executable, "-m", "epbench.cli", "validate",
         str(result)], capture_output=True, env=env, cwd=ROOT, check=False)
    output = done.stdout.decode("utf-8", "replace")
    figures = dict(part.split("=") for part in done.stderr.decode().splitlines()[-1].split())
    lines = [x for x in output.splitlines() if ": reject: " in x] or output.splitlines()[-1:]
    return {
        "journal_mib": round(pinned["bytes"] / MIB, 1),
        "gzip_bytes": packed.stat().st_size,
        "lines": pinned["lines"],
        "exit": done.returncode,
        "peak_rss_mb": round(int(figures["peak_rss_kb"]) / 1024, 1),
        "wall_s": round(time.monotonic() - start, 1),
        "cpu_s": round(float(figures["cpu_s"]), 1),
        "verdict": (lines[0] if lines else "")[-240:],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bomb-mib", type=int, default=256)
    parser.add_argument("--large-mib", type=int, default=250)
    parser.add_argument("--cases", default="bomb,large")
    parser.add_argument("--folder", type=Path, default=ROOT / "bench" / ".cache" / "journal_memory")
    args = parser.parse_args()
    cases = args.cases.split(",")
    project = args.folder
    if project.exists():
        subprocess.run(["rm", "-rf", str(project)], check=True)
    if "bomb" in cases:
        print(json.dumps({"case": "bomb", **measure(bomb(project / "bomb", args.bomb_mib))}))
    if "large" in cases:
        # about 1,150 bytes a line (127 inter-token gaps); four points
        per_point = max(1, args.large_mib * MIB // 1180 // 4)
        result = write_run(project / "large", "large", per_point, [8, 16, 32, 64])
        print(json.dumps({"case": "large", "requests": per_point * 4, **measure(result)}))


if __name__ == "__main__":
    main()
