"""A trace workload's plan (epbench.core.trace_plan, epbench.runner.plan), its prompts
(epbench.runner.trace_prompts) and the validator's rebuild of it
(epbench.generator.checks.workload.plan): windows, scaling and caps by hand, hash-id blocks
that share exactly what the trace shares, and a journal that strays from the trace refused."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from epbench.core.documents import load_document
from epbench.core.errors import InputError
from epbench.core.summary import CALIBRATION_TOLERANCE
from epbench.core.trace_file import parse_trace
from epbench.core.trace_plan import trace_point
from epbench.core.workload_plan import run_spec
from epbench.generator.checks.workload.plan import _rebuild, check_plan
from epbench.runner.calibrate import calibrate
from epbench.runner.client import EndpointClient
from epbench.runner.plan import build_plan
from epbench.runner.trace_prompts import block_ends, trace_prompt
from epbench.runner.workload import load_serving_workload
from tests.conftest import ROOT
from tests.emulator_fixture import running_emulator

AZURE = ROOT / "workloads" / "serving" / "trace-azure-code.yaml"
MOONCAKE = ROOT / "workloads" / "serving" / "trace-mooncake-chat.yaml"
ROWS = (b'{"timestamp": 0, "input_length": 1200, "output_length": 50, "hash_ids": [0, 1, 2]}\n'
        b'{"timestamp": 1000, "input_length": 700, "output_length": 900, "hash_ids": [0, 3]}\n'
        b'{"timestamp": 4000, "input_length": 100, "output_length": 0, "hash_ids": [4]}\n'
        b'{"timestamp": 9000, "input_length": 100, "output_length": 3, "hash_ids": [5]}\n')
TRACE = parse_trace(ROWS, "mooncake-jsonl", "t.jsonl")


def point(load: dict[str, Any], max_tokens: int = 512, quick: dict[str, Any] | None = None):
    return trace_point({"pattern": "trace", **load}, TRACE, max_tokens, quick or {},
                       quick is not None, "w.yaml")


def test_a_window_scaled_and_capped_by_hand():
    p = point({"time_scale": 0.5, "window": {"start_s": 1, "duration_s": 8},
               "max_input_tokens": 600})
    assert p.id == "trace" and p.count == 2 and p.warmup == 0
    assert list(p.offsets) == [0.0, 1.5]  # (4 s - 1 s) x 0.5
    assert list(p.lengths) == [600, 100] and list(p.outputs) == [512, 1]  # output 0 asks for 1
    assert p.hash_ids == [(0, 3)[:2], (4,)] and p.rate == pytest.approx(1 / 1.5, abs=1e-6)
    capped = point({"window": {"count": 1}, "max_input_tokens": 1000})
    assert capped.hash_ids == [(0, 1)]  # 1,000 tokens cover two 512-token blocks, not three


def test_a_count_window_and_quick_keep_the_first_requests():
    assert point({"window": {"start_s": 0.5, "count": 2}}).lengths.tolist() == [700, 100]
    assert point({"window": {"count": 4}}, quick={"requests_per_point": 3}).count == 3
    with pytest.raises(InputError, match=r"w.yaml:/load/window: no request of t.jsonl"):
        point({"window": {"start_s": 60, "duration_s": 5}})


def test_the_shipped_trace_workloads_plan_their_window_with_the_trace_lengths():
    azure = build_plan(load_serving_workload(AZURE), "r", quick=False).points[0]
    assert len(azure.requests) == 1482 and azure.requests[0].offset_s == 0.0
    assert (azure.requests[0].input_tokens, azure.requests[0].max_tokens) == (4096, 10)
    assert all(r.hash_ids is None for r in azure.requests)
    mooncake = build_plan(load_serving_workload(MOONCAKE), "r", quick=True).points[0]
    assert len(mooncake.requests) == 40 and mooncake.requests[1].hash_ids[0] == 0


def test_a_trace_file_with_other_bytes_stops_the_plan_naming_the_pointer(tmp_path):
    workload = _project(tmp_path, AZURE)
    trace = tmp_path / "workloads" / "traces" / "azure-llm-2023-code-first1500.csv"
    trace.write_bytes(trace.read_bytes() + b"2023-11-16 19:00:00.0,5,5\r\n")
    with pytest.raises(InputError, match=r"trace-azure-code.yaml:/load/trace/sha256: "
                                         r"workloads/traces/azure-llm-2023-code-first1500.csv "
                                         r"has sha256 [0-9a-f]{64}, the workload names 9d44f59f"):
        build_plan(load_serving_workload(workload), "r", quick=False)


def test_equal_hash_ids_give_identical_blocks_and_different_ids_different_ones():
    assert block_ends(3, 1.25, 10) == [402, 811, 1221]  # round((512 k - 10) / 1.25)
    words = 1221
    one = trace_prompt(7, "a", (0, 1, 2), words, 1.25, 10).split()
    two = trace_prompt(7, "b", (0, 1, 9), words, 1.25, 10).split()
    three = trace_prompt(7, "c", (5, 1, 2), words, 1.25, 10).split()
    assert len(one) == len(two) == words
    assert one[:811] == two[:811] and one[811:] != two[811:]
    assert one[:20] != three[:20]
    shorter = trace_prompt(7, "d", (0, 1), 500, 1.25, 10).split()
    assert shorter == one[:500]  # a shorter request's last block is the same block, cut
    longer = trace_prompt(7, "e", (0,), 450, 1.25, 10).split()
    assert longer[:402] == one[:402] and longer[402] == "e"  # past its blocks: its own words


@pytest.mark.integration
def test_blocks_end_at_multiples_of_512_tokens_as_the_emulator_counts_them():
    with running_emulator() as emu:
        async def measure() -> list[int]:
            client = EndpointClient(emu.base_url, None, {}, 30.0, 4)
            try:
                fit = await calibrate(client, "emulated-8b", 3, None)
                ends = block_ends(3, fit.tokens_per_word, fit.overhead_tokens)
                counts = []
                for end in ends:
                    text = trace_prompt(3, "x", (10, 11, 12), end, fit.tokens_per_word,
                                        fit.overhead_tokens)
                    body = {"model": "emulated-8b", "max_tokens": 1, "stream": False,
                            "messages": [{"role": "user", "content": text}]}
                    counts.append((await client.chat(body)).input_tokens)
                return counts
            finally:
                await client.aclose()

        counts = asyncio.run(measure())
    print("prompt tokens at the block ends:", counts)
    # within the calibration's own tolerance (epbench.core.summary.CALIBRATION_TOLERANCE): a
    # block is 400-odd seeded words, whose length in tokens varies a few percent by the draw
    for k, count in enumerate(counts, start=1):
        assert abs(count - 512 * k) <= CALIBRATION_TOLERANCE * 512 * k, counts


# --- the validator's rebuild -------------------------------------------------------------------

def _project(tmp_path: Path, workload: Path) -> Path:
    """A copy of the repository's trace workload and its trace, in a project of its own."""
    doc = load_document(workload)
    (tmp_path / "workloads" / "serving").mkdir(parents=True)
    (tmp_path / "workloads" / "traces").mkdir()
    rel = doc["load"]["trace"]["path"]
    shutil.copy(ROOT / rel, tmp_path / rel)
    return Path(shutil.copy(workload, tmp_path / "workloads" / "serving" / workload.name))


