"""Join a scheduled benchmark's shard artifacts into results, for benchmark.yml's last job.

    python scripts/collect_runs.py SHARDS_DIR --submitter ID --work DIR --summary FILE

SHARDS_DIR holds one folder per matrix job, as actions/download-artifact lays them out: each
with `job.json` (that job's matrix entry) and `runs/<run-id>/` (what `epbench run --out runs`
wrote). Jobs are grouped by (endpoint, workload, runner, region); a group with every shard
present is joined with `epbench merge` (a one-shard group is taken as it is) and filed with
`epbench submit`. FILE gets a Markdown summary for the pull request body.

Exit 0 when every group was submitted; 1 when any was incomplete or failed (the others are
still submitted, so the pull request carries what did work); 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
LABEL = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
SHARD = re.compile(r"^([1-9][0-9]{0,1})/([1-9][0-9]{0,1})$")
MAX_JOB_FILE = 64 * 1024


@dataclass(frozen=True)
class Shard:
    """One matrix job's output: which slice of which run, and the run folder it wrote."""

    endpoint: str
    workload: str
    runner: str
    region: str
    index: int
    count: int
    run_dir: Path


@dataclass
class Outcome:
    """What became of one group, for the summary."""

    title: str
    submitted: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def submitter_id(name: str) -> str:
    """A results/ folder name from a GitHub owner name: lowercase, safe characters only."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", name.strip().lower()).strip("-._")[:64]
    if not ID.match(slug):
        raise ValueError(f"cannot make a submitter id from {name!r}")
    return slug


def read_shard(folder: Path) -> Shard:
    """The shard in one artifact folder; ValueError says what is wrong with it."""
    job_file = folder / "job.json"
    if not job_file.is_file() or job_file.stat().st_size > MAX_JOB_FILE:
        raise ValueError(f"{folder.name}: no job.json (or an oversized one)")
    job = json.loads(job_file.read_text(encoding="utf-8"))
    if not isinstance(job, dict):
        raise ValueError(f"{folder.name}/job.json: not an object")
    keys = ("endpoint", "workload", "runner", "region", "shard")
    if not all(isinstance(job.get(key), str) for key in keys):
        raise ValueError(f"{folder.name}/job.json: endpoint, workload, runner, region, shard "
                         "must be strings")
    values: dict[str, str] = {key: job[key] for key in keys}
    if not (ID.match(values["endpoint"]) and ID.match(values["workload"])
            and LABEL.match(values["runner"]) and 0 < len(values["region"]) <= 64):
        raise ValueError(f"{folder.name}/job.json: an id, label or region is malformed")
    match = SHARD.match(values["shard"])
    if not match or int(match.group(1)) > int(match.group(2)):
        raise ValueError(f"{folder.name}/job.json: shard {values['shard']!r} is not I/N")
    runs = sorted(p for p in (folder / "runs").glob("*") if (p / "events.jsonl").is_file())
    if len(runs) != 1:
        raise ValueError(f"{folder.name}: expected one run folder under runs/, found {len(runs)}")
    return Shard(values["endpoint"], values["workload"], values["runner"], values["region"],
                 int(match.group(1)), int(match.group(2)), runs[0])


def epbench(*args: str) -> tuple[int, str]:
    """Run one epbench command (argument list, no shell); its exit code and combined output."""
    done = subprocess.run(["epbench", *args], capture_output=True, text=True, check=False)
    return done.returncode, (done.stdout + done.stderr).strip()


def relative(path: str) -> str:
    """`path` relative to the current folder (the checkout) when it is inside it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return path


def collect(shards_dir: Path, submitter: str, work: Path) -> list[Outcome]:
    """Merge and submit every complete group under `shards_dir`."""
    groups: dict[tuple[str, str, str, str], list[Shard]] = {}
    outcomes: list[Outcome] = []
    for folder in sorted(p for p in shards_dir.iterdir() if p.is_dir()):
        try:
            shard = read_shard(folder)
        except (ValueError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            outcomes.append(Outcome(f"artifact {folder.name}", problems=[str(exc)]))
            continue
        key = (shard.endpoint, shard.workload, shard.runner, shard.region)
        groups.setdefault(key, []).append(shard)
    for (endpoint, workload, runner, region), members in sorted(groups.items()):
        outcome = Outcome(f"{endpoint} / {workload} from {region} ({runner})")
        outcomes.append(outcome)
        members.sort(key=lambda s: s.index)
        count = members[0].count
        indexes = [s.index for s in members]
        if {s.count for s in members} != {count} or indexes != list(range(1, count + 1)):
            outcome.problems.append(f"incomplete: shards {indexes} of {count}; not submitted")
            continue
        run_dir = members[0].run_dir
        if count > 1:
            run_dir = work / re.sub(r"[^A-Za-z0-9._-]+", "_",
                                    f"{endpoint}--{workload}--{runner}--{region}")
            code, output = epbench("merge", *(str(s.run_dir) for s in members),
                                   "--out", str(run_dir))
            if code != 0:
                last = output.splitlines()[-1] if output else f"exit {code}"
                outcome.problems.append(f"epbench merge failed: {last}")
                continue
        code, output = epbench("submit", str(run_dir), "--submitter", submitter)
        lines = output.splitlines()
        if code != 0:
            outcome.problems.extend(lines[-10:] or [f"epbench submit exited {code}"])
            continue
        outcome.submitted.extend(
            relative(line.removeprefix("submitted: "))
            for line in lines if line.startswith("submitted: ")
        )
    return outcomes


def summary(outcomes: list[Outcome], submitter: str) -> str:
    """The pull request body: what was measured, where it was filed, what went wrong."""
    lines = [
        "Results from the scheduled benchmark (`.github/workflows/benchmark.yml`), "
        f"filed as submitter `{submitter}`.",
        "",
        "The submission checks validate them like any other pull request.",
        "",
    ]
    for outcome in outcomes:
        mark = "ok" if outcome.submitted and not outcome.problems else "problem"
        lines.append(f"- **{outcome.title}**: {mark}")
        lines.extend(f"  - `{path}`" for path in outcome.submitted)
        lines.extend(f"  - {problem}" for problem in outcome.problems)
    if not outcomes:
        lines.append("- no shard artifacts were found")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shards_dir", type=Path)
    parser.add_argument("--submitter", required=True)
    parser.add_argument("--work", type=Path, required=True, help="where merged runs go")
    parser.add_argument("--summary", type=Path, required=True, help="Markdown for the PR body")
    args = parser.parse_args(argv)
    try:
        submitter = submitter_id(args.submitter)
    except ValueError as exc:
        parser.error(str(exc))
    args.work.mkdir(parents=True, exist_ok=True)
    outcomes = collect(args.shards_dir, submitter, args.work) if args.shards_dir.is_dir() else []
    text = summary(outcomes, submitter)
    args.summary.write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    failed = not outcomes or any(o.problems for o in outcomes)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
