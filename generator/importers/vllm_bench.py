"""`vllm bench serve --save-result` JSON into an epbench result (one point).

Keys read (vLLM's benchmark result file): date ("YYYYmmdd-HHMMSS", written when the run
ends), backend / endpoint_type, model_id, num_prompts, request_rate ("inf" or a number),
max_concurrency, duration (s), completed, failed, total_input_tokens, total_output_tokens,
output_throughput, and per metric (ttft, tpot, itl, e2el) mean_<m>_ms, median_<m>_ms and
p<N>_<m>_ms for the percentiles chosen with --metric-percentiles (99 by default). Percentiles
the file does not carry stay null; tps_per_user needs p90 TPOT (run with
--metric-percentiles 50,90,95,99). A file without `date` needs `--date` (the importer never
takes a date from the file system); every key it does not read, and every metric that is not a
finite number, is listed in `source.unmapped`.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from epbench.core.documents import DocumentError, load_document
from epbench.core.errors import InputError
from epbench.core.metrics.pareto import frontier
from epbench.core.metrics.throughput import system_tps, tps_per_user
from epbench.generator.importers.common import (
    UNKNOWN_BASE_URL,
    date_missing,
    digest,
    dist,
    errors_with,
    harness_note,
    slug,
    unmapped_keys,
)

_READ = frozenset({"date", "backend", "endpoint_type", "model_id", "num_prompts", "request_rate",
                   "max_concurrency", "duration", "completed", "failed", "total_input_tokens",
                   "total_output_tokens", "output_throughput", "dataset_name"})
_METRIC_KEY = re.compile(r"^(mean|median|p\d+(\.\d+)?)_(ttft|tpot|itl|e2el)_ms$")


def _read(key: str) -> bool:
    return key in _READ or bool(_METRIC_KEY.match(key))


def _num(doc: dict[str, Any], key: str) -> float | None:
    value = doc.get(key)
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _metric(doc: dict[str, Any], name: str, n: int) -> dict[str, Any]:
    p50 = _num(doc, f"median_{name}_ms") or _num(doc, f"p50_{name}_ms")
    p90, p95, p99 = (_num(doc, f"p{q}_{name}_ms") for q in (90, 95, 99))
    if p50 is None and p90 is None and p95 is None and p99 is None:
        return dist(None, None, None, None, None, 0)
    return dist(p50, p90, p95, p99, _num(doc, f"mean_{name}_ms"), n)


def _ended(doc: dict[str, Any], path: Path, when: datetime | None) -> datetime:
    raw = doc.get("date")
    if isinstance(raw, str):
        try:
            return datetime.strptime(raw, "%Y%m%d-%H%M%S").replace(tzinfo=UTC)
        except ValueError:
            pass
    if when is None:
        raise date_missing(path, "the file has no `date` (YYYYmmdd-HHMMSS)")
    return when


def convert(path: Path, when: datetime | None = None) -> list[dict[str, Any]]:
    """One result from one saved vLLM benchmark file (`when`: the run's end, from --date,
    used only when the file has no date)."""
    if not path.is_file():
        raise InputError(f"{path}: expected the JSON file `vllm bench serve --save-result` wrote")
    try:
        doc = load_document(path)
    except DocumentError as exc:
        raise InputError(str(exc)) from None
    if not isinstance(doc, dict) or _num(doc, "duration") is None or "completed" not in doc:
        raise InputError(f"{path}: not a vLLM benchmark result (no duration / completed)")
    duration = _num(doc, "duration") or 0.0
    if duration <= 0:
        raise InputError(f"{path}: duration must be > 0")
    completed = int(_num(doc, "completed") or 0)
    failed = int(_num(doc, "failed") or 0)
    if "failed" not in doc and _num(doc, "num_prompts") is not None:
        failed = max(0, int(_num(doc, "num_prompts") or 0) - completed)
    issued = completed + failed
    output = int(_num(doc, "total_output_tokens") or 0)
    concurrency = _num(doc, "max_concurrency")
    rate = _num(doc, "request_rate")
    point: dict[str, Any] = {}
    unmapped = ["pricing (vLLM bench has no price card; cost figures are not computed)",
                "region", "client (python, os, client region)", "settings.seed",
                "error classes (failed requests are counted as http_5xx)",
                "goodput (request_goodput needs SLOs; completed requests per second used)"]
    if concurrency is not None and concurrency >= 1:
        point.update(id=f"c{int(concurrency)}", concurrency=int(concurrency))
        pattern = "concurrency"
    elif rate is not None and rate > 0:
        point.update(id=slug(f"r{rate:g}"), rate=rate)
        pattern = "poisson"
    else:
        n = max(1, issued)
        point.update(id=f"c{n}", concurrency=n)
        pattern = "concurrency"
        unmapped.append("request_rate inf without max_concurrency: all requests sent at once")
    tpot = _metric(doc, "tpot", completed)
    if tpot["p90"] is None:
        unmapped.append("tps_per_user (needs p90 TPOT: --metric-percentiles 50,90,95,99)")
    point.update(
        window_s=duration,
        requests={"issued": issued, "completed": completed, "failed": failed},
        errors=errors_with(failed),
        ttft_ms=_metric(doc, "ttft", completed),
        tpot_ms=tpot,
        itl_ms=_metric(doc, "itl", completed),
        e2e_ms=_metric(doc, "e2el", completed),
        tokens={"input": int(_num(doc, "total_input_tokens") or 0), "output": output,
                "output_in_window": output, "source": "usage"},
        system_tps=system_tps(output, duration),
        tps_per_user=tps_per_user(tpot["p90"]),
        goodput_rps=completed / duration,
    )
    model = str(doc.get("model_id") or "unknown")[:200]
    backend = str(doc.get("backend") or doc.get("endpoint_type") or "vllm")[:50]
    ended = _ended(doc, path, when)
    if not isinstance(doc.get("date"), str) or ended is when:
        unmapped.append("date (not in the file; the run's end is the --date given)")
    unmapped += unmapped_keys("unread key", doc, _read)
    unmapped += [f"{str(key)[:200]} (not a finite number: ignored)" for key in sorted(doc)
                 if _METRIC_KEY.match(str(key)) and _num(doc, key) is None]
    started = ended - timedelta(seconds=duration)
    dataset = str(doc.get("dataset_name") or "unknown")
    result: dict[str, Any] = {
        "kind": "result",
        "schema_version": 1,
        "run_id": digest(model, doc.get("date"), duration, completed, output)[:32],
        "harness": {"name": "vllm bench serve", "version": "unknown"},
        "workload": {"id": slug(f"vllm-bench-{dataset}"), "version": "1",
                     "sha256": digest(dataset, doc.get("num_prompts"), doc.get("request_rate"),
                                      doc.get("max_concurrency")),
                     "kind": "serving", "pattern": pattern},
        "endpoint": {
            "kind": "endpoint", "schema_version": 1, "id": slug(f"vllm-{model}"),
            "provider": f"{backend} (imported)", "model": {"name": model}, "api": "openai-chat",
            "base_url": UNKNOWN_BASE_URL, "api_key_env": None, "division": "self-hosted",
            "region": "unknown",
            "pricing": {"usd_per_hour": 0, "effective_date": started.date().isoformat()},
        },
        "client": {"python": "unknown", "os": "unknown", "region": None},
        "settings": {"seed": 0, "quick": False, "stream": True},
        "started_at": started.isoformat().replace("+00:00", "Z"),
        "finished_at": ended.isoformat().replace("+00:00", "Z"),
        "source": {"format": "vllm-bench", "path": str(path)[:500], "unmapped": unmapped,
                   "notes": harness_note()},
        "points": [point],
    }
    result["pareto"] = frontier(result["points"])
    return [result]