def _journal(expected) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    doc = expected.workload
    [p] = expected.points
    spec = run_spec("trace", doc["seed"], expected.points, doc["slo"], None).to_json()
    records: list[dict[str, Any]] = [{"type": "run", "spec": spec}, {"type": "session"}]
    for seq in range(p.count):
        records.append({"request_id": p.request_id(seq), "point": "trace", "seq": seq,
                        "warmup": False, "input_requested": p.lengths[seq],
                        "output_requested": p.outputs[seq],
                        "t_scheduled_ns": 5_000_000_000 + round(p.offsets[seq] * 1e9)})
    result = {"workload": {"id": doc["id"]},
              "settings": {"seed": doc["seed"], "max_tokens": doc["prompts"]["max_tokens"],
                           "ignore_eos": True, "temperature": 0.0}}
    return result, records


def test_the_validator_rebuilds_a_trace_plan_and_refuses_a_journal_that_strays_from_it():
    expected = _rebuild(AZURE.read_bytes(), "trace-azure-code", True, ROOT)
    result, records = _journal(expected)
    assert check_plan(result, expected, records, "r.json") == []
    resumed = [*records[:20], {"type": "session"},
               *({**r, "t_scheduled_ns": r["t_scheduled_ns"] + 9_000_000_000}
                 for r in records[20:])]
    assert check_plan(result, expected, resumed, "r.json") == []  # a resume shifts, keeps spacing

    late = [dict(r) for r in records]
    late[30]["t_scheduled_ns"] += 3_000_000
    [finding] = check_plan(result, expected, late, "r.json")
    assert "'trace-00028' was scheduled 3.000 ms off the trace's spacing" in finding.message
    shorter = [dict(r) for r in records]
    shorter[12]["output_requested"] = 1
    [finding] = check_plan(result, expected, shorter, "r.json")
    want = expected.points[0].outputs[10]
    assert f"request 'trace-00010' asked for 1 output tokens, the plan {want}" in finding.message


