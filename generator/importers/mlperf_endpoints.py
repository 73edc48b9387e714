"""MLPerf Endpoints submission folders into epbench results.

The layout (MLCommons endpoints-submission-docs, "Submission package layout"):

    <org>/<submission_id>/results/<system>/<model>/r<N>/
        point.yaml            concurrency, model_name, division, dataset, runtime_settings, ...
        result_summary.json   n_samples_issued/completed/failed, duration_ns, ttft, tpot,
                              latency, output_sequence_lengths, ... (times in nanoseconds;
                              percentile keys are decimal strings, "90" or "90.0")
        system_desc.json      submitter_org_names, system_name, serving_framework,
                              node_types[].accelerator_info[], ...

One epbench result per <system>/<model>: one point per r<N> (concurrency N), keeping the
submission's own P90 TTFT and TPOT, with the Pareto frontier recomputed from those points.
Files are read with the same safe loader as every other input (size-limited, safe YAML).
The run date is result_summary.json's test_started_at; without it the importer asks for
`--date` (it never takes a date from the file system or a cohort's month). Every key it does
not read is listed in `source.unmapped`.
"""

from __future__ import annotations

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

NS_PER_MS = 1e6
MAX_POINTS = 1000
_UNMAPPED_ALWAYS = [
    "pricing (MLPerf Endpoints has no price card; cost figures are not computed)",
    "region (point.yaml region is a concurrency region, not a location)",
    "client (python, os, client region)",
    "itl (not in result_summary.json)",
    "error classes (failed samples are counted as http_5xx)",
    "goodput (no SLOs: every completed request counts)",
    "settings.seed (MLPerf seeds are in point.yaml runtime_settings)",
]


def _load(path: Path) -> Any:
    try:
        return load_document(path)
    except DocumentError as exc:
        raise InputError(str(exc)) from None


def _pct(stats: Any, key: str) -> float | None:
    """A percentile in ms from a stat block whose percentile keys are "90" or "90.0" (ns)."""
    if not isinstance(stats, dict):
        return None
    table = stats.get("percentiles") or {}
    if not isinstance(table, dict):
        return None
    for name in (key, f"{key}.0", f"{float(key)}"):
        value = table.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value) / NS_PER_MS
    return None


def _unread_percentiles(summary: dict[str, Any]) -> list[str]:
    """Percentiles of result_summary.json that are not numbers (`_pct` cannot read them), so
    the result lists them in `source.unmapped` rather than dropping them without a word."""
    out = []
    for block in ("ttft", "tpot", "latency"):
        stats = summary.get(block)
        table = stats.get("percentiles") if isinstance(stats, dict) else None
        if not isinstance(table, dict):
            continue
        for key, value in table.items():
            if not isinstance(value, int | float) or isinstance(value, bool):
                out.append(f"result_summary.json: {block}.percentiles.{str(key)[:20]} "
                           f"(not a number)")
    return out


def _mean(stats: Any, n: int) -> float | None:
    if not isinstance(stats, dict):
        return None
    for key in ("avg", "mean"):
        if isinstance(stats.get(key), int | float):
            return float(stats[key]) / NS_PER_MS
    total = stats.get("total")
    if isinstance(total, int | float) and n > 0:
        return float(total) / n / NS_PER_MS
    return None


def _stat_dist(stats: Any, n: int) -> dict[str, Any]:
    p50, p90, p95, p99 = (_pct(stats, k) for k in ("50", "90", "95", "99"))
    if p50 is None and p90 is None and p95 is None and p99 is None:
        return dist(None, None, None, None, None, 0)
    return dist(p50, p90, p95, p99, _mean(stats, n), n)


def _int(value: Any, default: int = 0) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else default


