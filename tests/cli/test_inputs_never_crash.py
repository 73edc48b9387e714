"""A new user's input mistakes: unquoted YAML dates, several problems in one endpoint file,
YAML syntax errors, and a workload folder with other files in it. Each gets a line naming the
field (or line and column), never a crash or a raw oneOf message."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import epbench.runner
from epbench.core.documents import DocumentError, load_document
from epbench.core.errors import InputError
from epbench.generator.validate import validate_paths
from epbench.runner.agentic.semantics import validate_workload_semantics
from epbench.runner.endpoint import load_endpoint
from tests.conftest import ROOT

EMULATOR = (ROOT / "endpoints" / "emulator.yaml").read_text("utf-8")


def test_an_unquoted_effective_date_is_read_as_the_string_it_was_written_as(
        tmp_path: Path) -> None:
    path = tmp_path / "emulator.yaml"
    path.write_text(EMULATOR.replace('effective_date: "2026-01-01"', "effective_date: 2026-01-01"))
    assert load_endpoint(path).doc["pricing"]["effective_date"] == "2026-01-01"
    report = validate_paths([path])
    assert not report.blocking, [f.line() for f in report.findings]


def test_an_unquoted_date_in_a_workload_state_validates_and_stays_a_string(tmp_path: Path) -> None:
    text = (ROOT / "workloads/agentic/retail-refund.yaml").read_text("utf-8")
    text = text.replace("  refunds: []", "  refunds: []\n  since: 2026-01-05", 1)
    path = tmp_path / "retail-refund.yaml"
    path.write_text(text)
    assert load_document(path)["state"]["since"] == "2026-01-05"
    report = validate_paths([path], workload_semantics=validate_workload_semantics)
    assert not report.blocking, [f.line() for f in report.findings]


def test_yaml_tags_for_values_json_lacks_are_refused_with_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "e.yaml"
    path.write_text("kind: endpoint\nid: !!binary aGVsbG8=\n")
    with pytest.raises(DocumentError) as caught:
        load_document(path)
    assert "line 2 column 5" in str(caught.value)


def test_run_lists_every_problem_of_an_endpoint_file_each_naming_its_field(tmp_path: Path) -> None:
    path = tmp_path / "emulator.yaml"
    path.write_text(EMULATOR.replace("api: openai-chat", "api: opneai")
                    .replace("usd_per_hour: 2.0", 'usd_per_hour: "two"'))
    with pytest.raises(InputError) as caught:
        load_endpoint(path)
    text = str(caught.value)
    assert "2 problems" in text
    assert f"{path}:/api: 'opneai' is not one of" in text
    assert f"{path}:/pricing/usd_per_hour: 'two' is not of type 'number'" in text
    assert "is not valid under any of the given schemas" not in text


def test_a_price_card_of_no_known_type_names_the_fields_of_the_closest_card(
        tmp_path: Path) -> None:
    path = tmp_path / "emulator.yaml"
    path.write_text(EMULATOR.replace("usd_per_hour: 2.0", "type: hourly"))
    report = validate_paths([path])
    lines = [f.line() for f in report.findings]
    assert not any("is not valid under any" in line for line in lines), lines
    assert any("'type' was unexpected" in line and "hourly" in line for line in lines), lines
    assert any("'usd_per_hour' is a required property" in line for line in lines), lines


def test_a_yaml_syntax_error_gets_a_yaml_fix_with_its_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "e.yaml"
    path.write_text("kind: endpoint\nid: [a\n  b: c\n")
    finding = next(f for f in validate_paths([path]).findings if f.check == "file.syntax")
    assert "line 3 column 4" in finding.message
    assert "fix the YAML syntax" in finding.fix and "line 3 column 4" in finding.fix
    assert "JSON" not in finding.fix


def test_the_emulator_loads_only_the_workload_it_was_asked_for(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "weather.yaml").write_text(
        (ROOT / "workloads/agentic/weather-single-call.yaml").read_text("utf-8"))
    (folder / "draft.yaml").write_text("kind: agentic-workload\nid: [\n")
    done = subprocess.run(
        [sys.executable, "-m", "epbench.cli", "run", "--workload", str(folder / "weather.yaml"),
         "--quick", "--no-progress", "--out", str(tmp_path / "runs")],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(Path(epbench.runner.__file__).resolve().parents[1])},
    )
    assert done.returncode == 0, done.stderr
    assert "draft.yaml" not in done.stderr + done.stdout
