"""Synthetic, schema-valid results for the site's tests and for bench/site_scale.py.

Every result is derived from a simple serving model (per-user speed falls and throughput rises
with concurrency), so the derived fields agree with each other the way `epbench validate`
checks them (tps_per_user = 1000 / TPOT p90, system_tps = output in window / window, the
frontier equals the non-dominated points). Agentic results are copies of the sample agentic
result with other endpoints and dates.
"""

from __future__ import annotations

import copy
import json
import random
import shutil
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from epbench.core.metrics.pareto import frontier

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "tests" / "data" / "results"
SERVING_SAMPLE = SAMPLES / "alice" / "acme-llama-8b" / "2026-11-20-chat-short-a1b2c3d4.json"
AGENTIC_SAMPLE = SAMPLES / "bob" / "acme-llama-8b" / "2026-11-22-tool-lookup-c3d4e5f6.json"
SELF_HOSTED_SAMPLE = SAMPLES / "alice" / "alice-h100-vllm" / "2026-11-21-chat-short-b2c3d4e5.json"


@dataclass(frozen=True)
class Endpoint:
    id: str
    provider: str
    model: str
    division: str
    region: str
    output_price: float  # USD per Mtok (serviced) or USD per hour (self-hosted)
    speed: float  # relative decode speed


ENDPOINTS = [
    Endpoint("acme-llama-8b", "Acme Inference", "llama-3.1-8b", "serviced", "us-east-1", 0.2, 1.0),
    Endpoint("acme-llama-70b", "Acme Inference", "llama-3.1-70b", "serviced", "us-east-1", 0.9,
             0.5),
    Endpoint("bolt-llama-8b", "Bolt Cloud", "llama-3.1-8b", "serviced", "eu-west-1", 0.15, 1.3),
    Endpoint("bolt-qwen-32b", "Bolt Cloud", "qwen-2.5-32b", "serviced", "eu-west-1", 0.6, 0.7),
    Endpoint("cirrus-mistral-7b", "Cirrus AI", "mistral-7b", "serviced", "ap-south-1", 0.1, 1.1),
    Endpoint("lab-h100-vllm", "Lab", "llama-3.1-8b", "self-hosted", "local", 4.0, 1.6),
    Endpoint("lab-a10-sglang", "Lab", "qwen-2.5-7b", "self-hosted", "local", 1.2, 0.6),
    Endpoint("emulator", "epbench", "emulated-8b", "emulated", "local", 2.0, 1.0),
]
CLIENT_REGIONS = ["us-east", "eu-west", "ap-south"]
SUBMITTERS = ["alice", "bob", "carol", "dave"]
CONCURRENCY = [1, 2, 4, 8, 16, 32]


def _dist(p50: float, n: int) -> dict[str, Any]:
    insufficient = [p for p, need in (("p90", 64), ("p99", 662)) if n < need]
    return {"p50": round(p50, 3), "p90": round(p50 * 1.25, 3), "p95": round(p50 * 1.4, 3),
            "p99": round(p50 * 1.6, 3), "mean": round(p50 * 1.05, 3), "n": n,
            "insufficient": insufficient}


def _point(c: int, speed: float, jitter: float) -> dict[str, Any]:
    tpot_p50 = 6.4 * (1 + 0.06 * (c - 1)) / speed * jitter
    ttft_p50 = (80 + 12 * c) / speed * jitter
    completed = 100
    output = completed * 128
    tpot = _dist(tpot_p50, completed)
    tps_per_user = 1000.0 / tpot["p90"]
    window_s = round(output / (c * tps_per_user * 0.92), 3)
    system_tps = output / window_s
    return {
        "id": f"c{c}",
        "concurrency": c,
        "window_s": window_s,
        "requests": {"issued": completed, "completed": completed, "failed": 0, "warmup": 0},
        "errors": {k: 0 for k in ("rate_limited", "http_4xx", "http_5xx", "timeout",
                                  "connection", "stream_error", "truncated", "empty")},
        "ttft_ms": _dist(ttft_p50, completed),
        "tpot_ms": tpot,
        "itl_ms": _dist(tpot_p50, completed * 127),
        "e2e_ms": _dist(ttft_p50 + 127 * tpot_p50, completed),
        "tokens": {"input": completed * 1000, "output": output, "output_in_window": output,
                   "source": "usage"},
        "system_tps": system_tps,
        "tps_per_user": tps_per_user,
        "goodput_rps": round(completed / window_s * 0.9, 6),
    }


