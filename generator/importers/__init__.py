"""Importers: other tools' output into epbench results (`epbench import FORMAT PATH`).

Each importer maps what maps, lists what does not in `source.unmapped`, and marks the result
with `source.format`, so the site can say where a row came from.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from epcore.errors import InputError

FORMATS = ("mlperf-endpoints", "vllm-bench")


def import_results(fmt: str, path: Path, out: Path, submitter: str | None = None,
                   when: datetime | None = None) -> list[Path]:
    """Convert `path` (a file or folder in format `fmt`) into result files under `out`.

    `out` is a submitter's folder (results/<submitter>); each result is written to
    out/<endpoint-id>/<YYYY-MM-DD>-<workload-id>-<run8>.json. Returns the written paths.
    `when` (from --date) is the run's date for sources that do not carry one; an importer
    never guesses it.
    """
    if fmt == "mlperf-endpoints":
        from generator.importers.mlperf_endpoints import convert
    elif fmt == "vllm-bench":
        from generator.importers.vllm_bench import convert
    else:
        raise InputError(f"unknown import format {fmt!r}: use one of {', '.join(FORMATS)}")
    from generator.importers.common import write_results

    results = convert(path, when)
    return write_results(results, out, submitter)


__all__ = ["FORMATS", "import_results"]