def _point(folder: Path, point_yaml: dict[str, Any], summary: dict[str, Any]) -> dict[str, Any]:
    concurrency = _int(point_yaml.get("concurrency"))
    if concurrency < 1 and folder.name[1:].isdigit():
        concurrency = int(folder.name[1:])
    if concurrency < 1:
        raise InputError(f"{folder}: point.yaml has no concurrency")
    issued = _int(summary.get("n_samples_issued"))
    completed = _int(summary.get("n_samples_completed"))
    issued = max(issued, completed)
    window_s = _int(summary.get("duration_ns")) / 1e9
    if window_s <= 0:
        raise InputError(f"{folder / 'result_summary.json'}: duration_ns is missing or not > 0")
    osl = summary.get("output_sequence_lengths") or {}
    isl = summary.get("input_sequence_lengths") or {}
    output = _int(osl.get("total") if isinstance(osl, dict) else None)
    tokens: dict[str, Any] = {
        "input": _int(isl.get("total") if isinstance(isl, dict) else None),
        "output": output,
        "output_in_window": output,
        "source": "usage",
    }
    tpot = _stat_dist(summary.get("tpot"), completed)
    return {
        "id": f"c{concurrency}",
        "concurrency": concurrency,
        "window_s": window_s,
        "requests": {"issued": issued, "completed": completed, "failed": issued - completed},
        "errors": errors_with(issued - completed),
        "ttft_ms": _stat_dist(summary.get("ttft"), completed),
        "tpot_ms": tpot,
        "itl_ms": dist(None, None, None, None, None, 0),
        "e2e_ms": _stat_dist(summary.get("latency"), completed),
        "tokens": tokens,
        "system_tps": system_tps(output, window_s),
        "tps_per_user": tps_per_user(tpot["p90"]),
        "goodput_rps": completed / window_s,
    }


