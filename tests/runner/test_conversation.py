"""Conversation workloads (issue 25, item 2): sessions of turns that each send the whole
history with the answers the endpoint streamed back, think times between turns, figures per
turn and per session; a killed run resumes its half-finished sessions."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from epbench.core import evidence
from epbench.core.conversation_plan import conversation_points
from epbench.core.errors import RunError
from epbench.core.journal_file import Journal
from epbench.core.journal_records import ConversationLine
from epbench.core.schema import check_schema
from epbench.generator.number_format import fmt_number
from epbench.generator.render import render, result_context
from epbench.generator.submit import submit_run
from epbench.generator.validate import validate_paths
from epbench.runner.client import EndpointClient
from epbench.runner.context import RunContext
from epbench.runner.conversation import ConversationRunner
from epbench.runner.plan import build_plan
from epbench.runner.runner import ServingRunner
from epbench.runner.workload import load_serving_workload
from tests.conftest import ROOT
from tests.emulator_fixture import emulator_endpoint, running_emulator

SYSTEM = "You answer in one short paragraph."


def workload_doc(**load: Any) -> dict[str, Any]:
    return {
        "kind": "serving-workload", "schema_version": 1, "id": "convo-test", "version": "1.0",
        "description": "small sessions for tests", "seed": 11,
        "prompts": {"input_tokens": {"distribution": "fixed", "value": 24}, "max_tokens": 12,
                    "ignore_eos": True, "system_prompt": SYSTEM},
        "load": {"pattern": "conversation", "concurrency": [2], "sessions_per_point": 4,
                 "warmup_sessions": 1, "turns": {"distribution": "fixed", "value": 4},
                 "think_time_s": {"distribution": "uniform", "min": 0.05, "max": 0.15},
                 **load},
        "slo": {"ttft_ms": 2000},
        "timeout_s": 60,
    }


def write(path: Path, doc: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def test_a_conversation_plan_draws_sessions_turns_and_think_times_from_the_seed() -> None:
    doc = workload_doc(turns={"distribution": "uniform", "min": 2, "max": 5},
                       think_time_s={"distribution": "fixed", "value": 1.5})
    (point,) = conversation_points(11, doc["load"], doc["prompts"]["input_tokens"], {})
    again = conversation_points(11, doc["load"], doc["prompts"]["input_tokens"], {})[0]
    turns = point.conversation
    assert list(turns.session) == list(again.conversation.session)
    sessions = Counter(turns.session)
    assert sorted(sessions) == [0, 1, 2, 3, 4]  # one warm-up session, then four measured
    assert all(2 <= n <= 5 for n in sessions.values()) and len(set(sessions.values())) > 1
    assert point.warmup == sessions[0] and point.id == "c2" and point.concurrency == 2
    assert [t for s, t in zip(turns.session, turns.turn, strict=True) if s == 1] == \
        list(range(sessions[1]))
    assert {think for t, think in zip(turns.turn, turns.think_s, strict=True) if t == 0} == {0.0}
    assert {think for t, think in zip(turns.turn, turns.think_s, strict=True) if t > 0} == {1.5}
    assert set(point.lengths) == {24}


def test_an_open_loop_conversation_starts_sessions_at_the_rate_and_turns_share_the_start() -> None:
    doc = workload_doc(sessions_per_point=200, warmup_sessions=0)
    del doc["load"]["concurrency"]
    doc["load"]["session_rates_rps"] = [4.0]
    assert check_schema(doc, "serving-workload", "convo.yaml") == []
    (point,) = conversation_points(11, doc["load"], doc["prompts"]["input_tokens"], {})
    assert point.id == "r4" and point.rate == 4.0 and point.offsets is not None
    starts = {s: o for s, o in zip(point.conversation.session, point.offsets, strict=True)}
    assert len(starts) == 200
    assert all(starts[s] < starts[s + 1] for s in range(199))
    mean_gap = starts[199] / 199
    assert 0.2 < mean_gap < 0.3, mean_gap  # 1/4 s


def test_a_session_context_lengthens_only_each_session_s_first_message() -> None:
    doc = workload_doc(session_context_tokens={"distribution": "uniform", "min": 100,
                                               "max": 200})
    assert check_schema(doc, "serving-workload", "convo.yaml") == []
    (point,) = conversation_points(11, doc["load"], doc["prompts"]["input_tokens"], {})
    turns = point.conversation
    firsts = [n for t, n in zip(turns.turn, point.lengths, strict=True) if t == 0]
    assert len(firsts) == 5 and all(124 <= n <= 224 for n in firsts) and len(set(firsts)) > 1
    assert {n for t, n in zip(turns.turn, point.lengths, strict=True) if t > 0} == {24}


def test_a_load_with_both_sessions_at_once_and_a_session_rate_is_refused() -> None:
    doc = workload_doc(session_rates_rps=[1.0])
    assert check_schema(doc, "serving-workload", "convo.yaml")


# --- the runner against a recording handler: exactly what each turn sent ----------------------

def sse(text: str) -> bytes:
    words = [w if i == 0 else " " + w for i, w in enumerate(text.split(" "))]
    chunks = [{"choices": [{"index": 0, "delta": {"content": word}}]} for word in words]
    chunks[-1]["choices"][0]["finish_reason"] = "stop"
    body = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
    return body + b"data: [DONE]\n\n"


def test_each_turn_sends_the_whole_history_with_the_answers_it_streamed_back(
    tmp_path: Path,
) -> None:
    seen: list[list[dict[str, str]]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append(body["messages"])
        if len(seen) == 3:  # one failed turn: its exchange stays out of later histories
            return httpx.Response(500, json={"error": "busy"})
        answer = f"answer {len(seen)} to {body['messages'][-1]['content'][:12]}"
        return httpx.Response(200, headers={"content-type": "text/event-stream"},
                              content=sse(answer))

    doc = workload_doc(concurrency=[1], sessions_per_point=1, warmup_sessions=0,
                       think_time_s={"distribution": "fixed", "value": 0.0})
    workload = load_serving_workload(write(tmp_path / "convo-test.yaml", doc))
    plan = build_plan(workload, "run1", quick=False)

    async def go() -> None:
        client = EndpointClient("http://endpoint.test/v1", None, {}, 10.0, 2,
                                transport=httpx.MockTransport(handler))
        with Journal(tmp_path / "events.jsonl") as journal:
            ctx = RunContext(run_id="run1", run_dir=tmp_path, endpoint={"model": {"name": "m"}},
                             base_url="http://endpoint.test/v1", client=client, journal=journal)
            try:
                await ConversationRunner(ServingRunner(ctx, workload, plan)).run(plan.selected())
            finally:
                await client.aclose()

    asyncio.run(go())
    assert len(seen) == 4
    answers = {r["request_id"]: r["text"] for r in Journal.read(tmp_path / "answers.jsonl")}
    users = [m[-1] for m in seen]
    assert seen[0] == [{"role": "system", "content": SYSTEM}, users[0]]
    assert seen[1] == [seen[0][0], users[0], {"role": "assistant", "content": answers["c1-00000"]},
                       users[1]]
    assert answers["c1-00000"] == f"answer 1 to {users[0]['content'][:12]}"
    assert seen[2] == [*seen[1][:-1], users[1],
                       {"role": "assistant", "content": answers["c1-00001"]}, users[2]]
    assert "c1-00002" not in answers  # the failed turn
    assert seen[3] == [*seen[2][:-1], users[3]]
    lines = [r for r in Journal.read(tmp_path / "events.jsonl") if "turn" in r]
    assert [(r["turn"], r["history_messages"], r["class"]) for r in lines] == [
        (0, 0, "ok"), (1, 2, "ok"), (2, 4, "http_5xx"), (3, 4, "ok")]
    assert lines[3]["history_chars"] == sum(len(m["content"]) for m in seen[3][1:-1])
    typed = ConversationLine.__required_keys__, set(ConversationLine.__annotations__)
    assert all(typed[0] <= set(line) <= typed[1] for line in lines)
    assert {"session", "turn", "history_chars", "answer_chars"} <= typed[0]
    journal_text = (tmp_path / "events.jsonl").read_text()
    assert users[1]["content"] not in journal_text and answers["c1-00000"] not in journal_text


def test_resuming_a_session_whose_stored_answer_is_missing_stops_with_one_line(
    tmp_path: Path,
) -> None:
    doc = workload_doc(concurrency=[1], sessions_per_point=1, warmup_sessions=0)
    workload = load_serving_workload(write(tmp_path / "convo-test.yaml", doc))
    plan = build_plan(workload, "run1", quick=False)
    journaled = [{"request_id": "c1-00000", "point": "c1", "seq": 0, "class": "ok"}]

    async def go() -> None:
        client = EndpointClient("http://endpoint.test/v1", None, {}, 10.0, 1,
                                transport=httpx.MockTransport(lambda r: httpx.Response(500)))
        with Journal(tmp_path / "events.jsonl") as journal:
            ctx = RunContext(run_id="run1", run_dir=tmp_path, endpoint={"model": {"name": "m"}},
                             base_url="http://endpoint.test/v1", client=client, journal=journal,
                             resume_records=journaled)
            try:
                await ConversationRunner(ServingRunner(ctx, workload, plan)).run(plan.selected())
            finally:
                await client.aclose()

    with pytest.raises(RunError, match=r"answers.jsonl: no answer for c1-00000"):
        asyncio.run(go())
    assert not (tmp_path / "events.jsonl").read_bytes()  # nothing was sent


# --- on the emulator: figures, validation, a killed run resumed ------------------------------

def emulator_files(tmp_path: Path, base_url: str, doc: dict[str, Any]) -> tuple[Path, Path]:
    endpoint = {k: v for k, v in emulator_endpoint().items() if k != "emulator"}
    endpoint["base_url"] = base_url
    return (write(tmp_path / "emulator.yaml", endpoint),
            write(tmp_path / "project" / "workloads" / "serving" / "convo-test.yaml", doc))


def command(endpoint: Path, workload: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "epbench.cli", "run", "--endpoint", str(endpoint),
            "--workload", str(workload), "--out", str(out), "--no-progress", *extra]


def env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT))


def request_lines(journal: Path) -> list[dict[str, Any]]:
    return [r for r in Journal.read(journal) if "request_id" in r]


def check_histories(run_dir: Path) -> list[dict[str, Any]]:
    """Every turn's input, as the emulator counted it (one token a character), is the system
    prompt, the session's earlier user messages and stored answers, and the new message."""
    answers = {r["request_id"]: r["text"] for r in Journal.read(run_dir / "answers.jsonl")}
    lines = sorted(request_lines(run_dir / "events.jsonl"), key=lambda r: r["seq"])
    history: dict[int, int] = {}
    for line in lines:
        sent = history.get(line["session"], 0)
        assert line["history_chars"] == sent, line["request_id"]
        assert line["input_tokens"] == len(SYSTEM) + sent + line["message_chars"]
        assert line["answer_chars"] == len(answers[line["request_id"]]) > 0
        history[line["session"]] = sent + line["message_chars"] + line["answer_chars"]
    return lines


