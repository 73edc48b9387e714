"""A result that claims a shipped agentic workload (its real sha256) but whose journal ran another
plan (fewer tasks, fewer trials, a smaller max_tokens, another tool, a trial left out) is
rejected by `epbench validate` with one `workload.plan` line: the plan is rebuilt from the
workload file the result names (epbench.core.agentic_plan, what the runner ran from) and
compared with the journal's run, trial and request lines (issue 21, item 4). Every run here is
real: `epbench run` against the emulator, which plays each variant of the workload."""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from attack import ROOT, epbench

from epbench.core import evidence
from epbench.core.documents import load_document
from epbench.generator.submit import submit_run
from epbench.runner.workload import load_workload_file

CLAIMED = ROOT / "workloads" / "agentic" / "weather-single-call.yaml"
DECOY = {"name": "get_forecast", "description": "Tomorrow's weather for a city.",
         "parameters": {"type": "object", "required": ["city"],
                        "properties": {"city": {"type": "string"}}},
         "implementation": {"type": "static", "response": {"forecast": "sun"}}}


def _fewer_tasks(doc: dict[str, Any]) -> None:
    doc["tasks"].pop()


def _fewer_trials(doc: dict[str, Any]) -> None:
    doc["quick_trials"] = doc["quick_trials"] - 1


def _short_answers(doc: dict[str, Any]) -> None:
    doc["settings"]["max_tokens"] = 64


def _decoy_tool(doc: dict[str, Any]) -> None:
    doc["tools"].append(DECOY)


VARIANTS: dict[str, Callable[[dict[str, Any]], None]] = {
    "weather-fewer-tasks": _fewer_tasks, "weather-fewer-trials": _fewer_trials,
    "weather-short-answers": _short_answers, "weather-decoy-tool": _decoy_tool,
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One `epbench run --quick` of the claimed workload and of each variant, against the
    emulator (one process for the folder); the run folder of each, by workload id."""
    folder = tmp_path_factory.mktemp("agentic-swap")
    endpoint = load_document(ROOT / "endpoints" / "emulator.yaml")
    endpoint["emulator"].update(slots=16, ttft_ms=2, prefill_ms_per_1k_tokens=1, tpot_ms=1,
                                jitter=0.0)
    (folder / "fast-emulator.yaml").write_text(yaml.safe_dump(endpoint), encoding="utf-8")
    variants = folder / "variants"
    variants.mkdir()
    shutil.copy(CLAIMED, variants / CLAIMED.name)  # the same bytes: the same sha256
    for name, change in VARIANTS.items():
        doc = load_document(CLAIMED)
        doc["id"] = name
        change(doc)
        (variants / f"{name}.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    done = epbench("run", "--endpoint", "fast-emulator.yaml", "--workload", "variants",
                   "--quick", "--json", "--no-progress", "--out", "runs", cwd=folder)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    found = {json.loads((run / "result.json").read_text())["workload"]["id"]: run
             for run in (folder / "runs").iterdir() if (run / "result.json").is_file()}
    assert set(found) == {"weather-single-call", *VARIANTS}
    return found


def claiming(run: Path, project: Path) -> Path:
    """The run's result re-labelled as a run of the shipped workload (id, version, sha256 and
    the settings it asks for), submitted under `project`: every figure still recomputes."""
    real = load_workload_file(CLAIMED)
    result = run / "result.json"
    doc = json.loads(result.read_text())
    doc["workload"].update(id=real.id, version=real.version, sha256=real.sha256)
    asked = real.doc["settings"]
    doc["settings"].update(seed=real.seed, stream=asked["stream"],
                           temperature=asked["temperature"], max_tokens=asked["max_tokens"])
    result.write_text(json.dumps(doc, indent=2))
    path, _ = submit_run(run, "mallory", None, "independent", project / "results")
    return path


def rejections(path: Path) -> list[str]:
    done = epbench("validate", str(path), cwd=ROOT)
    found = [line for line in done.stdout.splitlines() if ": reject: " in line]
    assert done.returncode == (1 if found else 0), done.stdout + done.stderr
    return found


def test_a_run_of_the_claimed_agentic_workload_itself_validates(runs: dict[str, Path],
                                                                 tmp_path: Path) -> None:
    path, _ = submit_run(runs["weather-single-call"], "alice", None, "independent",
                         tmp_path / "results")
    assert rejections(path) == []


@pytest.mark.parametrize(("variant", "pointer", "says"), [
    ("weather-fewer-tasks", "/agentic/tasks",
     "journal line 1: the journal ran tasks ['paris-now', 'tokyo-fahrenheit'] (2 tasks), the "
     "plan's are "
     "['paris-now', 'tokyo-fahrenheit', 'sao-paulo'] (3 tasks)"),
    ("weather-fewer-trials", "/agentic/trials",
     "the journal ran 1 trials of each task, the plan 2"),
    ("weather-short-answers", "/evidence",
     "the run's settings.max_tokens is 64, the plan's 256"),
    ("weather-decoy-tool", "/agentic/tasks/0",
     "task 'paris-now' was offered tools ['get_weather', 'get_forecast'], the plan offers "
     "['get_weather']"),
])
def test_a_run_of_another_plan_relabelled_as_the_shipped_workload_is_rejected_with_one_line(
    runs: dict[str, Path], tmp_path: Path, variant: str, pointer: str, says: str,
) -> None:
    path = claiming(runs[variant], tmp_path)
    found = rejections(path)
    assert len(found) == 1, found
    assert found[0].startswith(f"{path}:{pointer}: reject: [workload.plan] "), found[0]
    assert says in found[0] and "workload 'weather-single-call'" in found[0], found[0]


def test_a_journal_with_one_trial_cut_out_is_rejected_before_its_figures_are(
    runs: dict[str, Path], tmp_path: Path,
) -> None:
    source = runs["weather-single-call"]
    run = tmp_path / "run"
    shutil.copytree(source, run)
    path, _ = submit_run(run, "mallory", None, "independent", tmp_path / "results")
    journal = path.with_name(path.stem + evidence.SUFFIX)
    lines = gzip.decompress(journal.read_bytes()).splitlines()
    kept = [line for line in lines
            if not (b'"task":"sao-paulo"' in line and b'"trial":1,' in line)]
    assert len(kept) < len(lines)
    data = b"\n".join(kept) + b"\n"
    evidence.pack(data, journal)
    doc = json.loads(path.read_text())
    doc["evidence"] = evidence.describe(data)
    path.write_text(json.dumps(doc, indent=2))
    found = rejections(path)
    assert len(found) == 1 and "[workload.plan]" in found[0], found
    assert f"{path}:/agentic/tasks/2: reject:" in found[0], found[0]
    assert "trial 1 of task 'sao-paulo' has no trial line; the plan runs 2 trials of each of " \
           "its 3 tasks" in found[0], found[0]