def _hardware(system: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    nodes = system.get("node_types")
    if isinstance(nodes, list) and nodes and isinstance(nodes[0], dict):
        node = nodes[0]
        accelerators = node.get("accelerator_info")
        if isinstance(accelerators, list) and accelerators and isinstance(accelerators[0], dict):
            first = accelerators[0]
            name = first.get("accelerator_model_name")
            if isinstance(name, str) and name:
                out["accelerator"] = name[:100]
            nodes_count = max(1, _int(node.get("number_of_nodes"), 1))
            count = _int(first.get("accelerators_per_node")) * nodes_count
            if count >= 1:
                out["count"] = count
    engine = system.get("serving_framework")
    if isinstance(engine, str) and engine:
        out["engine"] = engine[:100]
    return out


_POINT_KEYS = frozenset({"concurrency", "model_name", "division", "dataset", "runtime_settings",
                         "model_precision", "seed_set"})
_SUMMARY_KEYS = frozenset({"n_samples_issued", "n_samples_completed", "duration_ns",
                           "output_sequence_lengths", "input_sequence_lengths", "tpot", "ttft",
                           "latency", "test_started_at", "version", "git_sha"})
_SYSTEM_KEYS = frozenset({"submitter_org_names", "submitter_contact", "serving_framework",
                          "node_types", "accelerator_info", "system_name"})


def _started(summary: dict[str, Any]) -> datetime | None:
    """test_started_at, else None (the caller then needs --date)."""
    raw = summary.get("test_started_at")
    if isinstance(raw, int | float) and raw > 0:
        return datetime.fromtimestamp(raw / 1e9, UTC)
    return None


def _text(value: Any, limit: int) -> str | None:
    return value[:limit] if isinstance(value, str) and value.strip() else None


def _curve(system_name: str, model_dir: str, folders: list[Path], source: Path,
           when: datetime | None = None) -> dict[str, Any]:
    loaded = []
    for folder in folders:
        point_yaml = _load(folder / "point.yaml")
        summary = _load(folder / "result_summary.json")
        desc_path = folder / "system_desc.json"
        system = _load(desc_path) if desc_path.is_file() else {}
        if not all(isinstance(d, dict) for d in (point_yaml, summary, system)):
            raise InputError(f"{folder}: point.yaml, result_summary.json and system_desc.json "
                             "must each be an object")
        loaded.append((folder, point_yaml, summary, system))
    points = sorted((_point(f, p, s) for f, p, s, _ in loaded), key=lambda p: p["concurrency"])
    _, point_yaml, summary, system = loaded[0]
    model_name = _text(point_yaml.get("model_name"), 200) or model_dir
    division = "serviced" if str(point_yaml.get("division", "")).lower() == "serviced" \
        else "self-hosted"
    stamps = [_started(s) for _, _, s, _ in loaded]
    unmapped = list(_UNMAPPED_ALWAYS)
    if any(stamp is None for stamp in stamps):
        if when is None:
            missing = next(f for (f, _, _, _), st in zip(loaded, stamps, strict=True) if st is None)
            raise date_missing(missing / "result_summary.json", "it has no test_started_at")
        unmapped.append("started_at (no test_started_at in the submission; from --date)")
    started = min(stamp for stamp in [*stamps, when] if stamp is not None)
    seen: set[str] = set()
    for _, p_doc, s_doc, sys_doc in loaded:
        for item in (unmapped_keys("point.yaml", p_doc, _POINT_KEYS)
                     + unmapped_keys("result_summary.json", s_doc, _SUMMARY_KEYS)
                     + unmapped_keys("system_desc.json", sys_doc, _SYSTEM_KEYS)
                     + _unread_percentiles(s_doc)):
            if item not in seen:
                seen.add(item)
                unmapped.append(item)
    finished = started + timedelta(seconds=sum(p["window_s"] for p in points))
    dataset = _text(point_yaml.get("dataset"), 60) or "mlperf-endpoints"
    runtime = point_yaml.get("runtime_settings")
    endpoint: dict[str, Any] = {
        "kind": "endpoint",
        "schema_version": 1,
        "id": slug(f"mlperf-{system_name}-{model_dir}"),
        "description": f"Imported from an MLPerf Endpoints submission: {system_name[:200]}",
        "provider": _text(system.get("submitter_org_names"), 100) or "unknown",
        "model": {"name": model_name},
        "api": "openai-chat",
        "base_url": UNKNOWN_BASE_URL,
        "api_key_env": None,
        "division": division,
        "region": "unknown",
        "pricing": (
            {"input_usd_per_mtok": 0, "output_usd_per_mtok": 0,
             "effective_date": started.date().isoformat(),
             "source_url": "https://mlcommons.org/benchmarks/endpoints/"}
            if division == "serviced"
            else {"usd_per_hour": 0, "effective_date": started.date().isoformat()}
        ),
    }
    precision = _text(point_yaml.get("model_precision"), 50)
    if precision:
        endpoint["model"]["quantization"] = precision
    hardware = _hardware(system)
    if hardware:
        endpoint["hardware"] = hardware
    result: dict[str, Any] = {
        "kind": "result",
        "schema_version": 1,
        "run_id": digest(system_name, model_dir, [p["id"] for p in points],
                         [p["window_s"] for p in points])[:32],
        "harness": {"name": "mlcommons/endpoints",
                    "version": _text(summary.get("version"), 50) or "unknown"},
        "workload": {"id": slug(dataset), "version": _text(point_yaml.get("seed_set"), 50) or "1",
                     "sha256": digest(dataset, runtime), "kind": "serving",
                     "pattern": "concurrency"},
        "endpoint": endpoint,
        "client": {"python": "unknown", "os": "unknown", "region": None},
        "settings": {"seed": 0, "quick": False, "stream": True},
        "started_at": started.isoformat().replace("+00:00", "Z"),
        "finished_at": finished.isoformat().replace("+00:00", "Z"),
        "source": {
            "format": "mlperf-endpoints",
            "path": str(source)[:500],
            "unmapped": unmapped[:200],
            "notes": f"{harness_note()}; system {system_name[:200]}, model {model_dir[:200]}",
        },
        "points": points,
        "pareto": frontier(points),
    }
    sha = summary.get("git_sha")
    if isinstance(sha, str) and 7 <= len(sha) <= 40 and all(c in "0123456789abcdef" for c in sha):
        result["harness"]["git_sha"] = sha
    contact = _text(system.get("submitter_contact"), 200)
    org = _text(system.get("submitter_org_names"), 200)
    result["submitter"] = {k: v for k, v in (("display_name", org), ("contact", contact)) if v}
    if not points:  # pragma: no cover - a curve has at least the folder it was found by
        raise InputError(f"{source}: no points")
    return result


def convert(path: Path, when: datetime | None = None) -> list[dict[str, Any]]:
    """One result per <system>/<model> found under `path` (a submission, or any folder in it)."""
    if not path.is_dir():
        raise InputError(f"{path}: an MLPerf Endpoints submission is a folder")
    curves: dict[tuple[str, str], list[Path]] = {}
    for point_file in sorted(path.rglob("point.yaml")):
        folder = point_file.parent
        if point_file.is_symlink() or not (folder / "result_summary.json").is_file():
            continue
        model_dir = folder.parent
        curves.setdefault((model_dir.parent.name, model_dir.name), []).append(folder)
    if not curves:
        raise InputError(
            f"{path}: no r<N>/point.yaml with result_summary.json beside it "
            "(expected results/<system>/<model>/r<N>/)"
        )
    out = []
    for (system_name, model_name), folders in sorted(curves.items()):
        out.append(_curve(system_name, model_name, folders[:MAX_POINTS], path, when))
    return out
