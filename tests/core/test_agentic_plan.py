"""What an agentic run plans is one function (epbench.core.agentic_plan): the executor journals
it as the run line and sends what it says, and `epbench validate` rebuilds it from the workload
file and finds the first line of a journal that ran something else (`workload.plan`)."""

from __future__ import annotations

import asyncio
import copy
import hashlib
from pathlib import Path
from typing import Any

import yaml

from epbench.core.agentic_plan import FEATURE, NON_STREAMED, AgenticPlan, plan_agentic
from epbench.core.documents import load_document
from epbench.generator.checks.workload.agentic_plan import check_plan, expected_plan
from epbench.generator.checks.workload.sha import WorkloadIndex
from epbench.runner.agentic.executor import agentic_run_line, run_agentic
from epbench.runner.context import RunContext
from epbench.runner.workload import LoadedWorkload
from tests.conftest import ROOT
from tests.runner.agentic.test_agentic_executor import (
    CARD,
    FakeClient,
    Journal,
    call_chunks,
    ok,
    reply_chunks,
)
from tests.runner.agentic.test_agentic_executor import workload as small_workload

FALLBACK = {"feature": FEATURE, "fallback": NON_STREAMED, "reason": "empty stream"}


def journal_of(doc: dict[str, Any], trials: int, used: list[dict[str, str]] | None = None,
               ) -> tuple[list[dict[str, Any]], FakeClient]:
    """The journal of a run of `doc` whose every trial makes the right call, then answers."""
    client = FakeClient([ok(c) for _ in range(trials)
                         for c in (call_chunks('{"city": "Paris"}'), reply_chunks("18"))])
    journal = Journal()
    ctx = RunContext(run_id="r", run_dir=Path("."), endpoint={"model": {"name": "m"},
                     "pricing": CARD}, base_url="http://x/v1", client=client, journal=journal,
                     seed=0, fallbacks_used=list(used or []))
    loaded = LoadedWorkload(path=Path("w.yaml"), doc=doc, sha256="0" * 64, kind=doc["kind"])
    journal.append(agentic_run_line(ctx, loaded))  # what the run lifecycle journals first
    asyncio.run(run_agentic(ctx, loaded))
    return copy.deepcopy(journal.lines), client


def claimed(project: Path, doc: dict[str, Any], **settings: Any,
            ) -> tuple[dict[str, Any], Any]:
    """A result naming `doc` (written under the project's workloads/agentic/) and the plan
    validate rebuilds for it."""
    path = project / "workloads" / "agentic" / f"{doc['id']}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    result = {"workload": {"id": doc["id"], "kind": "agentic", "sha256": sha},
              "settings": {"seed": 0, "quick": False, "stream": True, "temperature": 0.0,
                           **settings}}
    return result, expected_plan(result, WorkloadIndex(project), "x.json")


def test_the_run_line_the_executor_journals_is_the_plan_validate_rebuilds(tmp_path: Path) -> None:
    doc = small_workload(trials=2)
    lines, _ = journal_of(doc, 2)
    result, plan = claimed(tmp_path, doc)
    assert isinstance(plan, AgenticPlan)
    assert lines[0] == {"type": "run", "agentic": plan.run_line()}
    assert plan.tasks == ("paris",) and plan.trials == 2 and plan.tools == (("get_weather",),)
    assert check_plan(result, plan, lines, "x.json") == []


def test_requests_sent_unstreamed_validate_only_with_the_declared_fallback(
    tmp_path: Path,
) -> None:
    doc = small_workload()
    lines, client = journal_of(doc, 1, [FALLBACK])
    assert [body["stream"] for body in client.bodies] == [False, False]
    assert lines[0]["agentic"]["settings"]["stream"] is False
    result, plan = claimed(tmp_path, doc, stream=False, fallbacks=[FALLBACK])
    assert check_plan(result, plan, lines, "x.json") == []
    result, plan = claimed(tmp_path, doc, stream=False)
    found = check_plan(result, plan, lines, "x.json")
    assert [(f.check, f.pointer) for f in found] == [("workload.plan", "/settings/stream")]
    assert "settings.stream is False, not True" in found[0].message


def test_each_task_is_offered_its_own_tools_and_quick_runs_run_quick_trials() -> None:
    bfcl = load_document(ROOT / "workloads" / "agentic" / "bfcl" / "bfcl-multiple.yaml")
    plan = plan_agentic(bfcl, quick=False)
    assert plan.tools == tuple(tuple(t["name"] for t in task["tools"]) for task in bfcl["tasks"])
    assert len(set(plan.task_sha256)) == len(plan.tasks) == len(bfcl["tasks"])
    weather = load_document(ROOT / "workloads" / "agentic" / "weather-single-call.yaml")
    assert (plan_agentic(weather, False).trials, plan_agentic(weather, True).trials) == (
        weather["trials"], weather["quick_trials"])


def test_a_journal_line_outside_the_plan_is_named_by_its_number(tmp_path: Path) -> None:
    doc = small_workload()
    lines, _ = journal_of(doc, 1)
    result, plan = claimed(tmp_path, doc)
    trial = next(line for line in lines if line["type"] == "trial")
    request = next(line for line in lines if line["type"] == "request")
    cases = [
        ([*lines, trial], "/agentic/tasks/0",
         f"journal line {len(lines) + 1}: trial 0 of task 'paris' is journaled twice"),
        ([*lines, {**request, "step": 7}], "/agentic/tasks/0",
         f"journal line {len(lines) + 1}: a request at step 7 of task 'paris'; the plan stops "
         "a trial after 6 steps"),
        ([*lines, {**trial, "task": "elsewhere"}], "/evidence",
         f"journal line {len(lines) + 1}: a trial of task 'elsewhere', which the plan does not "
         "run"),
        ([*lines, {**trial, "trial": 1}], "/agentic/tasks/0",
         f"journal line {len(lines) + 1}: trial 1 of task 'paris'; the plan runs trials 0 to 0"),
        ([{"type": "run", "agentic": {"tasks": ["paris"], "trials": 1}}, *lines[1:]],
         "/evidence", "journal line 1: the run line does not say the plan's seed"),
    ]
    for journal, pointer, says in cases:
        found = check_plan(result, plan, journal, "x.json")
        assert len(found) == 1 and found[0].pointer == pointer, (says, found)
        assert says in found[0].message, found[0].message
