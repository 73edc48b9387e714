"""What the site makes of results written before the layering (tests/data/before-layers).

The folder holds two runs made by the code of commit 79ddc47 against the emulator (--quick
chat-short and retail-refund: each run's result.json, events.jsonl and plan.json under runs/),
the same results as `epbench submit` of that commit placed them under results/, and the
endpoint and workload files they were run with. `snapshot()` builds the site tables from
them and each result page's point rows, as plain JSON.

expected.json was written by that commit's code:

    git worktree add /tmp/before 79ddc47
    PYTHONPATH=/tmp/before python tests/tools/before_layers.py \
        > tests/data/before-layers/expected.json

tests/generator/test_before_layers.py runs `snapshot()` with the current code and compares.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "data" / "before-layers"


def snapshot() -> dict[str, Any]:
    """{"tables": {name: records}, "run_pages": {run_id: point rows}} from DATA."""
    from epbench.generator import render
    from epbench.generator.tables import TABLE_NAMES, build_tables

    try:
        from epbench.generator.plain_json import records
    except ImportError:  # the code before the site generator's split (commit 79ddc47)
        from epbench.generator.tables import records  # type: ignore[attr-defined,no-redef]

    with tempfile.TemporaryDirectory(prefix="epbench-before-") as tmp:
        project = Path(tmp) / "project"
        for name in ("results", "endpoints", "workloads"):
            shutil.copytree(DATA / name, project / name)
        tables = build_tables(project / "results", project)
        out: dict[str, Any] = {
            "tables": {name: records(getattr(tables, name)) for name in TABLE_NAMES},
            "findings": sorted([Path(f.file).name, f.pointer, f.check, f.severity]
                               for f in tables.report.findings),
            "run_pages": {},
        }
        on_front = (render.frontier_by_run(tables.points)
                    if hasattr(render, "frontier_by_run") else {})
        for row in records(tables.runs):
            row["frontier"] = on_front.get(row["run_id"], [])
            path = project / row["result_path"]
            doc = json.loads(path.read_text(encoding="utf-8"))
            context = render.result_context(doc, row, root="../../")
            out["run_pages"][row["run_id"]] = context["points"]
    # result_path and page are relative to the results folder; nothing else names tmp.
    return json.loads(json.dumps(out, ensure_ascii=False, allow_nan=False))


if __name__ == "__main__":  # pragma: no cover - writes the expected file from old code
    json.dump(snapshot(), sys.stdout, indent=1, ensure_ascii=False, sort_keys=True)
    sys.stdout.write("\n")
