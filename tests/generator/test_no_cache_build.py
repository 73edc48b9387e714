"""A build without a cache (`epbench build --no-cache`) and `epbench validate` never go through
the build cache's machinery: no module of `epbench.generator.build` is imported by them, no
shard is read or written, and the user cache holds no build folder afterwards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import epbench.generator.build.build_cache as build_cache
import epbench.generator.build.row_store as row_store
from epbench.core.paths import user_cache_dir
from epbench.generator.site import build_site
from tests.browser.site_data import make_project
from tests.conftest import ROOT

PROBE = """
import json, sys
from pathlib import Path
from epbench.generator.tables import build_tables
from epbench.generator.validate import validate_paths
project = Path(sys.argv[1])
tables = build_tables(project / "results", project)
report = validate_paths([project / "results"])
print(json.dumps({
    "runs": len(tables.runs), "files": len(report.files),
    "build_modules": sorted(m for m in sys.modules if m.startswith("epbench.generator.build")),
}))
"""


def test_tables_and_validation_without_a_cache_import_nothing_of_the_build_machinery(
        tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", generated=6)
    done = subprocess.run([sys.executable, "-c", PROBE, str(project)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "EPBENCH_CACHE_DIR": str(tmp_path / "cache")},
                          check=True)
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["runs"] > 6 and seen["files"] > 6  # the tables were built, the files checked
    assert seen["build_modules"] == []


def test_a_build_with_no_cache_reads_and_writes_no_shard(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a build with no cache used the build cache")

    for module, name in ((row_store, "save"), (row_store, "load"),
                         (build_cache.BuildCache, "open"), (build_cache.BuildCache, "stamp"),
                         (build_cache.BuildCache, "save")):
        monkeypatch.setattr(module, name, refuse)
    project = make_project(tmp_path / "p", generated=6)
    site = build_site(project / "results", tmp_path / "_site", project, "", incremental=False)
    assert (site / "index.html").is_file()
    assert len(list((site / "runs").glob("*/index.html"))) > 6  # one page per result
    assert not (user_cache_dir() / "build").exists()
