"""Issue 21: an endpoint that bends what the client measures. Each attack runs for real, end
to end through the command line (`epbench run` against tests/hostile/lying_endpoint.py, then
`epbench validate`), and passes only because it is stopped:

- values split across SSE events, which used to move later tokens onto earlier arrivals
  (TTFT 0.19 ms against 1,022 ms sent honestly), are a stream_error and leave the honest
  requests' timing as it was;
- usage the stream cannot carry (1,000,000 output tokens from two text deltas at max_tokens
  32, or a negative count) is usage_implausible, the result is not ranked, and a journal
  forged to call it ok (every figure recomputed to match) is rejected;
- a connection held open after the API's final event ends the request cleanly, on time;
- text before message_start is a stream_error.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from attack import ROOT, epbench
from lying_endpoint import DELAY_S, HOLD_S, TOKENS, lying_endpoint

from epbench.core import evidence
from epbench.core.rankable import rankability
from epbench.core.runspec import RunSpec
from epbench.core.summary import summarize_run
from epbench.runner.client import EndpointClient

pytestmark = pytest.mark.integration
REQUESTS = 8


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    with lying_endpoint() as p:
        yield p


def run_against(project: Path, port: int, case: str, api: str, max_tokens: int) -> Path:
    """`epbench run` of REQUESTS requests at concurrency 2 against one lying case; the run
    folder."""
    (project / "endpoints").mkdir(parents=True)
    (project / "workloads" / "serving").mkdir(parents=True)
    doc = yaml.safe_load((ROOT / "endpoints" / "emulator.yaml").read_text())
    doc.pop("emulator")
    doc.update(id="liar", provider="liar", api=api, division="self-hosted",
               base_url=f"http://127.0.0.1:{port}/{case}/v1")
    (project / "endpoints" / "liar.yaml").write_text(yaml.safe_dump(doc))
    workload = {
        "kind": "serving-workload", "schema_version": 1, "id": "lies", "version": "1.0",
        "description": "a few requests to a lying endpoint", "seed": 3,
        "prompts": {"input_tokens": {"distribution": "fixed", "value": 16},
                    "max_tokens": max_tokens},
        "load": {"pattern": "concurrency", "concurrency": [2],
                 "requests_per_point": REQUESTS, "warmup_requests": 0},
        "timeout_s": 20,
    }
    (project / "workloads" / "serving" / "lies.yaml").write_text(yaml.safe_dump(workload))
    done = epbench("run", "--endpoint", "endpoints/liar.yaml", "--workload",
                   "workloads/serving/lies.yaml", "--out", "runs", "--no-progress", cwd=project)
    assert done.returncode == 0, done.stderr[-2000:]
    (run_dir,) = (project / "runs").iterdir()
    return run_dir


def journal(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]


def requests_of(lines: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    return {line["seq"]: line for line in lines if "request_id" in line}


def validate(project: Path, run_dir: Path) -> tuple[int, str]:
    done = epbench("validate", str(run_dir / "result.json"), "--format", "json", cwd=project)
    return done.returncode, done.stdout + done.stderr


def test_values_split_across_events_are_a_stream_error_and_the_honest_timing_stands(
    tmp_path: Path, port: int
) -> None:
    run_dir = run_against(tmp_path, port, "split-payload", "openai-chat", max_tokens=TOKENS)
    lines = requests_of(journal(run_dir))
    assert len(lines) == REQUESTS
    for seq, line in lines.items():
        if seq % 2:
            assert line["class"] == "stream_error", line
            assert "not one JSON value" in line["error"]
            assert line["t_first_ns"] is None  # no token got an early arrival time
        else:
            assert line["class"] == "ok", line
            assert (line["t_first_ns"] - line["t_send_ns"]) / 1e9 >= DELAY_S
    result = json.loads((run_dir / "result.json").read_text())
    (point,) = result["points"]
    assert point["errors"]["stream_error"] == REQUESTS // 2
    assert point["ttft_ms"]["p50"] >= DELAY_S * 1000  # what was sent honestly
    code, report = validate(tmp_path, run_dir)
    assert code == 0, report
    reasons = {r.code for r in rankability(result)}
    assert "error-rate" in reasons, reasons


def test_usage_no_stream_could_carry_is_usage_implausible_and_never_ranked(
    tmp_path: Path, port: int
) -> None:
    run_dir = run_against(tmp_path, port, "usage-lie", "anthropic-messages", max_tokens=32)
    lines = requests_of(journal(run_dir))
    lied = {seq: line for seq, line in lines.items() if seq % 2}
    assert {line["output_tokens"] for line in lied.values()} == {1_000_000, -5}
    for line in lied.values():
        assert line["class"] == "usage_implausible", line
        assert line["content_bytes"] == len("tok ") * 2 and line["sse_events"] > 0
    for seq, line in lines.items():
        if seq not in lied:
            assert line["class"] == "ok" and line["output_tokens"] == TOKENS, line
            assert line["content_bytes"] == len("tok ") * TOKENS
    result = json.loads((run_dir / "result.json").read_text())
    (point,) = result["points"]
    assert point["errors"]["usage_implausible"] == len(lied)
    assert point["system_tps"] < 1000  # the honest requests' own speed, not 59.8 M tokens/s
    reasons = {r.code for r in rankability(result)}
    assert "usage-implausible" in reasons, reasons
    code, report = validate(tmp_path, run_dir)
    assert code == 0, report

    # The forger's next step: call the lying requests ok and recompute every figure to match.
    records = journal(run_dir)
    for line in records:
        if line.get("class") == "usage_implausible":
            line.update({"class": "ok", "error": None})
    data = b"".join(json.dumps(x, separators=(",", ":")).encode() + b"\n" for x in records)
    (run_dir / "events.jsonl").write_bytes(data)
    spec = RunSpec.from_json(records[0]["spec"])
    summary = summarize_run(spec, records)
    result.update({k: summary[k] for k in ("points", "pareto", "retries", "burst", "resumes")
                   if k in summary and (k in result or summary[k] not in (None, [], {}))})
    result["evidence"] = evidence.describe(data)
    (run_dir / "result.json").write_text(json.dumps(result, indent=2))
    code, report = validate(tmp_path, run_dir)
    assert code == 1, report
    assert "evidence.usage" in report and "1000000 output tokens" in report.replace(",", "")


def answer(port: int, case: str, api: str, timeout_s: float = 10.0) -> tuple[Any, float]:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 32,
            "stream": True}

    async def go() -> Any:
        client = EndpointClient(f"http://127.0.0.1:{port}/{case}/v1", None, None, timeout_s, 1,
                                api=api)
        try:
            return await client.chat(body, request_id="r-00000")
        finally:
            await client.aclose()

    start = time.perf_counter()
    res = asyncio.run(go())
    return res, time.perf_counter() - start


@pytest.mark.parametrize(("case", "api"), [("held-open", "anthropic-messages"),
                                           ("held-open-responses", "openai-responses")])
def test_a_connection_held_open_after_the_final_event_ends_the_request_cleanly(
    port: int, case: str, api: str
) -> None:
    res, seconds = answer(port, case, api)
    assert res.error_class is None, res.error
    assert res.output_tokens == TOKENS and res.done
    assert seconds < HOLD_S / 4  # ended at the final event, not at a timeout


def test_text_before_message_start_is_a_stream_error(port: int) -> None:
    res, _ = answer(port, "text-before-start", "anthropic-messages")
    assert res.error_class == "stream_error"
    assert "before message_start" in (res.error or "")
    assert res.t_first_ns is None
