"""Load levels of agentic workloads: the plan of each level, agents at SLO as a step function,
and the validator's view of a journal with levels (epcore/metrics/capacity.py,
epcore/agentic_plan.py, generator/checks/workload/agentic_plan.py)."""

from __future__ import annotations

import pytest

from epbench.core.agentic_plan import Load, plan_agentic
from epbench.core.agentic_summary import summarize_load
from epbench.core.metrics.capacity import Level, capacity, hourly_price
from epbench.core.metrics.quality import quality_gate
from epbench.core.trial_record import TrialRecord
from epbench.generator.checks.workload.agentic_plan import check_plan

HOURLY = {"usd_per_hour": 2.0, "effective_date": "2026-01-01"}
PER_TOKEN = {"input_usd_per_mtok": 1.0, "output_usd_per_mtok": 2.0,
             "effective_date": "2026-01-01"}


def doc(tasks: int = 2, trials: int = 3, levels: list[int] | None = None) -> dict:
    out = {
        "kind": "agentic-workload", "id": "w", "trials": trials, "quick_trials": 1,
        "tools": [{"name": "t"}],
        "tasks": [{"id": f"task{i}", "conversation": ["hi"]} for i in range(tasks)],
    }
    if levels is not None:
        out["load"] = {"concurrency": levels, "slo": {"decision_p90_ms": 250}}
    return out


def test_each_level_plays_enough_trials_that_every_agent_has_a_whole_one():
    plan = plan_agentic(doc(tasks=2, trials=3, levels=[1, 4, 16, 64]), quick=False)
    assert plan.load is not None
    assert plan.load.trials == (3, 3, 8, 32)  # max(3, ceil(L / 2))
    assert [plan.trials_at(level) for level in (1, 4, 16, 64)] == [3, 3, 8, 32]
    assert plan.run_line()["load"] == {"concurrency": [1, 4, 16, 64], "trials": [3, 3, 8, 32],
                                       "slo": {"decision_p90_ms": 250.0}}
    quick = plan_agentic(doc(tasks=2, trials=3, levels=[1, 4]), quick=True)
    assert quick.load is not None and quick.load.trials == (1, 2)


def test_a_workload_without_load_levels_plans_and_journals_as_before():
    plan = plan_agentic(doc(levels=None), quick=False)
    assert plan.load is None and "load" not in plan.run_line()
    line = TrialRecord(task="task0", trial=0, result="success").journal_line()
    assert "level" not in line and "errors" not in line


def test_agents_at_slo_is_the_last_level_before_the_first_that_misses_the_slo():
    levels = [Level(1, 20, 20, 100.0), Level(4, 20, 20, 150.0), Level(16, 20, 20, 260.0),
              Level(64, 20, 20, 240.0)]
    cap = capacity(levels, 250.0, HOURLY)
    assert cap["agents_at_slo"] == 4  # 64 meets the SLO again, but a fleet passes through 16
    assert [row["meets_decision_slo"] for row in cap["levels"]] == [True, True, False, True]
    assert [row["at_slo"] for row in cap["levels"]] == [True, True, False, True]
    assert cap["agents_per_usd_hour"] == 2.0  # 4 agents / $2 an hour


def test_success_clearly_below_the_baseline_ends_capacity_even_within_the_slo():
    levels = [Level(1, 30, 30, 100.0), Level(8, 29, 30, 100.0), Level(32, 18, 30, 100.0)]
    cap = capacity(levels, 250.0, PER_TOKEN)
    assert quality_gate(29, 30, 30, 30).below is False
    assert quality_gate(18, 30, 30, 30).below is True
    assert cap["agents_at_slo"] == 8
    assert [row["success_below_baseline"] for row in cap["levels"]] == [False, False, True]
    assert cap["levels"][2]["success_p_value"] == pytest.approx(
        quality_gate(18, 30, 30, 30).p_value)
    assert cap["usd_per_hour"] is None and cap["agents_per_usd_hour"] is None


def test_a_baseline_that_misses_the_slo_serves_no_agent_at_it():
    cap = capacity([Level(1, 5, 5, 300.0), Level(4, 5, 5, 200.0)], 250.0, HOURLY)
    assert cap["agents_at_slo"] == 0 and cap["agents_per_usd_hour"] is None
    no_decision = capacity([Level(1, 5, 5, None)], 250.0)
    assert no_decision["agents_at_slo"] == 0
    assert no_decision["levels"][0]["meets_decision_slo"] is False


def test_the_hourly_price_is_the_latest_hourly_card_of_a_result():
    cards = [{"usd_per_hour": 3.0, "effective_date": "2025-01-01"},
             {"usd_per_hour": 4.0, "effective_date": "2026-06-01"}]
    assert hourly_price(cards) == 4.0
    assert hourly_price(HOURLY) == 2.0
    assert hourly_price(PER_TOKEN) is None and hourly_price(None) is None


def _trial(level: int, task: str, trial: int, result: str = "success",
           decisions: tuple[float, ...] = (100.0,)) -> TrialRecord:
    return TrialRecord(task=task, trial=trial, result=result, level=level, steps=1, requests=1,
                       input_tokens=10, output_tokens=5, decision_ms=list(decisions),
                       wall_ms=200.0)


