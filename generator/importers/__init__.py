"""Importers: other tools' output into epbench results (`epbench import FORMAT PATH`).

Each importer maps what maps, lists what does not in `source.unmapped`, and marks the result
with `source.format`, so the site can say where a row came from. IMPORTERS registers them by
kind: the command line reads its FORMAT choices and their help from it. An importer's module
(loaded on use, so `epbench --help` stays fast) has `convert(path) -> list[result]`; one that
writes workloads instead (`writes="workloads"`: BFCL) has `write(path, out, sample, seed)`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from epbench.core.errors import InputError


@dataclass(frozen=True)
class Importer:
    """One import format: its kind (the FORMAT argument), what PATH is, the module converting."""

    kind: str
    reads: str
    module: str
    writes: str = "results"  # or "workloads"

    def convert(self, path: Path, when: datetime | None = None) -> list[dict[str, Any]]:
        """The results in `path`; `when` (from --date) dates a source that records no date."""
        results: list[dict[str, Any]] = importlib.import_module(self.module).convert(path, when)
        return results


IMPORTERS: dict[str, Importer] = {
    importer.kind: importer
    for importer in (
        Importer("mlperf-endpoints", "an MLPerf Endpoints submission folder (or one inside it)",
                 "epbench.generator.importers.mlperf_endpoints"),
        Importer("vllm-bench", "a file written by `vllm bench serve --save-result`",
                 "epbench.generator.importers.vllm_bench"),
        Importer("bfcl", "the bfcl-eval wheel or its data folder (writes workloads to --out)",
                 "epbench.generator.importers.bfcl", writes="workloads"),
    )
}
FORMATS = tuple(IMPORTERS)


def import_results(fmt: str, path: Path, out: Path, submitter: str | None = None,
                   when: datetime | None = None) -> list[Path]:
    """Convert `path` (a file or folder in format `fmt`) into result files under `out`.

    `out` is a submitter's folder (results/<submitter>); each result is written to
    out/<endpoint-id>/<YYYY-MM-DD>-<workload-id>-<run8>.json. Returns the written paths.
    `when` (from --date) is the run's date for sources that do not carry one; an importer
    never guesses it.
    """
    importer = IMPORTERS.get(fmt)
    if importer is None:
        raise InputError(f"unknown import format {fmt!r}: use one of {', '.join(FORMATS)}")
    from epbench.generator.importers.common import write_results

    return write_results(importer.convert(path, when), out, submitter)


def import_workloads(
    fmt: str, path: Path, out: Path, sample: int | None = None, seed: int = 0,
    echo: Callable[[str], None] | None = None,
) -> list[Path]:
    """Convert `path` into workload files under `out` (importers with writes="workloads");
    `echo` is told what was left out and why."""
    importer = IMPORTERS.get(fmt)
    if importer is None or importer.writes != "workloads":
        raise InputError(f"{fmt!r} does not import workloads")
    written: list[Path] = importlib.import_module(importer.module).write(
        path, out, sample, seed, echo=echo)
    return written


__all__ = ["FORMATS", "IMPORTERS", "Importer", "import_results", "import_workloads"]
