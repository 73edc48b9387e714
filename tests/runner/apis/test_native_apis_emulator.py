"""The two native APIs end to end on the real emulator: serving sweeps, the agentic suite,
reasoning and cache figures, the overloaded class, and each API's own error shape."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from epbench.core.schema import check_schema
from epbench.runner.entry import run_command
from tests.conftest import ROOT
from tests.emulator_fixture import emulator_endpoint, running_emulator

SUITE = ROOT / "workloads" / "agentic"
FAST = {"ttft_ms": 2, "tpot_ms": 0.5, "prefill_ms_per_1k_tokens": 2, "jitter": 0,
        "reasoning_tokens": 4, "prompt_cache": True,
        "agentic": {"split_arguments": True, "interleave_parallel": True}}
NATIVE = ("anthropic-messages", "openai-responses")

pytestmark = [pytest.mark.integration]


@pytest.fixture(scope="module")
def emu():
    with running_emulator(FAST) as emulator:
        yield emulator


def endpoint_file(folder: Path, base_url: str, api: str) -> Path:
    doc = emulator_endpoint(FAST)
    doc.pop("emulator")
    doc.update(base_url=base_url, api=api, id=f"emulator-{api}")
    path = folder / f"{api}.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def serving_workload(folder: Path) -> Path:
    doc = {
        "kind": "serving-workload", "schema_version": 1, "id": "native-sweep", "version": "1.0",
        "description": "a small sweep with a shared system prompt", "seed": 5,
        "prompts": {"input_tokens": {"distribution": "fixed", "value": 64}, "max_tokens": 12,
                    "ignore_eos": True, "system_prompt": "You are a terse assistant. " * 8},
        "load": {"pattern": "concurrency", "concurrency": [1, 4], "requests_per_point": 8,
                 "warmup_requests": 1},
        "timeout_s": 30,
    }
    path = folder / "sweep.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def run(folder: Path, endpoint: Path, workload: Path) -> list[dict[str, Any]]:
    paths = run_command(endpoint=endpoint, workload=workload, out=folder / "runs", resume=None,
                        quick=True, client_region=None, shard=None, progress=False)
    docs = [json.loads(Path(p).read_text("utf-8")) for p in paths]
    for doc, p in zip(docs, paths, strict=True):
        assert check_schema(doc, "result", str(p)) == []
    return docs


@pytest.mark.parametrize("api", NATIVE)
def test_a_serving_sweep_on_a_native_api_records_answer_time_reasoning_and_cache(
    tmp_path: Path, emu: Any, api: str
) -> None:
    endpoint = endpoint_file(tmp_path, emu.base_url, api)
    (result,) = run(tmp_path, endpoint, serving_workload(tmp_path))
    assert result["endpoint"]["api"] == api
    for point in result["points"]:
        assert point["requests"]["failed"] == 0
        completed = point["requests"]["completed"]
        # 4 reasoning words stream first, then answer tokens up to max_tokens 12 (reasoning
        # is part of the output the limit caps, as on the real APIs): both clocks, apart
        assert point["ttfa_ms"]["p50"] > point["ttft_ms"]["p50"]
        assert point["tokens"]["reasoning"] == 4 * completed
        assert point["tokens"]["output"] == 12 * completed
        # the system prompt is shared: after the first request it is read from the cache
        assert point["tokens"]["cached_input"] > 0
        assert point["tokens"]["source"] == "usage"


@pytest.mark.parametrize("api", NATIVE)
def test_the_agentic_suite_passes_on_a_native_api_with_every_call_valid(
    tmp_path: Path, api: str
) -> None:
    with running_emulator(FAST) as emulator:  # its own: a fresh prompt cache
        docs = run(tmp_path, endpoint_file(tmp_path, emulator.base_url, api), SUITE)
    assert len(docs) == len(list(SUITE.glob("*.yaml")))
    calls: Counter[str] = Counter()
    for doc in docs:
        a = doc["agentic"]
        assert a["success_rate"]["value"] == 1.0, (api, doc["workload"]["id"], a["tasks"])
        assert a["retry_cost"]["repair"]["requests"] == 0
        assert a["harness_faults"] == []
        calls.update({k: v for k, v in a["calls"].items() if isinstance(v, int)})
    assert calls["ok"] > 30 and sum(v for k, v in calls.items() if k != "ok") == 0
    # the shared system prompts come back from the prompt cache, and the cache figures reach
    # the result (Anthropic also reports the writes)
    assert sum(doc["agentic"]["tokens"].get("cached_input", 0) for doc in docs) > 0
    writes = sum(doc["agentic"]["tokens"].get("cache_write", 0) for doc in docs)
    assert (writes > 0) == (api == "anthropic-messages")


@pytest.mark.parametrize("api", NATIVE)
def test_overloaded_faults_mid_stream_are_the_overloaded_class_and_match_the_emulator(
    tmp_path: Path, api: str
) -> None:
    settings = {**FAST, "faults": {"overloaded": 0.3}}
    with running_emulator(settings) as emulator:
        load = {"pattern": "concurrency", "concurrency": [4], "requests_per_point": 40,
                "warmup_requests": 0}
        workload = serving_workload(tmp_path)
        doc = yaml.safe_load(workload.read_text())
        doc["load"] = load
        workload.write_text(yaml.safe_dump(doc))
        (result,) = run(tmp_path, endpoint_file(tmp_path, emulator.base_url, api), workload)
        server = {r["request_id"]: r for r in emulator.requests()}
    journal = tmp_path / "runs" / result["run_id"] / "events.jsonl"
    measured = [json.loads(line) for line in journal.read_text().splitlines()]
    measured = [r for r in measured if "point" in r and not r.get("warmup")]
    # the server's own fault draw for each measured request, matched by request id
    drawn = [server[r["request_id"]]["fault"] for r in measured]
    errors = result["points"][0]["errors"]
    assert drawn.count("overloaded") > 0
    assert errors["overloaded"] == drawn.count("overloaded")
    assert sum(errors.values()) == errors["overloaded"]


def test_each_api_answers_a_bad_request_in_its_own_error_shape(emu: Any) -> None:
    root = emu.base_url.removesuffix("/v1")
    messages = httpx.post(root + "/v1/messages", json={"model": "m", "messages": []})
    assert messages.status_code == 400
    assert messages.json()["type"] == "error"
    assert messages.json()["error"]["type"] == "invalid_request_error"
    responses = httpx.post(root + "/v1/responses", json={"model": "m"})
    assert responses.status_code == 400 and "input" in responses.json()["error"]["message"]
    no_max = httpx.post(root + "/v1/messages",
                        json={"model": "m", "messages": [{"role": "user", "content": "x"}]})
    assert no_max.status_code == 400 and "max_tokens" in no_max.json()["error"]["message"]


@pytest.mark.parametrize("api", NATIVE)
def test_agentic_runs_retry_overloaded_answers_as_transport_and_lose_no_task(
    tmp_path: Path, api: str
) -> None:
    settings = {**FAST, "faults": {"overloaded": 0.3}}
    with running_emulator(settings) as emulator:
        (result,) = run(tmp_path, endpoint_file(tmp_path, emulator.base_url, api),
                        SUITE / "retail-refund.yaml")
        stats = emulator.stats()
    agentic = result["agentic"]
    journal = tmp_path / "runs" / result["run_id"] / "events.jsonl"
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    overloaded = [r for r in lines if r.get("type") == "request" and r["class"] == "overloaded"]
    # the server drew them (a preflight may have drawn more, outside the journal)
    assert 0 < len(overloaded) <= stats["faults"]["overloaded"]
    assert agentic["success_rate"]["value"] == 1.0, agentic["tasks"]
    # every overloaded answer was resent, tagged transport, and cost something
    assert agentic["retry_cost"]["transport"]["requests"] == len(overloaded)
    assert agentic["retry_cost"]["transport"]["seconds"] > 0


@pytest.mark.parametrize("api", NATIVE)
def test_every_injected_call_fault_lands_in_its_own_validity_class_on_a_native_api(
    tmp_path: Path, api: str
) -> None:
    rates = {"invalid_json": 0.1, "unknown_tool": 0.1, "wrong_arguments": 0.1,
             "missing_id": 0.1, "skip_call": 0.1}
    settings = {**FAST, "agentic": {**FAST["agentic"], **rates}}
    with running_emulator(settings) as emulator:
        docs = run(tmp_path, endpoint_file(tmp_path, emulator.base_url, api), SUITE)
        injected = emulator.stats()["agentic"]
    calls: Counter[str] = Counter()
    for doc in docs:
        calls.update({k: v for k, v in doc["agentic"]["calls"].items() if isinstance(v, int)})
        # repairs after invalid calls are tagged and costed the same way on every API
        invalid = sum(doc["agentic"]["calls"][k] for k in ("invalid_json", "unknown_tool",
                                                          "schema_mismatch"))
        assert (doc["agentic"]["retry_cost"]["repair"]["requests"] > 0) == (invalid > 0)
    assert sum(injected.values()) > 0
    assert calls["invalid_json"] == injected.get("invalid_json", 0)
    assert calls["unknown_tool"] == injected.get("unknown_tool", 0)
    assert calls["schema_mismatch"] == injected.get("wrong_arguments", 0)
    assert calls["missing_id"] == injected.get("missing_id", 0)
    assert calls["duplicate_id"] == 0 and calls["stream_truncated"] == 0


@pytest.mark.parametrize("api", NATIVE)
def test_a_non_streamed_answer_on_a_native_api_is_read_as_one_body(emu: Any, api: str) -> None:
    import asyncio

    from epbench.runner.client import EndpointClient

    async def go() -> Any:
        client = EndpointClient(emu.base_url, None, None, 30.0, 1, api=api)
        try:
            return await client.chat({"model": "emulated-8b", "max_tokens": 5, "stream": False,
                                      "messages": [{"role": "user", "content": "hello there"}]},
                                     keep_chunks=True)
        finally:
            await client.aclose()

    res = asyncio.run(go())
    assert res.ok and res.output_tokens == 5 and res.input_tokens == 3
    assert res.finish_reason == "length"
    assert res.t_first_ns == res.t_first_answer_ns == res.t_last_ns
    message = res.chunks[0][1]["choices"][0]["message"]
    # 4 of the 5 tokens the limit allows went to reasoning (part of the output, as on the
    # real APIs): one answer word is left
    assert len(message["content"].split()) == 5 - 4
