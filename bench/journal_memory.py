"""Peak memory and time of `epbench validate` on the largest journals a result may carry.

    python bench/journal_memory.py                          # bomb and legitimate, at the cap
    python bench/journal_memory.py --large-mib 250,25       # legitimate at the cap and 10x less
    python bench/journal_memory.py --cases bomb --bomb-mib 64

Each result is built under bench/.cache/journal_memory/ (a project of its own: results/,
workloads/serving/) and validated by `python -m epbench.cli validate <result>` in a child
process whose peak resident memory is the kernel's own figure (`os.wait4` -> ru_maxrss, taken
by a small launcher process, see LAUNCHER):

    bomb   a small, real-looking run whose journal is its run line followed by `{}` lines up
           to --bomb-mib inflated (a gzip of a few hundred KB): must be one rejection
    large  a legitimate journal of --large-mib inflated (one per comma-separated size): a
           sweep (--levels, default concurrency 8, 16, 32, 64, one point each) of --tokens
           (128) -token requests whose lines are the request lines of a real emulator run
           (`epbench run`, --templates of them, cycled), each given the id, point, seq and
           prompt length of its planned request and timestamps laid out as its point's
           concurrency would send them; the result computed from the journal by epbench's
           own summarizer: must validate

A real run's journal compresses about 3.4 to 1, so the 32 MiB cap on the gzip binds near
105 MiB inflated; cycling a few lines inside deflate's 32 KB window (the default 16 of 128
tokens, about 20 KB; 4 with --tokens 1024) compresses 20 to 50 to 1, which is what lets a
legitimate journal reach the 256 MiB inflated cap. `--templates 64` gives the real ratio: such
a journal past ~105 MiB is refused at the gzip cap, before it is read (the verdict says which
stage was reached).

The figure to hold is peak RSS under 512 MB at the 256 MiB cap (issue 21, item 6).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
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
from epbench.core.journal_records import run_line  # noqa: E402
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


def workload(project: Path, wid: str, per_point: int, levels: list[int],
             tokens: int = TOKENS) -> Path:
    doc = {
        "kind": "serving-workload", "schema_version": 1, "id": wid, "version": "1.0",
        "description": "a journal-size benchmark", "seed": 7,
        "prompts": {"input_tokens": {"distribution": "normal", "mean": 128, "stddev": 16,
                                     "min": 64, "max": 192},
                    "max_tokens": tokens, "ignore_eos": True},
        "load": {"pattern": "concurrency", "concurrency": levels,
                 "requests_per_point": per_point, "warmup_requests": 0},
        "slo": {"ttft_ms": 2000, "tpot_ms": 50}, "timeout_s": 30,
    }
    path = project / "workloads" / "serving" / f"{wid}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def seed_lines(project: Path, count: int, tokens: int = TOKENS) -> list[dict[str, Any]]:
    """The request lines of a real run: `epbench run` of `count` requests of `tokens` output
    tokens against the emulator."""
    seed = workload(project / "seed", "seed", count, [16], tokens)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-m", "epbench.cli", "run", "--workload", str(seed),
                    "--out", str(project / "seed" / "runs"), "--no-progress"],
                   check=True, env=env, cwd=ROOT, capture_output=True)
    journal = next((project / "seed" / "runs").glob("*/events.jsonl"))
    lines = [orjson.loads(x) for x in journal.read_bytes().splitlines()]
    requests = [x for x in lines if "type" not in x and x["class"] == "ok"]
    if len(requests) < count:
        raise SystemExit(f"the seed run completed {len(requests)} of {count} requests")
    return requests


def request_line(template: dict[str, Any], req: Any, t: int, number: int) -> tuple[bytes, int]:
    """The template's line as planned request `req`, sent at `t`: (the line, when it ended)."""
    line = dict(template)
    shift = t - template["t_send_ns"]
    for key in ("t_send_ns", "t_first_ns", "t_first_answer_ns", "t_last_ns", "t_done_ns"):
        if isinstance(template.get(key), int):
            line[key] = template[key] + shift
    offset = template["input_tokens"] - template["input_requested"]  # the server's own count
    line.update(request_id=req.request_id, point=req.point, seq=req.seq, warmup=req.warmup,
                input_requested=req.input_tokens,
                input_tokens=max(1, req.input_tokens + offset))
    if isinstance(template.get("response_id"), str):
        line["response_id"] = f"{template['response_id'][:-8]}{number:08x}"
    return orjson.dumps(line) + b"\n", line["t_done_ns"]