# Endpoints measured on the native APIs (the rest on openai-chat), for the API filter.
NATIVE_APIS = {"acme-llama-70b": "anthropic-messages", "cirrus-mistral-7b": "openai-responses"}


def _endpoint_block(template: dict[str, Any], ep: Endpoint,
                    day: date | None = None) -> dict[str, Any]:
    if ep.id == "emulator":  # the shipped endpoint file, as `epbench run` pins it
        doc: dict[str, Any] = json.loads(json.dumps(_shipped_emulator()))
        return doc
    if ep.id == "acme-llama-8b" and day is not None:  # the samples' file: its card that day
        from epbench.core.documents import load_document
        from epbench.core.pricing import card_on

        sample: dict[str, Any] = load_document(SAMPLES.parent / "endpoints" / f"{ep.id}.yaml")
        return {**sample, "pricing": card_on(sample["pricing"], day)}
    block = copy.deepcopy(template)
    block.update(id=ep.id, provider=ep.provider, division=ep.division, region=ep.region)
    block["api"] = NATIVE_APIS.get(ep.id, "openai-chat")
    block["model"] = {"name": ep.model, "version": "1"}
    if ep.division == "serviced":
        block["pricing"] = {"input_usd_per_mtok": round(ep.output_price / 2, 4),
                            "output_usd_per_mtok": ep.output_price,
                            "effective_date": "2026-01-01",
                            "source_url": "https://prices.example/card"}
    else:
        block["pricing"] = {"usd_per_hour": ep.output_price, "effective_date": "2026-01-01"}
        block["hardware"] = {"accelerator": "H100" if "h100" in ep.id else "A10", "count": 1,
                             "engine": "vllm 0.11.0" if "vllm" in ep.id else "sglang 0.4"}
        block["base_url"] = "http://127.0.0.1:8000/v1"
        block["api_key_env"] = None
        block.pop("rate_limits", None)
    return block


def _shipped_emulator() -> dict[str, Any]:
    from epbench.core.documents import load_document

    doc: dict[str, Any] = load_document(ROOT / "endpoints" / "emulator.yaml")
    return doc


def write_project_files(folder: Path) -> None:
    """What the results written here need to pass identity checks: an endpoint file per
    synthetic endpoint (and the samples'), and the samples' workload files."""
    endpoints = folder / "endpoints"
    endpoints.mkdir(parents=True, exist_ok=True)
    for path in (ROOT / "endpoints").glob("*.yaml"):
        shutil.copyfile(path, endpoints / path.name)
    for path in (SAMPLES.parent / "endpoints").glob("*.yaml"):
        shutil.copyfile(path, endpoints / path.name)
    template = json.loads(SERVING_SAMPLE.read_text(encoding="utf-8"))["endpoint"]
    for ep in ENDPOINTS:
        if ep.id not in ("emulator", "acme-llama-8b"):
            block = _endpoint_block(template, ep)
            (endpoints / f"{ep.id}.yaml").write_text(json.dumps(block), encoding="utf-8")
    target = folder / "workloads" / "agentic"
    target.mkdir(parents=True, exist_ok=True)
    for path in (SAMPLES.parent / "workloads" / "agentic").glob("*.yaml"):
        shutil.copyfile(path, target / path.name)


def serving_result(i: int, ep: Endpoint, day: date, client_region: str, submitter: str,
                   rng: random.Random) -> dict[str, Any]:
    doc = json.loads(SERVING_SAMPLE.read_text(encoding="utf-8"))
    doc["run_id"] = f"{i:08x}-serving"
    doc["endpoint"] = _endpoint_block(doc["endpoint"], ep, day)
    doc["client"]["region"] = client_region
    doc["started_at"] = f"{day.isoformat()}T10:00:00Z"
    doc["finished_at"] = f"{day.isoformat()}T10:05:00Z"
    doc["submitter"] = {"name": submitter, "relationship": "independent"}
    jitter = rng.uniform(0.9, 1.1)
    doc["points"] = [_point(c, ep.speed, jitter) for c in CONCURRENCY]
    doc["pareto"] = frontier(doc["points"])
    return doc


MS = 1_000_000


NOT_JOURNALED = object()


