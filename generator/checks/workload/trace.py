"""A trace workload can be replayed: the trace file it names is in workloads/traces/, has the
sha256 the workload gives, parses line by line, and its window holds requests
(epbench.core.trace_plan, the code the runner plans with).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from epbench.core.errors import InputError
from epbench.core.findings import Finding
from epbench.core.trace_plan import load_trace, project_root, trace_point
from epbench.generator.checks.base import check

TRACE = check(
    "workload.trace", "reject",
    "a trace workload names a trace file under workloads/traces/ with its sha256, the file "
    "parses, and the window holds requests",
    "commit the trace file beside the workload and put its `sha256sum` in load.trace.sha256",
)


def check_trace_workload(document: dict[str, Any], display: str, path: Path) -> list[Finding]:
    """One finding when a `pattern: trace` workload cannot be planned, else none."""
    load = document.get("load") or {}
    if load.get("pattern") != "trace":
        return []
    try:
        trace = load_trace(load["trace"], project_root(path), display)
        trace_point(load, trace, int(document["prompts"]["max_tokens"]),
                    document.get("quick") or {}, False, display)
    except InputError as exc:
        text, pointer = str(exc), "/load/trace"
        if text.startswith(f"{display}:/"):  # the workload's own pointer: said once
            pointer, _, text = text[len(display) + 1:].partition(": ")
        return [TRACE.at(display, pointer, text[:500])]
    return []
