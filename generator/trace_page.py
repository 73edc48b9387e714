"""What a trace workload's page shows of its trace: where it comes from, and charts of the
replay it plans (arrival rate over time, input and output length histograms).

The figures are the plan's (epbench.core.trace_plan, as the runner sends it: the window, the
time scale and the caps applied), aggregated here into a few dozen bars, so a page carries
tens of numbers, not the trace. Charts are vega-altair specifications with their data inline;
site/assets/epbench/trace.js embeds them (vendored Vega, nothing from another origin). The
workload and its trace are untrusted: every text reaches the page through autoescaped Jinja
or `json_script`, and a trace that cannot be read gives a one-line note instead of charts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import altair as alt
import numpy as np

from epbench.core.errors import InputError
from epbench.core.trace_plan import load_trace, project_root, trace_point

HEIGHT = 220
RATE_BARS = 60
LENGTH_BARS = 30


def trace_view(doc: dict[str, Any], path: Path) -> dict[str, Any] | None:
    """The page's trace section of a `pattern: trace` workload (None for any other)."""
    load = doc.get("load") if isinstance(doc, dict) else None
    if not isinstance(load, dict) or load.get("pattern") != "trace":
        return None
    found = load.get("trace")
    block: dict[str, Any] = found if isinstance(found, dict) else {}
    view: dict[str, Any] = {"source": block.get("source") or {}, "path": block.get("path"),
                            "format": block.get("format"), "problem": "", "charts": []}
    try:
        trace = load_trace(block, project_root(path), str(path.name))
        max_tokens = int((doc.get("prompts") or {}).get("max_tokens", 1))
        point = trace_point(load, trace, max_tokens, {}, False, str(path.name))
    except (InputError, KeyError, TypeError, ValueError) as exc:
        view["problem"] = str(exc)[:400]
        return view
    offsets = np.asarray(point.offsets, dtype=float)
    lengths = np.asarray(point.lengths, dtype=float)
    outputs = np.asarray(point.outputs, dtype=float)
    span = float(offsets[-1]) if len(offsets) else 0.0
    view["facts"] = {
        "requests": point.count,
        "span_s": round(span, 3),
        "rate_rps": point.rate,
        "time_scale": float(load.get("time_scale", 1.0)),
        "input_p50": float(np.percentile(lengths, 50)),
        "input_p90": float(np.percentile(lengths, 90)),
        "output_p50": float(np.percentile(outputs, 50)),
        "output_p90": float(np.percentile(outputs, 90)),
        "max_input_tokens": load.get("max_input_tokens"),
        "max_output_tokens": max_tokens,
        "repeated_blocks": _repeated_blocks(point.hash_ids),
    }
    view["charts"] = [
        {"id": "arrivals", "title": "Arrival rate, as replayed",
         "caption": f"Requests per second in {_bin_width(span):g}-second bins, over the "
                    f"{point.count:,} requests of the replay (seconds from its first request)",
         "spec": _rate_chart(offsets, span)},
        {"id": "inputs", "title": "Input lengths",
         "caption": "Requests by input tokens asked for (the trace's, capped)",
         "spec": _histogram(lengths, "input tokens")},
        {"id": "outputs", "title": "Output lengths",
         "caption": "Requests by output tokens asked for (the trace's, capped)",
         "spec": _histogram(outputs, "output tokens")},
    ]
    return view


def _repeated_blocks(hash_ids: list[tuple[int, ...]] | None) -> float | None:
    """Share of the replay's 512-token blocks whose hash id an earlier request already sent:
    the input a prefix cache that never evicts could serve (None without hash ids)."""
    if hash_ids is None:
        return None
    seen: set[int] = set()
    total = repeated = 0
    for ids in hash_ids:
        for block in ids:
            total += 1
            repeated += block in seen
            seen.add(block)
    return round(repeated / total, 4) if total else None


def _bin_width(span: float) -> float:
    """A round bin width giving at most RATE_BARS bars over `span` seconds."""
    for width in (0.1, 0.25, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600):
        if span / width <= RATE_BARS:
            return float(width)
    return float(np.ceil(span / RATE_BARS / 3600) * 3600)


def _finish(chart: alt.TopLevelMixin) -> dict[str, Any]:
    spec: dict[str, Any] = chart.properties(height=HEIGHT).to_dict()
    spec.pop("$schema", None)  # the page names no other origin
    return spec


def _rate_chart(offsets: np.ndarray, span: float) -> dict[str, Any]:
    width = _bin_width(span)
    bars = int(np.floor(span / width)) + 1
    counts = np.bincount(np.floor(offsets / width).astype(int), minlength=bars)
    rows = [{"start_s": round(i * width, 6), "end_s": round((i + 1) * width, 6),
             "rps": round(int(c) / width, 6), "requests": int(c)} for i, c in enumerate(counts)]
    chart = alt.Chart(alt.Data(values=rows)).mark_bar().encode(
        x=alt.X("start_s:Q", bin="binned", title="seconds from the first request (as replayed)"),
        x2="end_s:Q",
        y=alt.Y("rps:Q", title="requests per second"),
        tooltip=[alt.Tooltip("start_s:Q", title="from s"), alt.Tooltip("end_s:Q", title="to s"),
                 alt.Tooltip("requests:Q"), alt.Tooltip("rps:Q", title="requests/s")],
    )
    return _finish(chart)


def _histogram(values: np.ndarray, label: str) -> dict[str, Any]:
    low, high = float(values.min()), float(values.max())
    edges = np.linspace(low, high if high > low else low + 1, LENGTH_BARS + 1)
    counts, edges = np.histogram(values, bins=edges)
    rows = [{"from": round(float(edges[i]), 3), "to": round(float(edges[i + 1]), 3),
             "requests": int(c)} for i, c in enumerate(counts)]
    chart = alt.Chart(alt.Data(values=rows)).mark_bar().encode(
        x=alt.X("from:Q", bin="binned", title=label),
        x2="to:Q",
        y=alt.Y("requests:Q", title="requests"),
        tooltip=[alt.Tooltip("from:Q"), alt.Tooltip("to:Q"), alt.Tooltip("requests:Q")],
    )
    return _finish(chart)