def journaled(doc: dict[str, Any], ep: Endpoint, rng: random.Random,
              cache_read: Any = NOT_JOURNALED) -> bytes:
    """Replace a serving result's figures with those of a synthetic journal (closed-loop
    rounds of `c` requests, 16 tokens each, timed by the same serving model), computed by
    epbench.core.summary as `epbench run` does; the journal's bytes, for writing beside it.
    `cache_read`: each request's cached input tokens (None: not reported; left out of the
    lines unless given, as journals were before they recorded it)."""
    from epbench.core import evidence
    from epbench.core.documents import load_document
    from epbench.core.summary import summarize_run
    from epbench.core.workload_plan import plan_points, run_spec

    # the plan of the workload the sample claims (chat-short), for its first points: the
    # validator rebuilds it and compares (workload.plan)
    workload = load_document(ROOT / "workloads" / "serving" / "chat-short.yaml")
    planned, _ = plan_points("concurrency", workload["seed"], workload["load"],
                             workload["prompts"]["input_tokens"], {}, False)
    planned = [p for p in planned if p.concurrency in CONCURRENCY]
    spec = run_spec("concurrency", workload["seed"], planned, workload["slo"], None)
    lines: list[dict[str, Any]] = [
        {"type": "run", "spec": spec.to_json()},
        {"type": "session", "t_ns": 9_000 * MS, "at": doc["started_at"],
         "rtt_ms": [21.5, 22.0, 20.8, 23.1, 21.9]},  # the preflight's (rng left untouched)
    ]
    jitter = rng.uniform(0.9, 1.1)
    t = 10_000 * MS
    for point in planned:
        c = int(point.concurrency or 1)
        for seq in range(point.count):
            start = t
            ttft = (80 + 12 * c) / ep.speed * jitter * rng.uniform(0.9, 1.1)
            tpot = 6.4 * (1 + 0.06 * (c - 1)) / ep.speed * jitter
            gaps = [round(tpot * rng.uniform(0.9, 1.1) * 1000) for _ in range(15)]
            first = start + round(ttft * MS)
            last = first + sum(gaps) * 1000
            lines.append({
                "request_id": point.request_id(seq), "point": point.id, "seq": seq,
                "warmup": seq < point.warmup, "t_scheduled_ns": None, "t_send_ns": start,
                "t_first_ns": first, "t_last_ns": last, "t_done_ns": last + MS,
                "input_tokens": 128, "input_requested": point.lengths[seq],
                "output_tokens": 16, "token_source": "usage",
                "status": 200, "class": "ok", "error": None, "itl_us": gaps,
                "attempts": 1, "retry_s": 0.0, "retry_tokens": 0,
                "response_id": f"chatcmpl-{doc['run_id'][:8]}-{point.id}-{seq}",
                "server_headers": {"request-id": f"req_{point.id}_{seq}",
                                   "x-ratelimit-remaining-requests": str(999 - seq)},
            })
            if cache_read is not NOT_JOURNALED:
                lines[-1].update(cache_read_tokens=cache_read, cache_write_tokens=None)
            if seq % c == c - 1:  # the round is over: the next starts when it ended
                t = last + 2 * MS
        t += 50 * MS
    doc["settings"] = {"seed": workload["seed"], "quick": False, "stream": True,
                       "max_tokens": workload["prompts"]["max_tokens"], "ignore_eos": True,
                       "temperature": workload["sampling"]["temperature"]}
    data = b"".join(json.dumps(x, separators=(",", ":")).encode() + b"\n" for x in lines)
    doc.update(summarize_run(spec, lines))
    doc["evidence"] = evidence.describe(data)
    return data


def agentic_result(i: int, ep: Endpoint, day: date, client_region: str,
                   submitter: str) -> dict[str, Any]:
    doc = json.loads(AGENTIC_SAMPLE.read_text(encoding="utf-8"))
    doc["run_id"] = f"{i:08x}-agentic"
    doc["endpoint"] = _endpoint_block(doc["endpoint"], ep, day)
    doc["client"]["region"] = client_region
    doc["started_at"] = f"{day.isoformat()}T08:00:00Z"
    doc["finished_at"] = f"{day.isoformat()}T08:10:00Z"
    doc["submitter"] = {"name": submitter, "relationship": "independent"}
    return doc


