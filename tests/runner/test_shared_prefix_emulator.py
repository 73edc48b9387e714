"""Shared prefixes against the emulator's prefix cache (issue 25): K prefixes each sent by M
requests read (M-1)/M of their prefixes from the cache, skip that prefill, and so answer
sooner than the same workload with no prefix shared."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from epbench.core.schema import check_schema
from epbench.generator.checks.evidence import check_evidence
from epbench.generator.checks.workload import plan as workload_plan
from epbench.generator.checks.workload.sha import WorkloadIndex
from epbench.runner.entry import run_command
from epbench.runner.plan import build_plan
from epbench.runner.workload import load_serving_workload
from tests.conftest import ROOT
from tests.emulator_fixture import emulator_endpoint, running_emulator

PREFIXES, PREFIX_TOKENS, EACH = 4, 1024, 8
# prefill 60 ms per 1k tokens: a 1k-token prefix read from the cache saves about 80 ms
CACHE = {"prompt_cache": True, "jitter": 0, "ttft_ms": 10, "prefill_ms_per_1k_tokens": 60,
         "tpot_ms": 2}

pytestmark = [pytest.mark.integration]


def workload(folder: Path, each: int) -> Path:
    doc = {
        "kind": "serving-workload", "schema_version": 1, "id": f"prefix-{each}",
        "version": "1.0", "description": "shared prefixes, one point", "seed": 3,
        "prompts": {"input_tokens": {"distribution": "fixed", "value": 16}, "max_tokens": 8,
                    "ignore_eos": True,
                    "shared_prefix": {"prefixes": PREFIXES, "tokens": PREFIX_TOKENS,
                                      "requests_each": each}},
        "load": {"pattern": "concurrency", "concurrency": [4], "requests_per_point": 64,
                 "warmup_requests": 0},
        "timeout_s": 60,
    }
    path = folder / "workloads" / "serving" / f"prefix-{each}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def endpoint(folder: Path, base_url: str) -> Path:
    doc = emulator_endpoint(CACHE)
    doc.pop("emulator")
    doc.update(base_url=base_url, id="emulator-prefix-cache")
    path = folder / "endpoint.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def run(folder: Path, endpoint_path: Path, workload_path: Path) -> tuple[Path, dict[str, Any]]:
    (path,) = run_command(endpoint=endpoint_path, workload=workload_path, out=folder / "runs",
                          resume=None, quick=False, client_region=None, shard=None,
                          progress=False)
    doc = json.loads(Path(path).read_text("utf-8"))
    assert check_schema(doc, "result", str(path)) == []
    return Path(path), doc


def test_shared_prefixes_hit_the_cache_m_minus_one_times_in_m_and_answer_sooner(
        tmp_path: Path) -> None:
    with running_emulator(CACHE) as emu:
        ep = endpoint(tmp_path, emu.base_url)
        shared_path, shared = run(tmp_path / "shared", ep, workload(tmp_path, EACH))
        emu.reset()  # a fresh cache: the unshared run's prefix names are the shared run's
        _, unshared = run(tmp_path / "unshared", ep, workload(tmp_path, 1))
    (hot,), (cold,) = shared["points"], unshared["points"]
    assert hot["cache"]["reported"] == hot["cache"]["requests"] == 64
    # 8 groups of 4 prefixes: the first request of each prefix writes it, the other 7 read
    # it; the 16-token suffix and the partial block at the prefix's end are never read
    assert hot["cache"]["hit_rate"] == pytest.approx((EACH - 1) / EACH, abs=0.05)
    assert hot["cache"]["hit_rate"] < (EACH - 1) / EACH
    assert cold["cache"]["hit_rate"] < 0.02
    print(f"hit rate shared {hot['cache']['hit_rate']:.4f} unshared "
          f"{cold['cache']['hit_rate']:.4f}; TTFT p50 shared {hot['ttft_ms']['p50']:.1f} ms "
          f"unshared {cold['ttft_ms']['p50']:.1f} ms")
    assert hot["ttft_ms"]["p50"] < cold["ttft_ms"]["p50"] - 30
    # the validator rebuilds the plan (prefix tokens counted in each length) and recomputes
    # every figure, the cache block's too, from the journal
    index = WorkloadIndex(tmp_path)
    expected = workload_plan.expected_plan(shared, index, str(shared_path))
    assert isinstance(expected, workload_plan.Expected)  # found, so the plan is compared
    assert {length for p in expected.points for length in p.lengths} == {PREFIX_TOKENS + 16}
    assert check_evidence(shared, shared_path, str(shared_path), index) == []


def test_each_prefix_serves_m_interleaved_requests_and_warm_up_has_its_own() -> None:
    loaded = load_serving_workload(ROOT / "workloads" / "serving" / "shared-prefix.yaml")
    shared = loaded.prompts["shared_prefix"]
    plan = build_plan(loaded, "r" * 16, quick=False)
    first = plan.points[0]
    warm = [r for r in first.requests if r.warmup]
    measured = [r for r in first.requests if not r.warmup]
    assert {r.prefix for r in warm}.isdisjoint({r.prefix for r in measured})
    k = shared["prefixes"]
    assert [r.prefix for r in measured[:k + 1]] == [
        *(f"c1-g0-k{i}" for i in range(k)), "c1-g0-k0"]
    uses: dict[str, int] = {}
    for r in measured:
        uses[str(r.prefix)] = uses.get(str(r.prefix), 0) + 1
    assert set(uses.values()) == {shared["requests_each"]}
    # each planned length counts the prefix's tokens and the request's own
    assert {r.input_tokens for r in first.requests} == {shared["tokens"] + 64}
    # no point reads another point's prefixes
    assert not {r.prefix for r in plan.points[1].requests} & set(uses)
