"""A serving sweep and an agentic workload on each native API through a server epbench did not
write: LiteLLM's proxy (Anthropic Messages and OpenAI Responses) in front of llama.cpp."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from epbench.core.schema import check_schema
from tests.servers.test_agentic_llamacpp import workload as agentic_workload
from tests.servers.test_llamacpp_serving import write_workload

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.built_server("llama")]
NATIVE = ("anthropic-messages", "openai-responses")


@pytest.fixture(scope="module")
def proxy():
    from tests.litellm_fixture import litellm_proxy

    with litellm_proxy() as server:
        yield server


def endpoint(folder: Path, base_url: str, api: str) -> Path:
    from tests.litellm_fixture import KEY_ENV
    from tests.llama_fixture import MODEL_NAME

    doc = {
        "kind": "endpoint", "schema_version": 1, "id": f"litellm-{api}",
        "provider": "LiteLLM proxy + llama.cpp (local)",
        "model": {"name": MODEL_NAME, "version": "random-weights"}, "api": api,
        "base_url": base_url, "api_key_env": KEY_ENV, "division": "self-hosted",
        "region": "local", "pricing": {"usd_per_hour": 0.5, "effective_date": "2026-11-01"},
        "hardware": {"accelerator": "none (CPU)", "count": 1,
                     "engine": "litellm proxy -> llama-cpp-python"},
    }
    path = folder / f"{api}.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def run(folder: Path, endpoint_path: Path, workload: Path) -> tuple[dict[str, Any], list[Any]]:
    from epbench.runner.entry import run_command

    (path,) = run_command(endpoint=endpoint_path, workload=workload, out=folder / "runs",
                          resume=None, quick=False, client_region=None, shard=None,
                          progress=False)
    result = json.loads(Path(path).read_text("utf-8"))
    assert check_schema(result, "result", str(path)) == []
    events = [json.loads(x) for x in (Path(path).parent / "events.jsonl").read_text().splitlines()]
    return result, events


@pytest.mark.parametrize("api", NATIVE)
def test_a_serving_sweep_through_litellm_measures_every_request(
    tmp_path: Path, proxy: tuple[str, str], api: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.litellm_fixture import KEY_ENV

    base_url, key = proxy
    monkeypatch.setenv(KEY_ENV, key)
    workload = write_workload(tmp_path / "sweep.yaml", requests=4, max_tokens=8)
    result, events = run(tmp_path, endpoint(tmp_path, base_url, api), workload)
    assert result["endpoint"]["api"] == api
    for point in result["points"]:
        assert point["requests"]["failed"] == 0, (api, point["errors"], events[:2])
        assert point["requests"]["completed"] == 4
        assert point["ttft_ms"]["n"] == 4 and point["ttft_ms"]["p50"] > 0
        assert point["tokens"]["output"] > 0 and point["tokens"]["source"] == "usage"
    # the key reached the proxy (it refuses anything else) and no file
    run_dir = tmp_path / "runs"
    files = [p for p in run_dir.rglob("*") if p.is_file()]
    assert files and all(key not in p.read_text("utf-8", "replace") for p in files)


@pytest.mark.parametrize(("api", "stream"), [("anthropic-messages", True),
                                             ("openai-responses", False)])
def test_an_agentic_workload_through_litellm_classifies_every_call(
    tmp_path: Path, proxy: tuple[str, str], api: str, stream: bool,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    """Anthropic Messages: the whole workload runs, tool results go back as tool_result
    blocks. OpenAI Responses: the first step of each trial succeeds through LiteLLM (a
    function_call item, classified); LiteLLM's own Responses bridge then fails, as the report
    names: streamed, with a mid-stream `Error building chunks` error event; not streamed, the
    next turn (function_call + function_call_output items) reaches llama.cpp as an assistant
    message without `content`, which its chat template rejects (HTTP 500). epbench must
    attribute those failures to the endpoint (never to itself) and still classify every call."""
    from tests.litellm_fixture import KEY_ENV

    base_url, key = proxy
    monkeypatch.setenv(KEY_ENV, key)
    path = tmp_path / "agentic.yaml"
    path.write_text(json.dumps(agentic_workload(48, stream)), encoding="utf-8")
    result, events = run(tmp_path, endpoint(tmp_path, base_url, api), path)
    agentic = result["agentic"]
    assert agentic["harness_faults"] == []
    outcomes = agentic["tasks"][0]["outcomes"]
    assert [o["trial"] for o in outcomes] == [0, 1]
    requests = [e for e in events if e["type"] == "request"]
    per_class: dict[str, int] = {}
    for e in requests:
        for cls, n in e["calls"].items():
            per_class[cls] = per_class.get(cls, 0) + n
    assert {k: v for k, v in agentic["calls"].items() if v} == per_class
    assert sum(per_class.values()) >= 1, "the forced tool choice produced no call at all"
    firsts = [e for e in requests if e["step"] == 1 and e["attempt"] == 0]

    def past_the_limit(e: dict) -> bool:
        # llama-cpp-python's function calling can write past max_tokens (113 tokens at 48):
        # the runner refuses that count as usage_implausible (issue 21) instead of believing it
        return e["class"] == "usage_implausible" and "of max_tokens 48" in (e["error"] or "")

    assert len(firsts) == 2 and all((e["class"] == "ok" and e["calls"]) or past_the_limit(e)
                                    for e in firsts), firsts
    if api == "anthropic-messages":
        failed = [e for e in requests if e["class"] != "ok"]
        assert all(o["result"] != "endpoint_error" for o in outcomes) \
            or (failed and all(past_the_limit(e) for e in failed)), (outcomes, events[:3])
    else:
        failed = [e for e in requests if e["class"] != "ok"]
        assert all("litellm" in (e["error"] or "").lower() or past_the_limit(e)
                   for e in failed), failed