def write_run(project: Path, wid: str, per_point: int, levels: list[int],
              templates: list[dict[str, Any]], tokens: int = TOKENS) -> Path:
    """A run folder (plan, events.jsonl, result.json) of a planned sweep whose request lines
    are `templates`' (cycled), and the result placed in the project's results/ with its
    gzipped journal."""
    loaded = load_serving_workload(workload(project, wid, per_point, levels, tokens))
    plan = build_plan(loaded, "feedc0de" + os.urandom(4).hex(), quick=False)
    plan.meta = {
        "harness": {"name": "epbench", "version": "0.1.0", "git_sha": None},
        "workload": {"id": loaded.id, "version": loaded.version, "sha256": loaded.sha256,
                     "kind": "serving", "pattern": "concurrency"},
        "endpoint": load_document(ROOT / "endpoints" / "emulator.yaml"),
        "client": {"python": "3.11", "os": "Linux", "region": None, "rtt_ms": 0.05, "cpus": 2},
        "settings": {"seed": loaded.seed, "quick": False, "stream": True, "max_tokens": tokens,
                     "ignore_eos": True},
        "slo": loaded.slo, "started_at": "2026-11-20T10:00:00Z",
    }
    run = project / "runs" / wid
    run.mkdir(parents=True, exist_ok=True)
    start = 10_000 * MS
    number = 0
    with (run / "events.jsonl").open("wb") as out:
        out.write(orjson.dumps(run_line(spec=plan.spec(loaded.slo).to_json())) + b"\n")
        out.write(b'{"type":"session","t_ns":9000000000,"at":"2026-11-20T10:00:00.00Z"}\n')
        for point in plan.points:
            lanes = [start + lane * MS for lane in range(point.concurrency or 1)]
            for req in point.requests:  # each to the lane that frees first, as a closed loop
                lane = min(range(len(lanes)), key=lanes.__getitem__)
                line, done = request_line(templates[number % len(templates)], req,
                                          lanes[lane] + 50_000, number)
                lanes[lane] = done
                number += 1
                out.write(line)
            start = max(lanes) + 100 * MS
    journal = run / "events.jsonl"
    data = journal.read_bytes()
    records = evidence.load(journal, evidence.describe(data))
    write_result(run, plan, records)  # type: ignore[arg-type]
    del records
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
    small = write_run(project, "bomb", 8, [1], seed_lines(project, 8))
    packed = small.with_name(small.stem + evidence.SUFFIX)
    first = gzip.decompress(packed.read_bytes()).split(b"\n", 1)[0] + b"\n"
    body = b"{}\n" * ((mib * MIB - len(first)) // 3)
    return place(project, small, first + body)


def measure(result: Path, tree: Path = ROOT) -> dict[str, Any]:
    """Validate `result` in a child process with the epbench of `tree`: exit code, first line,
    peak RSS (MB), seconds."""
    packed = result.with_name(result.stem + evidence.SUFFIX)
    pinned = json.loads(result.read_text())["evidence"]
    cache = result.parent / f"c{os.urandom(4).hex()}"  # nothing remembered from a run before
    env = {**os.environ, "PYTHONPATH": str(tree), "EPBENCH_CACHE_DIR": str(cache)}
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", LAUNCHER, sys.executable, "-m", "epbench.cli", "validate",
         str(result)], capture_output=True, env=env, cwd=tree, check=False)
    output = done.stdout.decode("utf-8", "replace")
    figures = dict(part.split("=") for part in done.stderr.decode().splitlines()[-1].split())
    lines = [x for x in output.splitlines() if ": reject: " in x] or output.splitlines()[-1:]
    return {
        "tree": "this" if tree == ROOT else str(tree),
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
    parser.add_argument("--large-mib", default="250",
                        help="inflated MiB of each legitimate journal, comma-separated")
    parser.add_argument("--templates", type=int, default=16,
                        help="distinct real request lines the legitimate journals cycle through")
    parser.add_argument("--cases", default="bomb,large")
    parser.add_argument("--tokens", type=int, default=TOKENS,
                        help="output tokens of each legitimate request (the workload's max_tokens)")
    parser.add_argument("--levels", default="8,16,32,64",
                        help="the legitimate sweep's concurrency levels, one point each")
    parser.add_argument("--compare", type=Path, action="append", default=[],
                        help="another epbench tree (e.g. a worktree of main) to validate each "
                             "journal with too, for before-and-after figures")
    parser.add_argument("--folder", type=Path, default=ROOT / "bench" / ".cache" / "journal_memory")
    args = parser.parse_args()
    cases = args.cases.split(",")
    project = args.folder
    if project.exists():
        subprocess.run(["rm", "-rf", str(project)], check=True)
    if "bomb" in cases:
        result = bomb(project / "bomb", args.bomb_mib)
        for tree in (ROOT, *args.compare):
            print(json.dumps({"case": "bomb", **measure(result, tree)}), flush=True)
    if "large" in cases:
        templates = seed_lines(project / "templates", max(args.templates, 8),
                               args.tokens)[:args.templates]
        levels = [int(x) for x in args.levels.split(",")]
        size = sum(len(orjson.dumps(t)) + 1 for t in templates) / len(templates)
        for mib in (int(x) for x in args.large_mib.split(",")):
            per_point = max(1, int(mib * MIB / size) // len(levels))
            result = write_run(project / f"large{mib}", f"large{mib}", per_point, levels,
                               templates, args.tokens)
            for tree in (ROOT, *args.compare):
                print(json.dumps({"case": "large", "requests": per_point * len(levels),
                                  "tokens": args.tokens,
                                  "templates": len(templates), **measure(result, tree)}),
                      flush=True)


if __name__ == "__main__":
    main()
