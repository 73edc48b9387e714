"""Imported BFCL workloads played by the emulator, and the quality gate (issue 14, "What it
must show" 1 and 3).

Import from the committed fixture and `epbench validate` the result; with no injected errors
every task of the shipped BFCL sample succeeds; with `wrong_arguments: 0.2` success drops and
the gate marks that endpoint below the model's reference (the error-free endpoint, marked as
the vendor's own), both rates with their intervals on its run page.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from epbench.cli import main
from epbench.core.metrics.quality import REASON
from epbench.generator import quality
from epbench.generator.render import render, result_context
from tests.conftest import ROOT, need

FIXTURE = ROOT / "tests" / "data" / "bfcl" / "bfcl_eval-2026.3.23-data.zip"
SHIPPED = ROOT / "workloads" / "agentic" / "bfcl"
FAST = {"ttft_ms": 1, "tpot_ms": 0.2, "prefill_ms_per_1k_tokens": 1, "jitter": 0}
PLAYED = ("bfcl-simple-python", "bfcl-parallel")


def test_import_writes_a_valid_workload_for_every_category(tmp_path: Path):
    runner = CliRunner()
    out = tmp_path / "agentic"
    done = runner.invoke(main, ["import", "bfcl", str(FIXTURE), "--out", str(out),
                                "--sample", "30", "--seed", "3"])
    assert done.exit_code == 0, done.output
    written = sorted(out.glob("*.yaml"))
    assert len(written) == 12
    checked = runner.invoke(main, ["validate", *map(str, written)])
    assert checked.exit_code == 0, checked.output
    doc = yaml.safe_load((out / "bfcl-simple-python.yaml").read_text("utf-8"))
    assert doc["quality"] is True and doc["source"]["version"] == "2026.3.23"
    assert doc["source"]["license"] == "Apache-2.0"
    assert doc["source"]["sample"] == {"n": 30, "seed": 3, "of": 400}
    names = doc["source"]["function_names"]["names"]
    assert names and all("." not in k and k == v.replace(".", "_") for k, v in names.items())


def run_bfcl(tmp_path: Path, endpoint_id: str, agentic: dict[str, Any], reference: bool
             ) -> list[dict[str, Any]]:
    try:
        from epbench.runner.entry import run_command
        from tests.emulator_fixture import deep_merge, emulator_endpoint, running_emulator
    except ImportError as exc:
        need(f"the emulator or runner is not importable: {exc}")
    settings = deep_merge(FAST, {"agentic": agentic})
    with running_emulator(settings, workload_dirs=[SHIPPED]) as emu:
        endpoint = emulator_endpoint(settings)
        endpoint.pop("emulator")
        endpoint.update(id=endpoint_id, base_url=emu.base_url)
        endpoint["model"] = {"name": "emulated-8b", "version": "1", "reference": reference}
        path = tmp_path / f"{endpoint_id}.yaml"
        path.write_text(yaml.safe_dump(endpoint), encoding="utf-8")
        out = []
        for wid in PLAYED:
            results = run_command(endpoint=path, workload=SHIPPED / f"{wid}.yaml",
                                  out=tmp_path / "runs", resume=None, quick=False,
                                  client_region=None, shard=None, progress=False)
            out += [json.loads(Path(p).read_text("utf-8")) for p in results]
    return out


def _rows(docs: list[dict[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    agentic, runs = [], []
    for doc in docs:
        rate = doc["agentic"]["success_rate"]
        ident = {"run_id": doc["run_id"], "endpoint_id": doc["endpoint"]["id"],
                 "model": doc["endpoint"]["model"]["name"],
                 "model_version": doc["endpoint"]["model"].get("version"),
                 "workload_id": doc["workload"]["id"], "date": doc["started_at"][:10],
                 "rankable": True, "result_path": "results/x.json", "disclosure_score": 1}
        agentic.append({**ident, "success_rate": rate["value"], "success_n": rate["n"],
                        "success_ci_low": rate["ci95"][0], "success_ci_high": rate["ci95"][1],
                        "quality_workload": bool(doc["workload"].get("quality")),
                        "reference_endpoint": bool(doc["endpoint"]["model"].get("reference")),
                        "source_category": doc["workload"]["source"]["category"]})
        runs.append(dict(ident))
    return pd.DataFrame(agentic), pd.DataFrame(runs)


@pytest.mark.integration
@pytest.mark.slow
def test_bfcl_tasks_all_succeed_without_errors_and_the_gate_catches_wrong_arguments(
    tmp_path: Path,
):
    clean = run_bfcl(tmp_path, "vendor", {}, reference=True)
    for doc in clean:
        assert doc["agentic"]["success_rate"]["value"] == 1.0, doc["workload"]["id"]
        assert doc["workload"]["quality"] is True
    degraded = run_bfcl(tmp_path, "degraded", {"wrong_arguments": 0.2}, reference=False)
    for doc in degraded:
        assert doc["agentic"]["success_rate"]["value"] < 0.95, doc["workload"]["id"]
        assert doc["agentic"]["calls"]["schema_mismatch"] > 0
    written = sorted((tmp_path / "runs").glob("*/result.json"))
    assert len(written) == 2 * len(PLAYED)
    checked = CliRunner().invoke(main, ["validate", *map(str, written)])
    assert checked.exit_code == 0 and "0 flagged, 0 rejected" in checked.output, checked.output
    agentic, runs = _rows(clean + degraded)
    quality.apply_gate(agentic, runs)
    below = runs[runs["endpoint_id"] == "degraded"]
    assert below["quality_below"].all() and not below["rankable"].any()
    assert all(REASON in r for r in below["unranked_reasons"])
    vendor = runs[runs["endpoint_id"] == "vendor"]
    assert vendor["rankable"].all() and vendor["quality"].isna().all()
    print({r["workload_id"]: (r["success_rate"], r["quality"]) for _, r in agentic.iterrows()})
    row = below.iloc[0].to_dict()
    doc = next(d for d in degraded if d["run_id"] == row["run_id"])
    page = render("result.html.j2", **result_context(doc, row, root="../../"))
    gated = agentic[agentic["run_id"] == row["run_id"]].iloc[0]
    own = f"[{gated['success_ci_low']:.3f}, {gated['success_ci_high']:.3f}]"
    ref = f"[{gated['quality_reference_low']:.3f}, {gated['quality_reference_high']:.3f}]"
    assert own in page and ref in page
    assert "tool-call quality below the reference" in page
    assert "simple_python" in page  # the BFCL-by-category section, with BFCL's own names


def test_a_data_folder_imports_the_same_as_the_wheel(tmp_path: Path):
    import zipfile

    from epbench.generator.importers.bfcl import import_bfcl

    zipfile.ZipFile(FIXTURE).extractall(tmp_path / "unpacked")
    from_zip = import_bfcl(FIXTURE, tmp_path / "a", categories=("live_parallel",))
    from_dir = import_bfcl(tmp_path / "unpacked", tmp_path / "b", categories=("live_parallel",))
    assert from_zip[0].read_text("utf-8") == from_dir[0].read_text("utf-8")
    assert "version: 2026.3.23" in from_dir[0].read_text("utf-8")


def test_a_file_that_is_not_a_wheel_is_one_clear_error(tmp_path: Path):
    bad = tmp_path / "bfcl.whl"
    bad.write_text("not a zip", encoding="utf-8")
    done = CliRunner().invoke(main, ["import", "bfcl", str(bad), "--out", str(tmp_path)])
    assert done.exit_code == 1
    assert f"{bad}: not a wheel (zip) file" in done.output


def test_the_shipped_sample_is_what_the_importer_writes_and_validates(tmp_path: Path):
    from epbench.core.paths import resolve_workload

    runner = CliRunner()
    done = runner.invoke(main, ["import", "bfcl", str(FIXTURE), "--out", str(tmp_path),
                                "--sample", "50", "--seed", "1"])
    assert done.exit_code == 0, done.output
    shipped = sorted(SHIPPED.glob("*.yaml"))
    assert [p.name for p in shipped] == sorted(p.name for p in tmp_path.glob("*.yaml"))
    for path in shipped:
        assert path.read_text("utf-8") == (tmp_path / path.name).read_text("utf-8"), path.name
    checked = runner.invoke(main, ["validate", *map(str, shipped)])
    assert checked.exit_code == 0, checked.output
    assert resolve_workload("bfcl-parallel", cwd=ROOT) == SHIPPED / "bfcl-parallel.yaml"