def test_the_section_is_the_baselines_with_every_level_and_its_capacity():
    load = Load(concurrency=(1, 4), trials=(2, 2), decision_p90_ms=150.0)
    recs = [_trial(1, t, k) for t in ("a", "b") for k in range(2)]
    recs += [_trial(4, t, k, "failed" if (t, k) == ("b", 1) else "success", (200.0,))
             for t in ("a", "b") for k in range(2)]
    recs[-1].errors = {"http_5xx": 2}
    section = summarize_load(["a", "b"], load, recs, HOURLY)
    assert section["success_rate"]["value"] == 1.0 and section["success_rate"]["n"] == 4
    first, second = section["levels"]
    assert first["summary"]["success_rate"] == section["success_rate"]
    assert second["results"]["success"] == 3 and second["results"]["failed"] == 1
    assert second["request_errors"] == {"http_5xx": 2}
    assert second["tokens_per_successful_task"] == 60 / 3  # 4 trials of 15 tokens, 3 won
    assert second["summary"]["decision_ms"]["p90"] == 200.0
    assert section["capacity"]["agents_at_slo"] == 1  # 200 ms at 4 agents misses 150 ms


def _journal(plan, drop: tuple[int, str, int] | None = None) -> list[dict]:
    lines: list[dict] = [{"type": "run", "agentic": plan.run_line()}]
    for level, n in zip(plan.load.concurrency, plan.load.trials, strict=True):
        for task in plan.tasks:
            for trial in range(n):
                if (level, task, trial) == drop:
                    continue
                lines.append({"type": "request", "task": task, "trial": trial, "step": 1,
                              "level": level})
                lines.append(_trial(level, task, trial).journal_line())
    return lines


def test_the_validator_wants_every_planned_trial_of_every_level():
    plan = plan_agentic(doc(tasks=2, trials=1, levels=[1, 4]), quick=False)
    result = {"workload": {"id": "w"}, "settings": {"seed": 0, "stream": True,
                                                      "temperature": 0.0}}
    assert check_plan(result, plan, _journal(plan), "r.json") == []
    found = check_plan(result, plan, _journal(plan, drop=(4, "task1", 1)), "r.json")
    assert len(found) == 1 and "trial 1 of task 'task1' at load level 4 has no trial line" \
        in found[0].message
    wrong = _journal(plan)
    wrong[1]["level"] = 16
    found = check_plan(result, plan, wrong, "r.json")
    assert len(found) == 1 and "load level 16" in found[0].message


def test_a_run_with_levels_journals_each_level_resumes_by_level_and_recomputes():
    import json

    from epbench.generator.checks.evidence import first_difference, recompute
    from tests.runner.agentic.test_agentic_executor import (
        FakeClient,
        call_chunks,
        ok,
        reply_chunks,
        run,
        workload,
    )

    class Agent(FakeClient):
        """Answers by the conversation (trials at once interleave their requests): a call to
        a user turn, the reply after the tool's answer."""

        async def chat(self, body, keep_chunks=False, request_id=None):
            self.bodies.append(body)
            if not self.responses:
                raise AssertionError("more requests than the test expects")
            self.responses.pop()
            if body["messages"][-1]["role"] == "tool":
                return ok(reply_chunks("18"))
            return ok(call_chunks('{"city": "Paris"}'))

    def answers(trials: int) -> FakeClient:
        return Agent([None] * 2 * trials)

    doc = workload(trials=1, load={"concurrency": [1, 2], "slo": {"decision_p90_ms": 60000}})
    section, journal = run(doc, answers(3))  # 1 trial at one agent, 2 at two
    trials = [(line["level"], line["trial"]) for line in journal.lines if line["type"] == "trial"]
    assert sorted(trials) == [(1, 0), (2, 0), (2, 1)]
    requests = [line for line in journal.lines if line["type"] == "request"]
    assert {line["level"] for line in requests} == {1, 2}
    assert len({line["request_id"] for line in requests}) == len(requests)
    assert [level["concurrency"] for level in section["levels"]] == [1, 2]
    assert [level["results"]["success"] for level in section["levels"]] == [1, 2]
    assert section["capacity"]["agents_at_slo"] == 2

    lines = json.loads(json.dumps(journal.lines))
    result = {"endpoint": {"pricing": None}, "agentic": section}
    assert first_difference(result, recompute(result, lines)) is None
    levels = [dict(level) for level in section["levels"]]
    levels[1]["tokens_per_successful_task"] = 1.0
    tampered = {**result, "agentic": {**section, "levels": levels}}
    assert first_difference(tampered, recompute(result, lines))[0] == \
        "/agentic/levels/1/tokens_per_successful_task"

    cut = [line for line in journal.lines
           if not (line["type"] == "trial" and (line.get("level"), line["trial"]) == (2, 1))]
    client = answers(1)
    again, journal2 = run(doc, client, resume=cut)
    assert client.responses == []  # only the trial missing at two agents ran again
    assert [(line["level"], line["trial"]) for line in journal2.lines
            if line["type"] == "trial"] == [(2, 1)]
    assert again["levels"][1]["results"] == section["levels"][1]["results"]
