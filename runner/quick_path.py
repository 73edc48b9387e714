"""A run without YAML: `epbench run --url URL --model M ...` writes the endpoint and serving
workload files those options mean, and the run uses them like any others. They are written
once per set of options (under <out>/quick/<hash>/), and copied into the run folder, so that
`epbench run --endpoint E --workload W` with those copies repeats the run exactly.

`epbench endpoint new` writes the same endpoint file, with a comment on every field, for a
self-hosted endpoint (an hourly price) or a serviced one (a price per million tokens).
"""

from __future__ import annotations

import hashlib
import re
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from epbench.core.errors import InputError

ENDPOINT_FILE = "endpoint.yaml"
WORKLOAD_FILE = "workload.yaml"
APIS = ("openai-chat", "openai-responses", "anthropic-messages")


@dataclass(frozen=True)
class QuickRun:
    """What the command-line options of a run without YAML say."""

    url: str
    model: str
    api: str = "openai-chat"
    api_key_env: str | None = None
    concurrency: tuple[int, ...] = (1,)
    rates: tuple[float, ...] = ()
    input_tokens: int = 128
    output_tokens: int = 128
    requests: int | None = None
    duration_s: float | None = None
    warmup: int = 2
    seed: int = 1


def parse_list(text: str, kind: type[int] | type[float], option: str) -> tuple[float, ...]:
    """'1,4,16' as numbers (InputError naming the option otherwise)."""
    try:
        values = tuple(kind(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise InputError(f"{option} {text!r}: give numbers separated by commas, e.g. 1,4,16"
                         ) from None
    if not values or any(v <= 0 for v in values):
        raise InputError(f"{option} {text!r}: every value must be above 0")
    return values


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-._")
    return (slug or "endpoint")[:64].rstrip("-._")


def endpoint_text(url: str, model: str, api: str = "openai-chat", api_key_env: str | None = None,
                  division: str = "self-hosted", endpoint_id: str | None = None) -> str:
    """A commented endpoint file; it passes `epbench validate` as written."""
    if api not in APIS:
        raise InputError(f"--api {api!r}: use one of {', '.join(APIS)}")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError(f"--url {url!r}: give the endpoint's base URL, e.g. http://127.0.0.1:8000/v1")
    ident = endpoint_id or _slug(f"{parts.hostname}-{model.split('/')[-1]}")
    today = datetime.now(UTC).date().isoformat()
    key = api_key_env or "null"
    if division == "serviced":
        pricing = ("pricing:                   # the provider's price card, copied into results\n"
                   "  input_usd_per_mtok: 0.0   # USD per million input tokens: fill it in\n"
                   "  output_usd_per_mtok: 0.0  # USD per million output tokens: fill it in\n"
                   f'  effective_date: "{today}"\n'
                   "  source_url: https://example.com/pricing   # where the price is published\n")
    else:
        pricing = ("pricing:                   # what the hardware costs per hour: fill it in\n"
                   "  usd_per_hour: 0.0\n"
                   f'  effective_date: "{today}"\n'
                   "# hardware: {accelerator: H100 80GB, count: 1, engine: vllm 0.11.0}\n")
    return (
        "# An endpoint file (schemas/endpoint.schema.json); `epbench validate` checks it.\n"
        "kind: endpoint\nschema_version: 1\n"
        f"id: {ident}    # lowercase [a-z0-9][a-z0-9._-]{{0,63}}; the results/ folder name\n"
        f"provider: {_scalar(parts.hostname or 'unknown')}   # who serves it\n"
        f"model:\n  name: {_scalar(model)}   # exactly what the API takes in \"model\"\n"
        f"api: {api}   # openai-chat | openai-responses | anthropic-messages\n"
        f"base_url: {_scalar(url.rstrip('/'))}   # up to /v1 for OpenAI-compatible servers\n"
        f"api_key_env: {key}   # the NAME of the variable holding the key, never the key\n"
        f"division: {division}   # serviced | self-hosted | emulated\n"
        "region: local   # where the endpoint serves from (e.g. us-east-1)\n"
        + pricing
    )


def _scalar(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def workload_text(spec: QuickRun) -> str:
    """The serving workload the options describe (a concurrency sweep or Poisson rates)."""
    if spec.rates:
        requests = spec.requests
        if requests is None:
            if spec.duration_s is None:
                requests = 64
            else:  # arrivals at rate r for d seconds: r*d requests, as sent
                requests = max(1, round(max(spec.rates) * spec.duration_s))
        load = (f"  pattern: poisson\n  rates_rps: [{', '.join(_num(r) for r in spec.rates)}]\n")
    else:
        if spec.duration_s is not None:
            raise InputError("--duration needs --rate: a concurrency sweep is sized by --requests")
        requests = spec.requests or 64
        load = ("  pattern: concurrency\n"
                f"  concurrency: [{', '.join(str(int(c)) for c in spec.concurrency)}]\n")
    return (
        "# The serving workload of a run without YAML (schemas/serving-workload.schema.json).\n"
        "kind: serving-workload\nschema_version: 1\nid: quick\nversion: \"1.0\"\n"
        "description: A run from command-line options (epbench run --url).\n"
        f"seed: {spec.seed}\n"
        f"prompts:\n  input_tokens: {{distribution: fixed, value: {spec.input_tokens}}}\n"
        f"  max_tokens: {spec.output_tokens}\n  ignore_eos: true\n"
        "sampling: {temperature: 0.0}\n"
        f"load:\n{load}  requests_per_point: {requests}\n  warmup_requests: {spec.warmup}\n"
    )


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def write_inputs(spec: QuickRun, out: Path) -> tuple[Path, Path]:
    """The endpoint and workload files for `spec`, written under `out`/quick/<hash>/."""
    endpoint = endpoint_text(spec.url, spec.model, spec.api, spec.api_key_env)
    workload = workload_text(spec)
    digest = hashlib.sha256((endpoint + workload).encode()).hexdigest()[:12]
    folder = out / "quick" / digest
    folder.mkdir(parents=True, exist_ok=True)
    paths = folder / ENDPOINT_FILE, folder / WORKLOAD_FILE
    for path, text in zip(paths, (endpoint, workload), strict=True):
        if not path.exists():  # the same options keep the same files (a resume finds them)
            path.write_text(text, encoding="utf-8")
    return paths


def keep_inputs(inputs: tuple[Path, Path], run_dir: Path) -> None:
    """Copy the files the run used into its folder."""
    for path, name in zip(inputs, (ENDPOINT_FILE, WORKLOAD_FILE), strict=True):
        shutil.copyfile(path, run_dir / name)