def test_the_validator_refuses_a_trace_plan_when_the_trace_file_changed(tmp_path):
    workload = _project(tmp_path, MOONCAKE)
    trace = tmp_path / "workloads" / "traces" / "mooncake-conversation-first500.jsonl"
    trace.write_bytes(trace.read_bytes().replace(b'"timestamp": 0,', b'"timestamp": 1,', 1))
    pointer, message, _fix = _rebuild(workload.read_bytes(), "trace-mooncake-chat", False,
                                      tmp_path)
    assert pointer == "/workload/sha256"
    assert message.startswith("the workload's trace cannot be replayed: workload "
                              "trace-mooncake-chat:/load/trace/sha256: workloads/traces/"
                              "mooncake-conversation-first500.jsonl has sha256")
    assert yaml.safe_load(workload.read_text())["load"]["trace"]["sha256"] in message


# --- `epbench validate` on the workloads folder ---------------------------------------------

def test_validate_accepts_traces_beside_their_workloads_and_rejects_a_wrong_sha_or_stray_file(
        tmp_path):
    from epbench.generator.validate import validate_paths

    workload = _project(tmp_path, AZURE)
    shutil.copy(ROOT / "workloads" / "traces" / "README.md", tmp_path / "workloads" / "traces")
    shutil.copy(ROOT / "workloads" / "traces" / "LICENSE-Apache-2.0.txt",
                tmp_path / "workloads" / "traces")
    report = validate_paths([tmp_path / "workloads"])
    assert report.findings == [] and len(report.files) == 1  # traces are data, not documents

    (tmp_path / "workloads" / "traces" / "notes.txt").write_text("x", encoding="utf-8")
    (tmp_path / "workloads" / "serving" / "rows.csv").write_text("x", encoding="utf-8")
    doc = load_document(workload)
    doc["load"]["trace"]["sha256"] = "0" * 64
    workload.write_text(yaml.safe_dump(doc), encoding="utf-8")
    found = {(f.check, Path(f.file).name, f.pointer) for f in
             validate_paths([tmp_path / "workloads"]).findings}
    assert found == {("file.unknown", "notes.txt", ""), ("file.unknown", "rows.csv", ""),
                     ("workload.trace", "trace-azure-code.yaml", "/load/trace/sha256")}


def test_a_trace_plan_survives_plan_json_so_resume_sends_the_same_requests():
    import json as json_module

    from epbench.runner.plan import Plan

    plan = build_plan(load_serving_workload(MOONCAKE), "r", quick=True)
    again = Plan.from_json(json_module.loads(json_module.dumps(plan.to_json())))
    assert again.points[0].requests == plan.points[0].requests
    assert again.spec().points == plan.spec().points and again.pattern == "trace"


def test_an_open_loop_send_never_wakes_before_its_instant():
    import time

    from epbench.runner.loop import run_async
    from epbench.runner.runner import _sleep_until

    async def wake_ups() -> list[int]:
        early = []
        for k in range(40):
            target = time.perf_counter_ns() + 2_000_000 + 97_000 * k
            await _sleep_until(target)
            early.append(time.perf_counter_ns() - target)
        return early

    lags = run_async(wake_ups())
    assert min(lags) >= 0, lags  # uvloop's millisecond timers alone woke up to 1 ms early