def load_result() -> dict[str, Any]:
    """The sample agentic result as if it had played retail-refund-fleet at its load levels:
    on the self-hosted sample endpoint, the section summarize_load makes of synthetic trials
    whose decision time grows with the agents (100 ms x (1 + agents / 32), so 16 agents are at
    the 200 ms SLO and 64 are not). No journal: shown, not ranked."""
    import hashlib

    from epbench.core.agentic_plan import plan_agentic
    from epbench.core.agentic_summary import summarize_load
    from epbench.core.cost_ledger import CostLedger
    from epbench.core.documents import load_document
    from epbench.core.trial_record import TrialRecord

    path = ROOT / "workloads" / "agentic" / "load" / "retail-refund-fleet.yaml"
    plan = plan_agentic(load_document(path), quick=False)
    assert plan.load is not None
    doc = json.loads(AGENTIC_SAMPLE.read_text(encoding="utf-8"))
    # on the self-hosted sample endpoint (an hourly card: agents per $/hour), whose other
    # results are all serving ones
    doc["endpoint"] = json.loads(SELF_HOSTED_SAMPLE.read_text(encoding="utf-8"))["endpoint"]
    card = doc["endpoint"].get("pricing")
    ledger = CostLedger(card)
    for _ in range(3):  # each trial: three productive requests of 100 in, ~37 out tokens
        ledger.add("productive", 100, 37, 0.3)
    records = [
        TrialRecord(task=task, trial=k, result="success", level=agents, steps=2, requests=3,
                    wall_ms=900.0 + 10 * agents, input_tokens=300, output_tokens=111,
                    usd=ledger.total_usd(), costs=ledger.to_dict(),
                    decision_ms=[100.0 * (1 + agents / 32) * (0.9 + 0.01 * (k % 20))] * 2,
                    tool_ms=[120.0, 150.0], tool_lag_ms=[1.0, 2.0])
        for agents, n in zip(plan.load.concurrency, plan.load.trials, strict=True)
        for task in plan.tasks for k in range(n)]
    doc["agentic"] = summarize_load(list(plan.tasks), plan.load, records, card)
    doc["run_id"] = "f1ee7000load0001"
    doc["workload"] = {**doc["workload"], "id": "retail-refund-fleet",
                       "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    doc["workload"].pop("quality", None)
    doc["workload"].pop("source", None)
    return doc


def result_path(results: Path, doc: dict[str, Any]) -> Path:
    """results/<submitter>/<endpoint>/<date>-<workload>-<run8>.json"""
    name = f"{doc['started_at'][:10]}-{doc['workload']['id']}-{doc['run_id'][:8]}.json"
    return results / doc["submitter"]["name"] / doc["endpoint"]["id"] / name


def write_results(results: Path, count: int, seed: int = 1, agentic_every: int = 5,
                  start: date = date(2026, 8, 1), days: int = 100,
                  journals: bool = False) -> list[Path]:
    """Write `count` results (one in `agentic_every` agentic) under `results`; with
    `journals`, each serving one carries its journal and is rankable (when not emulated)."""
    rng = random.Random(seed)
    written = []
    for i in range(count):
        ep = ENDPOINTS[i % len(ENDPOINTS)]
        day = start + timedelta(days=i * 7 % days)
        region = CLIENT_REGIONS[i % len(CLIENT_REGIONS)]
        submitter = SUBMITTERS[i % len(SUBMITTERS)]
        agentic = agentic_every and i % agentic_every == agentic_every - 1
        if agentic and ep.division != "self-hosted":
            doc = agentic_result(i, ep, day, region, submitter)
        else:
            doc = serving_result(i, ep, day, region, submitter, rng)
        data = journaled(doc, ep, rng) if journals and "points" in doc and doc["points"] \
            else None
        path = result_path(results, doc)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc), encoding="utf-8")
        if data is not None:
            from epbench.core import evidence

            evidence.pack(data, path.with_name(path.stem + evidence.SUFFIX))
        written.append(path)
    return written


# ------------------------------------------------------------------------- XSS corpus

PAYLOADS = [
    '<script>alert("xss-script")</script>',
    '"><img id="epb-xss-img" src=x onerror=alert("xss-img")>',
    "</script><script>alert('xss-close')</script>",
    "<svg id=\"epb-xss-svg\" onload=alert('xss-svg')>",
    "[click](javascript:alert('xss-md'))",
    "{{7*7}}{% raw %}",
    "' onmouseover='alert(1)",
]
SHORT_PAYLOAD = "<b id=epb-xss-b>1</b>"  # for fields limited to 50 characters
SHORT_FIELDS = {"version", "python", "region", "tier", "quantization", "engine", "accelerator"}
URL_PAYLOAD = 'https://x.example/"><img/id="epb-xss-url"/src=x/onerror=alert(1)>'


