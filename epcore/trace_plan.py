"""A `pattern: trace` load as a plan: the trace's requests, at the trace's times, in one point.

    load:
      pattern: trace
      trace: {path: workloads/traces/<file>, sha256: <of its bytes>, format: azure-csv}
      time_scale: 0.5           trace seconds x this = replay seconds (0.5: twice as fast)
      window: {start_s: 60, duration_s: 300}     or {start_s: 60, count: 500}
      max_input_tokens: 4096    each request's input is capped here (prompts.max_tokens caps
                                its output), so a small server can replay the trace's shape

One point, `trace`, holds the window's requests in trace order: request `seq` arrives at
(its trace time - the window's first request's) x time_scale seconds after the point starts,
asks for min(input, max_input_tokens) input tokens and max(1, min(output, max_tokens)) output
tokens; a Mooncake request keeps the hash ids of the blocks its capped input still covers.
`--quick` keeps the window's first `quick.requests_per_point` requests. The point's `rate` is
the window's mean arrival rate after scaling. The plan is a pure function of the workload and
the trace file's bytes, so `epbench validate` rebuilds it (epbench.generator.checks.workload.plan)
after checking the trace's sha256.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from epbench.core.errors import InputError
from epbench.core.trace_file import (
    BLOCK_TOKENS,
    TRACE_PATH,
    Trace,
    parse_trace,
    read_trace_bytes,
    sha256_of,
)
from epbench.core.workload_plan import PlannedPoint

POINT_ID = "trace"


def project_root(workload_path: Path) -> Path | None:
    """The folder that holds the `workloads/` folder this workload file sits in (a trace's
    path is relative to it), or None when the file is not under a `workloads/` folder."""
    for parent in Path(workload_path).resolve().parents:
        if parent.name == "workloads":
            return parent.parent
    return None


def load_trace(block: Mapping[str, Any], root: Path | None, where: str) -> Trace:
    """The trace a workload's `load.trace` names, its sha256 checked; InputError naming
    `where` (the workload file) and the pointer, or the trace file and line."""
    rel = str(block.get("path", ""))
    if not TRACE_PATH.match(rel):
        raise InputError(f"{where}:/load/trace/path: {rel[:120]!r} is not a file under "
                         f"workloads/traces/ (.csv or .jsonl)")
    if root is None:
        raise InputError(f"{where}:/load/trace/path: the workload is not inside a workloads/ "
                         f"folder, so {rel} cannot be found")
    data = read_trace_bytes(root / rel, rel)
    sha = sha256_of(data)
    if sha != block.get("sha256"):
        raise InputError(f"{where}:/load/trace/sha256: {rel} has sha256 {sha}, the workload "
                         f"names {str(block.get('sha256'))[:64]}")
    return parse_trace(data, str(block.get("format")), rel)


def trace_point(load: Mapping[str, Any], trace: Trace, max_tokens: int,
                quick_block: Mapping[str, Any], quick: bool, where: str) -> PlannedPoint:
    """The one point of a trace plan (InputError when the window holds no request)."""
    window = load.get("window") or {}
    start = float(window.get("start_s", 0.0))
    duration = window.get("duration_s")
    count = window.get("count")
    if quick and quick_block.get("requests_per_point") is not None:
        limit = int(quick_block["requests_per_point"])
        count = limit if count is None else min(int(count), limit)
    times = trace.times_s
    first = next((i for i, t in enumerate(times) if t >= start), len(times))
    end = len(times)
    if duration is not None:
        stop = start + float(duration)
        end = next((i for i in range(first, len(times)) if times[i] >= stop), len(times))
    if count is not None:
        end = min(end, first + int(count))
    if end <= first:
        raise InputError(f"{where}:/load/window: no request of {trace.name} falls in the window "
                         f"(the trace spans {times[-1]:.3f} s)")
    scale = float(load.get("time_scale", 1.0))
    cap_in = load.get("max_input_tokens")
    zero = times[first]
    lengths, outputs, offsets = array("i"), array("i"), array("d")
    blocks: list[tuple[int, ...]] | None = [] if trace.hash_ids is not None else None
    for i in range(first, end):
        length = trace.inputs[i] if cap_in is None else min(trace.inputs[i], int(cap_in))
        lengths.append(max(1, length))
        outputs.append(max(1, min(trace.outputs[i], int(max_tokens))))
        offsets.append(round((times[i] - zero) * scale, 9))
        if blocks is not None and trace.hash_ids is not None:
            blocks.append(trace.hash_ids[i][:math.ceil(length / BLOCK_TOKENS)])
    span = offsets[-1]
    rate = (len(offsets) - 1) / span if span > 0 else float(len(offsets))
    return PlannedPoint(POINT_ID, 0, 0, lengths, offsets, rate=round(rate, 6),
                        outputs=outputs, hash_ids=blocks)