@pytest.mark.integration
def test_a_conversation_run_on_the_emulator_grows_its_history_and_reports_figures_per_turn(
    tmp_path: Path,
) -> None:
    with running_emulator({"chars_per_token": 1.0, "ttft_ms": 5, "tpot_ms": 2,
                           "jitter": 0.0}) as emulator:
        endpoint, workload = emulator_files(tmp_path, emulator.base_url, workload_doc())
        done = subprocess.run(command(endpoint, workload, tmp_path / "runs"), env=env(),
                              cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (run_dir,) = [p.parent for p in (tmp_path / "runs").glob("*/result.json")]
    lines = check_histories(run_dir)
    assert len(lines) == 5 * 4 and {r["class"] for r in lines} == {"ok"}
    assert "c2 by turn (ttft p50 ms, input tokens): 1: " in done.stdout, done.stdout
    result = json.loads((run_dir / "result.json").read_text())
    (point,) = result["points"]
    block = point["conversation"]
    assert [t["turn"] for t in block["turns"]] == [0, 1, 2, 3]
    assert [t["requests"] for t in block["turns"]] == [4, 4, 4, 4]  # measured sessions only
    inputs = [t["input_tokens"]["p50"] for t in block["turns"]]
    assert inputs == sorted(inputs) and inputs[0] < inputs[3]
    assert block["turns"][0]["history_chars"]["p50"] == 0
    sessions = block["sessions"]
    assert (sessions["count"], sessions["completed"], sessions["resumed"]) == (4, 4, 0)
    assert sessions["turns_completed"]["p50"] == 4
    # three think times of 50 to 150 ms each, plus four answers
    assert sessions["duration_s"]["p50"] > 0.15
    ratio = block["later_turns"]["ttft_ms"]["p50"] / block["turns"][0]["ttft_ms"]["p50"]
    assert block["ttft_p50_later_over_first"] == pytest.approx(ratio, rel=1e-5)
    assert point["input_calibration"]["samples"] == 4  # first turns only
    # the run page shows a row per turn and the sessions' figures
    row = {"run_id": result["run_id"], "disclosure_score": 1.0, "rankable": False,
           "result_path": "results/x.json"}
    page = render("result.html.j2", **result_context(result, row, root="../../"))
    for turn in block["turns"]:
        assert (f"<tr><td>{turn['turn'] + 1}</td><td>4</td><td>4</td>"
                f"<td>{fmt_number(turn['ttft_ms']['p50'])}</td>"
                f"<td>{fmt_number(turn['ttft_ms']['p90'])}</td>"
                f"<td>{fmt_number(turn['input_tokens']['p50'])}</td>") in page
    assert "Sessions: 4 (4 with every turn completed); turns completed per session p50 4;" \
        in page
    path, report = submit_run(run_dir, "tester", None, "independent",
                              tmp_path / "project" / "results")
    assert not [f for f in report.findings if f.severity.startswith("reject")], \
        report.render("text")

    # a journal whose history does not add up is refused by the rebuilt plan's check
    journal = path.with_name(path.stem + evidence.SUFFIX)
    raw = gzip.decompress(journal.read_bytes()).splitlines()
    at = next(i for i, line in enumerate(raw) if b'"turn":2' in line and b'"warmup":false' in line)
    line = json.loads(raw[at])
    line["history_chars"] -= 7
    raw[at] = json.dumps(line, separators=(",", ":")).encode()
    data = b"\n".join(raw) + b"\n"
    evidence.pack(data, journal)
    doc = json.loads(path.read_text())
    doc["evidence"] = evidence.describe(data)
    path.write_text(json.dumps(doc, indent=2))
    found = [f for f in validate_paths([path]).findings if f.check == "workload.plan"]
    assert len(found) == 1 and "sent a history of 4 messages" in found[0].message, found


@pytest.mark.integration
def test_a_killed_conversation_run_resumes_its_half_finished_sessions(tmp_path: Path) -> None:
    doc = workload_doc(sessions_per_point=6,
                       think_time_s={"distribution": "fixed", "value": 0.3})
    with running_emulator({"chars_per_token": 1.0, "ttft_ms": 5, "tpot_ms": 2,
                           "jitter": 0.0}) as emulator:
        endpoint, workload = emulator_files(tmp_path, emulator.base_url, doc)
        out = tmp_path / "runs"
        process = subprocess.Popen(command(endpoint, workload, out), env=env(), cwd=ROOT,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 120
            half = False
            while time.monotonic() < deadline and not half:
                journals = list(out.glob("*/events.jsonl"))
                if journals:
                    lines = [r for r in request_lines(journals[0]) if not r["warmup"]]
                    turns = Counter(r["session"] for r in lines)
                    half = len(lines) >= 4 and any(0 < n < 4 for n in turns.values())
                time.sleep(0.02)
            os.kill(process.pid, signal.SIGKILL)
        finally:
            process.wait(timeout=60)
        assert half, "no session was half-finished in two minutes"
        (run_dir,) = [p.parent for p in out.glob("*/events.jsonl")]
        assert not (run_dir / "result.json").exists()
        resumed = subprocess.run(command(endpoint, workload, out, "--resume", str(run_dir)),
                                 env=env(), cwd=ROOT, capture_output=True, text=True,
                                 timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    lines = check_histories(run_dir)  # resumed turns carry the history they would have had
    assert Counter(r["request_id"] for r in lines).most_common(1)[0][1] == 1
    assert len(lines) == 7 * 4
    result = json.loads((run_dir / "result.json").read_text())
    sessions = result["points"][0]["conversation"]["sessions"]
    assert sessions["count"] == 6 and sessions["completed"] == 6
    assert sessions["resumed"] >= 1
    assert sessions["duration_s"]["n"] == 6 - sessions["resumed"]
    assert len(result["resumes"]) == 1
    _, report = submit_run(run_dir, "tester", None, "independent",
                              tmp_path / "project" / "results")
    assert not [f for f in report.findings if f.severity.startswith("reject")], \
        report.render("text")


@pytest.mark.integration
def test_sessions_arriving_at_a_rate_start_on_schedule_and_each_turn_waits_its_think_time(
    tmp_path: Path,
) -> None:
    doc = workload_doc(sessions_per_point=5, warmup_sessions=0,
                       turns={"distribution": "fixed", "value": 3})
    del doc["load"]["concurrency"]
    doc["load"]["session_rates_rps"] = [5.0]
    with running_emulator({"chars_per_token": 1.0, "ttft_ms": 5, "tpot_ms": 2,
                           "jitter": 0.0}) as emulator:
        endpoint, workload = emulator_files(tmp_path, emulator.base_url, doc)
        done = subprocess.run(command(endpoint, workload, tmp_path / "runs"), env=env(),
                              cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (run_dir,) = [p.parent for p in (tmp_path / "runs").glob("*/result.json")]
    lines = check_histories(run_dir)
    plan = json.loads((run_dir / "plan.json").read_text())
    planned = {r["request_id"]: r for p in plan["points"] for r in p["requests"]}
    firsts = sorted((r for r in lines if r["turn"] == 0), key=lambda r: r["session"])
    start0, offset0 = firsts[0]["t_scheduled_ns"], planned[firsts[0]["request_id"]]["offset_s"]
    for line in firsts:  # sessions start at their planned offsets
        offset = planned[line["request_id"]]["offset_s"] - offset0
        assert line["t_scheduled_ns"] - start0 == pytest.approx(offset * 1e9, abs=1e3)
    by_id = {(r["session"], r["turn"]): r for r in lines}
    for line in lines:
        assert line["t_send_ns"] >= line["t_scheduled_ns"]
        if line["turn"] > 0:  # scheduled at the previous answer's end plus the think time
            think = planned[line["request_id"]]["think_s"]
            previous = by_id[(line["session"], line["turn"] - 1)]
            assert 0.05 <= think <= 0.15
            assert line["t_scheduled_ns"] - previous["t_done_ns"] == round(think * 1e9)
    result = json.loads((run_dir / "result.json").read_text())
    (point,) = result["points"]
    assert point["rate"] == 5.0 and point["schedule_delay_ms"]["n"] == 15
    assert point["schedule_delay_ms"]["p50"] >= 0
    assert point["conversation"]["sessions"]["count"] == 5
    _, report = submit_run(run_dir, "tester", None, "independent",
                           tmp_path / "project" / "results")
    assert not [f for f in report.findings if f.severity.startswith("reject")], \
        report.render("text")