def _poison(value: Any, key: str, counter: list[int]) -> Any:
    """Replace every free-text string with a payload; keep ids, enums, dates and hashes."""
    keep = {"kind", "api", "division", "relationship", "source", "format", "pattern", "phase",
            "started_at", "finished_at", "effective_date", "snapshot_date", "sha256",
            "git_sha", "id", "name", "point", "result", "currency", "api_key_env", "task",
            "run_id", "insufficient"}
    if isinstance(value, dict):
        return {k: _poison(v, k, counter) for k, v in value.items()}
    if isinstance(value, list):
        return [_poison(v, key, counter) for v in value]
    if isinstance(value, str) and key not in keep:
        if key in ("base_url", "source_url"):
            return URL_PAYLOAD
        if key in SHORT_FIELDS:
            return SHORT_PAYLOAD
        counter[0] += 1
        return PAYLOADS[counter[0] % len(PAYLOADS)]
    return value


def xss_result() -> dict[str, Any]:
    """A valid serviced result whose every free-text string is a script or HTML payload."""
    doc = json.loads(SERVING_SAMPLE.read_text(encoding="utf-8"))
    doc = _poison(doc, "", [0])
    doc["run_id"] = "e0e0e0e0-xss-payloads"
    doc["endpoint"]["id"] = "xss-endpoint"
    doc["endpoint"]["provider"] = PAYLOADS[1]
    doc["endpoint"]["model"]["name"] = PAYLOADS[0]
    doc["endpoint"]["region"] = PAYLOADS[3][:64]
    doc["submitter"]["display_name"] = PAYLOADS[2]
    doc["notes"] = " ".join(PAYLOADS)
    doc["client"]["region"] = PAYLOADS[2][:64]
    doc["client"]["os"] = PAYLOADS[4]
    # the workload is the sample's (its sha256 is kept), so its version must be that file's
    doc["workload"]["version"] = json.loads(SERVING_SAMPLE.read_text())["workload"]["version"]
    return doc


XSS_WORKLOAD = f"""kind: serving-workload
schema_version: 1
id: xss-workload
version: "1.0"
description: {json.dumps(" ".join(PAYLOADS))}
seed: 1
prompts:
  input_tokens: {{distribution: fixed, value: 10}}
  max_tokens: 16
load:
  pattern: concurrency
  concurrency: [1]
  requests_per_point: 4
"""


SELF_REPORTED_RUN = "5e1f5e1f-self-reported-0001"
SELF_REPORTED_SUBMITTER = "mallory"
"""A copy of the serving sample under its own submitter and client region (its own board
row), which the browser tests' build leaves self-reported while it counts every other result
as attested (tests/browser/conftest.py)."""


def self_reported_result() -> dict[str, Any]:
    doc = json.loads(SERVING_SAMPLE.read_text())
    doc["run_id"] = SELF_REPORTED_RUN
    doc["submitter"] = {**doc.get("submitter", {}), "name": SELF_REPORTED_SUBMITTER}
    doc["client"] = {**doc["client"], "region": "sa-east"}
    return doc


def make_project(folder: Path, generated: int = 12, xss: bool = True,
                 self_reported: bool = False) -> Path:
    """A project folder: the sample results, `generated` synthetic ones, the XSS result and
    workload, (with `self_reported`) the self-reported copy, and the shipped endpoint and
    workload files."""
    results = folder / "results"
    shutil.copytree(SAMPLES, results)
    if self_reported:
        copy_doc = self_reported_result()
        target = results / SELF_REPORTED_SUBMITTER / copy_doc["endpoint"]["id"] / (
            f"2026-11-20-chat-short-{SELF_REPORTED_RUN[:8]}.json")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(copy_doc), encoding="utf-8")
    write_results(results, generated, start=date(2026, 9, 1), days=60, journals=True)
    for kind in ("serving", "agentic", "traces"):
        # every shipped workload, those in sub-folders (agentic/bfcl/) too, and the traces
        # the trace workloads replay
        shutil.copytree(ROOT / "workloads" / kind, folder / "workloads" / kind,
                        dirs_exist_ok=True)
    write_project_files(folder)
    fleet = load_result()  # an agentic result with load levels (agents at SLO)
    path = result_path(results, fleet)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(fleet), encoding="utf-8")
    if xss:
        doc = xss_result()
        path = result_path(results, doc)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc), encoding="utf-8")
        (folder / "workloads" / "serving" / "xss-workload.yaml").write_text(
            XSS_WORKLOAD, encoding="utf-8")
        # the endpoint it claims, with the same payloads (identity is checked)
        (folder / "endpoints" / "xss-endpoint.yaml").write_text(
            json.dumps(doc["endpoint"]), encoding="utf-8")
    return folder
