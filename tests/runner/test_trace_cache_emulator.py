"""A Mooncake replay against the emulator's prefix cache (issue 25): the hit rate epbench
measures from each API's usage is the server's own, request by request, and follows the
prefix sharing the trace's hash ids describe (the emulator's stand-in for vLLM's /metrics)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from epbench.runner.entry import run_command
from tests.conftest import ROOT
from tests.emulator_fixture import emulator_endpoint, running_emulator

WORKLOAD = ROOT / "workloads" / "serving" / "trace-mooncake-chat.yaml"
BLOCK = 512  # Mooncake's tokens per hash id
CACHE = {"prompt_cache": True, "tpot_ms": 1, "ttft_ms": 5, "jitter": 0}

pytestmark = [pytest.mark.integration]


def expected_hit_rate(rows: list[dict[str, Any]], cap: int) -> float:
    """Cached / input tokens if a server caches every block the trace's hash ids share: a
    request reads each leading block whose whole prefix of ids came before (as much of it as
    was sent before), up to its first miss."""
    seen: dict[tuple[int, ...], int] = {}
    cached = total = 0
    for row in rows:
        length = min(int(row["input_length"]), cap)
        total += length
        reading = True
        for k in range(len(row["hash_ids"])):
            tokens = min(BLOCK, length - BLOCK * k)
            if tokens <= 0:
                break
            key = tuple(row["hash_ids"][:k + 1])
            if reading:
                hit = min(seen.get(key, 0), tokens)
                cached += hit
                reading = hit == tokens
            seen[key] = max(seen.get(key, 0), tokens)
    return cached / total


def test_a_mooncake_replay_measures_the_servers_own_cache_hits(tmp_path: Path) -> None:
    workload = yaml.safe_load(WORKLOAD.read_text("utf-8"))
    count = int(workload["quick"]["requests_per_point"])
    cap = int(workload["load"]["max_input_tokens"])
    with running_emulator(CACHE) as emu:
        doc = emulator_endpoint(CACHE)
        doc.pop("emulator")
        doc.update(base_url=emu.base_url, id="emulator-trace-cache")
        endpoint = tmp_path / "endpoint.yaml"
        endpoint.write_text(yaml.safe_dump(doc), encoding="utf-8")
        (path,) = run_command(endpoint=endpoint, workload=WORKLOAD, out=tmp_path / "runs",
                              resume=None, quick=True, client_region=None, shard=None,
                              progress=False)
        server = {r["request_id"]: r for r in emu.requests()}
    result = json.loads(Path(path).read_text("utf-8"))
    journal = Path(path).parent / "events.jsonl"
    lines = [json.loads(line) for line in journal.read_text("utf-8").splitlines()]
    measured = [r for r in lines if "point" in r and not r.get("warmup")]
    assert len(measured) == count and all(r["class"] == "ok" for r in measured)
    # request by request, the usage's cached tokens are what the server read from its cache
    assert [r["cache_read_tokens"] for r in measured] == \
        [server[r["request_id"]]["cached_tokens"] for r in measured]
    cache = result["points"][0]["cache"]
    server_rate = sum(server[r["request_id"]]["cached_tokens"] for r in measured) / sum(
        server[r["request_id"]]["prompt_tokens"] for r in measured)
    assert cache["hit_rate"] == pytest.approx(server_rate, abs=1e-6)
    rows = [json.loads(line) for line in
            (ROOT / workload["load"]["trace"]["path"]).read_text("utf-8").splitlines()[:count]]
    want = expected_hit_rate(rows, cap)
    print(f"hit rate measured {cache['hit_rate']:.4f} server {server_rate:.4f} "
          f"trace {want:.4f}")
    # the trace shares prefixes (its first block, a system prompt, is in every request)
    assert want > 0.05
    assert cache["hit_rate"] == pytest.approx(want, abs=0.02)
