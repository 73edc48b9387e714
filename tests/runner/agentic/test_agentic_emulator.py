"""The shipped agentic suite against the real emulator on loopback (what issue 6 must show).

Perfect skill: every task passes and only the fault-recovery workload has `recovery` requests.
Degraded (`invalid_json: 0.2`): success falls, `calls.invalid_json` equals the emulator's own
injected count exactly, and repairs cost tokens. With 429s and 5xx on: transport retries cost
something and every task still has exactly its trials, each journaled once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from epbench.core.documents import load_document
from epbench.core.schema import check_schema
from tests.conftest import ROOT, need

SUITE = ROOT / "workloads" / "agentic"
FAST = {"ttft_ms": 2, "tpot_ms": 0.5, "prefill_ms_per_1k_tokens": 2, "jitter": 0}

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def run_suite(
    tmp_path: Path, overrides: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run every shipped agentic workload (--quick); the results and the emulator's stats."""
    try:
        from epbench.runner.entry import run_command
        from tests.emulator_fixture import deep_merge, emulator_endpoint, running_emulator
    except ImportError as exc:
        need(f"the emulator or runner is not importable: {exc}")
    settings = deep_merge(FAST, overrides)
    with running_emulator(settings) as emu:
        endpoint = emulator_endpoint(settings)
        endpoint.pop("emulator")
        endpoint["base_url"] = emu.base_url
        path = tmp_path / "endpoint.yaml"
        path.write_text(yaml.safe_dump(endpoint), encoding="utf-8")
        results = run_command(
            endpoint=path,
            workload=SUITE,
            out=tmp_path / "runs",
            resume=None,
            quick=True,
            client_region=None,
            shard=None,
            progress=False,
        )
        stats = emu.stats()
    docs = [json.loads(Path(p).read_text("utf-8")) for p in results]
    for doc, p in zip(docs, results, strict=True):
        assert check_schema(doc, "result", str(p)) == []
    assert len(docs) == len(list(SUITE.glob("*.yaml")))
    return docs, stats


def total(docs: list[dict[str, Any]], key: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for doc in docs:
        for k, v in doc["agentic"][key].items():
            out[k] = out.get(k, 0) + (v if isinstance(v, int) else 0)
    return out


def test_a_perfect_model_passes_every_task_and_only_tool_faults_cost_recovery(tmp_path: Path):
    docs, stats = run_suite(
        tmp_path, {"agentic": {"split_arguments": True, "interleave_parallel": True}}
    )
    for doc in docs:
        a = doc["agentic"]
        assert a["success_rate"]["value"] == 1.0, (doc["workload"]["id"], a["tasks"])
        assert a["pass_hat_k"] == {"1": 1.0, "2": 1.0}
        assert a["retry_cost"]["repair"]["requests"] == 0
        faulty = doc["workload"]["id"] == "inventory-fault-recovery"
        assert (a["retry_cost"]["recovery"]["requests"] > 0) == faulty
        assert a["excess_tokens_over_reference"] == 0.0 or faulty
        assert a["harness_faults"] == []
    calls = total(docs, "calls")
    assert calls["ok"] > 30 and sum(v for k, v in calls.items() if k != "ok") == 0
    assert all(v == 0 for v in stats["agentic"].values())


def test_invalid_json_lowers_success_and_every_injected_call_is_counted_exactly(tmp_path: Path):
    docs, stats = run_suite(tmp_path, {"agentic": {"invalid_json": 0.2, "split_arguments": True}})
    assert stats["agentic"]["invalid_json"] > 0
    assert total(docs, "calls")["invalid_json"] == stats["agentic"]["invalid_json"]
    wins = sum(
        d["agentic"]["success_rate"]["value"] * d["agentic"]["success_rate"]["n"] for d in docs
    )
    n = sum(d["agentic"]["success_rate"]["n"] for d in docs)
    assert wins < n
    assert sum(d["agentic"]["retry_cost"]["repair"]["tokens"] for d in docs) > 0


def test_every_injected_kind_lands_in_its_own_call_class(tmp_path: Path):
    rates = {
        "invalid_json": 0.1,
        "unknown_tool": 0.1,
        "wrong_arguments": 0.1,
        "missing_id": 0.1,
        "skip_call": 0.1,
    }
    docs, stats = run_suite(tmp_path, {"agentic": rates})
    calls, injected = total(docs, "calls"), stats["agentic"]
    assert calls["invalid_json"] == injected.get("invalid_json", 0)
    assert calls["unknown_tool"] == injected.get("unknown_tool", 0)
    assert calls["schema_mismatch"] == injected.get("wrong_arguments", 0)
    assert calls["missing_id"] == injected.get("missing_id", 0)
    assert calls["duplicate_id"] == 0 and calls["stream_truncated"] == 0


def test_rate_limits_and_5xx_cost_transport_retries_and_lose_no_task(tmp_path: Path):
    docs, stats = run_suite(tmp_path, {"faults": {"rate_limit_rpm": 900, "http_5xx": 0.1}})
    assert stats["faults"]["http_5xx"] + stats["faults"]["rate_limit"] > 0
    assert sum(d["agentic"]["retry_cost"]["transport"]["requests"] for d in docs) > 0
    assert sum(d["agentic"]["retry_cost"]["transport"]["seconds"] for d in docs) > 0
    for doc in docs:
        wl = load_document(SUITE / f"{doc['workload']['id']}.yaml")
        a = doc["agentic"]
        assert [t["id"] for t in a["tasks"]] == [t["id"] for t in wl["tasks"]]
        for task in a["tasks"]:
            assert [o["trial"] for o in task["outcomes"]] == list(range(wl["quick_trials"]))
    runs = sorted((tmp_path / "runs").glob("*/events.jsonl"))
    for events in runs:
        trials = [json.loads(x) for x in events.read_text().splitlines() if '"type":"trial"' in x]
        keys = [(t["task"], t["trial"]) for t in trials]
        assert len(keys) == len(set(keys))
