"""`epbench run` against the real emulator on loopback: sweeps, Poisson, burst, valid results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from epbench.core.documents import load_document
from epbench.core.journal_file import Journal
from epbench.core.schema import check_schema
from epbench.runner.entry import run_command
from tests.conftest import ROOT

pytestmark = pytest.mark.integration


def fast_emulator(tmp_path: Path, **overrides: Any) -> Path:
    """The shipped emulator endpoint, made fast: 2 ms per token, 32 slots."""
    doc = load_document(ROOT / "endpoints" / "emulator.yaml")
    doc["emulator"].update(
        slots=32, ttft_ms=5, prefill_ms_per_1k_tokens=1, tpot_ms=2, tpot_growth=0.1, jitter=0.02
    )
    doc["emulator"].update(overrides)
    path = tmp_path / "emulator.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def shared_endpoint(tmp_path_factory):
    """One fast emulator for the module, and an endpoint file pointing at it (no emulator block)."""
    from epbench.runner.emulator.process import start_emulator

    folder = tmp_path_factory.mktemp("endpoint")
    doc = load_document(fast_emulator(folder, tpot_ms=0.5, tpot_growth=0.05))
    with start_emulator(doc) as emu:
        plain = {k: v for k, v in doc.items() if k != "emulator"}
        plain["base_url"] = emu.base_url
        path = folder / "plain.yaml"
        path.write_text(yaml.safe_dump(plain), encoding="utf-8")
        yield path


def workload(tmp_path: Path, load: dict[str, Any], max_tokens: int = 16, **extra: Any) -> Path:
    doc = {
        "kind": "serving-workload",
        "schema_version": 1,
        "id": "test-sweep",
        "version": "1.0",
        "description": "a small test workload",
        "seed": 11,
        "prompts": {
            "input_tokens": {
                "distribution": "normal",
                "mean": 64,
                "stddev": 8,
                "min": 32,
                "max": 96,
            },
            "max_tokens": max_tokens,
            "ignore_eos": True,
        },
        "load": load,
        "slo": {"ttft_ms": 1000, "tpot_ms": 100},
        "timeout_s": 30,
        **extra,
    }
    path = tmp_path / "workload.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def run(tmp_path: Path, endpoint: Path, wl: Path, **kwargs: Any) -> dict[str, Any]:
    paths = run_command(
        endpoint=endpoint,
        workload=wl,
        out=tmp_path / "runs",
        resume=None,
        quick=kwargs.get("quick", False),
        client_region="test-region",
        shard=kwargs.get("shard"),
        progress=False,
    )
    assert len(paths) == 1
    result = json.loads(paths[0].read_text())
    assert check_schema(result, "result", str(paths[0])) == []
    return result


def test_a_concurrency_sweep_shows_the_throughput_interactivity_trade_off(tmp_path):
    load = {
        "pattern": "concurrency",
        "concurrency": [2, 4, 8, 16, 32],
        "requests_per_point": 32,
        "warmup_requests": 1,
    }
    endpoint = fast_emulator(tmp_path, tpot_ms=3, tpot_growth=0.1)
    result = run(tmp_path, endpoint, workload(tmp_path, load, max_tokens=48))
    points = result["points"]
    assert [p["concurrency"] for p in points] == [2, 4, 8, 16, 32]
    system = [p["system_tps"] for p in points]
    per_user = [p["tps_per_user"] for p in points]
    assert system == sorted(system) and len(set(system)) == 5, system
    assert per_user == sorted(per_user, reverse=True), per_user
    for p in points:
        assert p["requests"] == {"issued": 32, "completed": 32, "failed": 0, "warmup": 1}
        assert p["tokens"]["output"] == 32 * 48 and p["tokens"]["source"] == "usage"
        assert p["ttft_ms"]["n"] == 32 and p["ttft_ms"]["p50"] > 0
    assert result["pareto"] and result["client"]["region"] == "test-region"
    assert result["client"]["rtt_ms"] is not None
    assert result["workload"]["pattern"] == "concurrency"
    assert result["endpoint"]["base_url"] == "http://127.0.0.1:0/v1"  # as configured
    run_dir = next((tmp_path / "runs").iterdir())
    assert len(run_dir.name) == 16 and result["run_id"] == run_dir.name
    records = [r for r in Journal.read(run_dir / "events.jsonl") if "request_id" in r]
    assert len(records) == 5 * 33 and len({r["request_id"] for r in records}) == 165


def test_poisson_points_report_schedule_delay_and_latency_from_the_schedule(
    tmp_path, shared_endpoint
):
    load = {
        "pattern": "poisson",
        "rates_rps": [20, 40],
        "requests_per_point": 30,
        "warmup_requests": 2,
    }
    result = run(tmp_path, shared_endpoint, workload(tmp_path, load))
    for point in result["points"]:
        assert "concurrency" not in point and point["rate"] in (20, 40)
        delay = point["schedule_delay_ms"]
        assert delay["n"] == 30 and 0 <= delay["p50"] < 20
        # latency from the scheduled time is never shorter than from the send time
        assert point["ttft_from_scheduled_ms"]["p50"] >= point["ttft_ms"]["p50"]
    records = Journal.read(next((tmp_path / "runs").iterdir()) / "events.jsonl")
    assert all(r["t_scheduled_ns"] is not None for r in records if "request_id" in r)


def test_a_quick_burst_reports_phases_and_recovery(tmp_path, shared_endpoint):
    load = {
        "pattern": "burst",
        "base_rate_rps": 10,
        "spike_factor": 4,
        "base_s": 2,
        "spike_s": 1,
        "recovery_s": 2,
        "recovery_window_s": 1,
    }
    result = run(
        tmp_path,
        shared_endpoint,
        workload(tmp_path, load, quick={"time_scale": 0.5}),
        quick=True,
    )
    assert [p["phase"] for p in result["points"]] == ["base", "spike", "recovery"]
    phases = result["burst"]["phases"]
    assert [(ph["start_s"], ph["end_s"]) for ph in phases] == [(0.0, 1.0), (1.0, 1.5), (1.5, 2.5)]
    assert [ph["rate_rps"] for ph in phases] == [10, 40, 10]
    assert all(ph["requests"] > 0 and ph["ttft_p99_ms"] is not None for ph in phases)
    recovery = result["burst"]["recovery_s"]
    assert recovery is None or 0 <= recovery <= 0.5


@pytest.mark.slow
def test_the_shipped_chat_short_workload_quick_gives_a_valid_result(tmp_path, shared_endpoint):
    wl = ROOT / "workloads" / "serving" / "chat-short.yaml"
    result = run(tmp_path, shared_endpoint, wl, quick=True)
    assert len(result["points"]) == 7 and result["settings"]["quick"] is True
    assert [p["requests"]["issued"] for p in result["points"]] == [32] * 6 + [64]


def test_a_shard_runs_only_its_points(tmp_path, shared_endpoint):
    load = {"pattern": "concurrency", "concurrency": [1, 2, 4], "requests_per_point": 4}
    result = run(tmp_path, shared_endpoint, workload(tmp_path, load), shard="2/2")
    assert [p["id"] for p in result["points"]] == ["c2"]


# --- runner pieces without a server ---------------------------------------------------------


def mock_context(tmp_path, handler, workload_path):
    import httpx

    from epbench.core.journal_file import Journal as J
    from epbench.runner.client import EndpointClient
    from epbench.runner.context import RunContext

    client = EndpointClient(
        "http://mock.test/v1", None, None, 5.0, 4, transport=httpx.MockTransport(handler)
    )
    journal = J(tmp_path / "events.jsonl")
    endpoint = load_document(ROOT / "endpoints" / "emulator.yaml")
    return RunContext(
        run_id="0" * 16,
        run_dir=tmp_path,
        endpoint=endpoint,
        base_url="http://mock.test/v1",
        client=client,
        journal=journal,
    )


def test_opt_in_retries_honour_retry_after_and_are_reported_apart(tmp_path):
    import asyncio

    import httpx

    from epbench.core.summary import summarize_run
    from epbench.runner.plan import build_plan
    from epbench.runner.runner import ServingRunner
    from epbench.runner.workload import load_serving_workload

    attempts: dict[str, int] = {}

    def handler(request: httpx.Request) -> httpx.Response:
        rid = request.headers["x-epbench-request-id"]
        attempts[rid] = attempts.get(rid, 0) + 1
        if attempts[rid] == 1:
            return httpx.Response(429, headers={"retry-after": "0.05"}, content=b"{}")
        body = (
            b'data: {"choices":[{"delta":{"content":"a"}}]}\n\n'
            b'data: {"choices":[{"delta":{"content":"b"},"finish_reason":"stop"}]}\n\n'
            b"data: [DONE]\n\n"
        )
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    load = {"pattern": "concurrency", "concurrency": [2], "requests_per_point": 4}
    retry = {"enabled": True, "max_retries": 2, "backoff_s": 5.0, "honour_retry_after": True}
    wl = load_serving_workload(workload(tmp_path, load, retry=retry))
    plan = build_plan(wl, "0" * 16, quick=False)
    ctx = mock_context(tmp_path, handler, wl.path)

    async def go():
        try:
            return await ServingRunner(ctx, wl, plan).run()
        finally:
            await ctx.client.aclose()

    assert asyncio.run(go()) == 4
    records = Journal.read(tmp_path / "events.jsonl")
    assert all(r["class"] == "ok" and r["attempts"] == 2 for r in records)
    assert all(0.04 < r["retry_s"] < 1.0 for r in records)  # Retry-After, not the 5 s backoff
    summary = summarize_run(plan.spec(), records)
    assert summary["retries"]["requests"] == 4
    assert summary["points"][0]["requests"]["issued"] == 4


def test_retries_are_off_unless_the_workload_enables_them(tmp_path):
    import asyncio

    import httpx

    from epbench.runner.plan import build_plan
    from epbench.runner.runner import ServingRunner
    from epbench.runner.workload import load_serving_workload

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, content=b"busy")

    load = {"pattern": "concurrency", "concurrency": [1], "requests_per_point": 3}
    wl = load_serving_workload(workload(tmp_path, load))
    ctx = mock_context(tmp_path, handler, wl.path)

    async def go():
        try:
            return await ServingRunner(ctx, wl, build_plan(wl, "0" * 16, quick=False)).run()
        finally:
            await ctx.client.aclose()

    asyncio.run(go())
    records = Journal.read(tmp_path / "events.jsonl")
    assert [(r["class"], r["attempts"]) for r in records] == [("http_5xx", 1)] * 3


def test_an_api_key_comes_from_the_named_variable_and_never_shows(tmp_path):
    from epbench.core.errors import RunError
    from epbench.runner.endpoint import load_endpoint

    doc = load_document(ROOT / "endpoints" / "emulator.yaml")
    doc.pop("emulator")
    doc["api_key_env"] = "EPBENCH_TEST_KEY"
    path = tmp_path / "keyed.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(RunError, match="EPBENCH_TEST_KEY"):
        load_endpoint(path, environ={})
    endpoint = load_endpoint(path, environ={"EPBENCH_TEST_KEY": "sk-very-secret"})
    assert endpoint.api_key == "sk-very-secret"
    assert "sk-very-secret" not in repr(endpoint) and "sk-very-secret" not in json.dumps(
        endpoint.doc
    )


def test_an_agentic_workload_is_dispatched_and_its_result_is_written_around_the_section(
    tmp_path, shared_endpoint
):
    wl = ROOT / "workloads" / "agentic" / "weather-single-call.yaml"
    result = run(tmp_path, shared_endpoint, wl, quick=True)
    assert result["points"] == [] and result["pareto"] == []
    assert result["workload"]["kind"] == "agentic" and result["workload"]["pattern"] == "agentic"
    assert result["agentic"]["trials"] >= 1
