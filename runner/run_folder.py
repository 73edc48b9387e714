"""A run folder and its files: the plan (with the result's header), the journal, the result.

    runs/<run-id>/plan.json     what the run will send, where its inputs came from, and the
                                result's header (`meta`)
    runs/<run-id>/events.jsonl  one line per finished request (epbench.core.journal_file)
    runs/<run-id>/calibration.json  the endpoint's words-to-tokens fit (epbench.runner.calibrate)
    runs/<run-id>/answers.jsonl conversations only: each answer's text, for --resume
                                (epbench.runner.conversation; never published)
    runs/<run-id>/result.json   written at the end, atomically (temporary file + os.replace)

`read_plan_doc` is the one reader of plan.json (the runner, `--resume` and `epbench merge`).
"""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from epbench.core.errors import RunError
from epbench.core.journal_file import Journal
from epbench.core.journal_lines import complete_records
from epbench.core.journal_records import RUN_JOURNAL
from epbench.core.paths import project_dir

PLAN_FILE = "plan.json"
JOURNAL_FILE = RUN_JOURNAL
RESULT_FILE = "result.json"
CALIBRATION_FILE = "calibration.json"
ANSWERS_FILE = "answers.jsonl"  # conversations: the answers a resume rebuilds histories from


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z"


def write_json_atomic(path: Path, doc: Any) -> None:
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_plan_doc(run_dir: Path) -> dict[str, Any]:
    """The plan.json of a run folder; RunError naming the folder when there is none."""
    path = Path(run_dir) / PLAN_FILE
    if not path.is_file():
        raise RunError(
            f"{run_dir}: no {PLAN_FILE} here; --resume takes a run folder (runs/<run-id>)"
        )
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise RunError(f"{path}: not JSON ({exc}); this run folder is damaged") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("run_id"), str):
        raise RunError(f"{path}:/run_id: missing; this is not a plan written by epbench run")
    return doc


def new_run_dir(out: Path | None, run_id: str) -> Path:
    """runs/<run-id> under `out` (default: the project's runs/), created empty."""
    base = out if out is not None else project_dir() / "runs"
    run_dir = Path(base).resolve() / run_id
    run_dir.mkdir(parents=True, exist_ok=False)
    return run_dir


def say(message: str) -> None:
    print(f"epbench: {message}", file=sys.stderr, flush=True)


def read_journal(run_dir: Path) -> list[dict[str, Any]]:
    """The journal's complete records; incomplete lines are reported and skipped."""
    records, skipped = complete_records(Journal.read(run_dir / JOURNAL_FILE))
    if skipped:
        say(f"{run_dir / JOURNAL_FILE}: skipped {skipped} incomplete journal line(s)")
    return records


def run_inputs(endpoint: Path, workload: Path) -> dict[str, str]:
    """Where a run's endpoint and workload files are (absolute), for `--resume DIR` alone."""
    return {"endpoint": str(Path(endpoint).resolve()), "workload": str(Path(workload).resolve())}
