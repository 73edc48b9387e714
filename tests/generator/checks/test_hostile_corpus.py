"""Hostile input: every file in tests/hostile/ (named `<expected check>__<case>`) and a few
generated at test time (100 MB, symlinks, hostile file names) gets its own specific finding,
blocks the pull request, never executes anything and never crashes the validator."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from epbench.generator.report import MARKER
from epbench.generator.validate import validate_paths
from tests.conftest import ROOT

CORPUS = ROOT / "tests" / "hostile"
CASES = sorted(p for p in CORPUS.iterdir()
               if "__" in p.name and p.suffix in (".json", ".yaml") and p.is_file())
PWNED = Path("/tmp/epbench-hostile-pwned")
_TMP_OK = [HealthCheck.function_scoped_fixture]


def test_the_corpus_holds_at_least_fifty_hostile_files() -> None:
    assert len(CASES) >= 50


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_each_hostile_file_gets_its_specific_finding(path: Path) -> None:
    expected = path.name.split("__")[0]
    report = validate_paths([path])
    checks = {f.check for f in report.findings}
    assert expected in checks, [f.line() for f in report.findings]
    assert "internal.error" not in checks
    assert report.blocking
    assert not PWNED.exists(), "a YAML tag executed code"


def test_a_100_mb_file_is_refused_by_its_size_without_reading_it(tmp_path: Path) -> None:
    big = tmp_path / "huge.json"
    with big.open("wb") as handle:
        handle.write(b'{"kind": "result", "notes": "')
        handle.truncate(100 * 1024 * 1024)
    report = validate_paths([big])
    assert [f.check for f in report.findings] == ["file.size"]
    assert "104857600 bytes" in report.findings[0].message


def test_a_real_file_just_over_5_mib_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "results" / "big.json"
    big.parent.mkdir()
    big.write_text(json.dumps({"kind": "result", "notes": "x" * (5 * 1024 * 1024)}))
    assert [f.check for f in validate_paths([big]).findings] == ["file.size"]


def test_a_symlink_is_refused_and_not_followed(tmp_path: Path) -> None:
    link = tmp_path / "results" / "passwd.json"
    link.parent.mkdir()
    link.symlink_to("/etc/passwd")
    report = validate_paths([tmp_path / "results"])
    assert [f.check for f in report.findings] == ["file.symlink"]


def test_a_fifo_named_like_a_result_is_refused_without_blocking(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    os.mkfifo(folder / "pipe.json")
    report = validate_paths([folder])
    assert [f.check for f in report.findings] == ["file.type"]


def test_hostile_file_names_cannot_inject_markup_or_break_lines(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "<img src=x onerror=alert(1)>.json").write_text("{}")
    (folder / "line\nbreak | `tick`.json").write_text("[]")
    report = validate_paths([folder])
    text = report.render("text")
    assert len(text.strip().splitlines()) == 3  # two findings and the summary
    markdown = report.render("markdown")
    assert "<img" not in markdown and "onerror=alert(1)>" not in markdown
    assert "`tick`" not in markdown


def test_the_markdown_report_over_the_corpus_carries_no_live_markup() -> None:
    markdown = validate_paths([CORPUS]).render("markdown")
    assert markdown.splitlines()[0] == MARKER
    lowered = markdown.lower()
    for payload in ("<script", "<img", "<!-- -->", "](", "javascript:"):
        assert payload not in lowered, payload
    # every table row has exactly its own cells: no pipe from a file splits a cell
    rows = [line for line in markdown.splitlines() if line.startswith("| ")]
    assert {line.count(" | ") for line in rows} == {5}


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "epbench.cli", "validate", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, env=env)


def test_the_cli_exits_1_on_the_corpus_with_one_line_per_finding_and_no_traceback() -> None:
    done = _cli(str(CORPUS))
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[-1].startswith("FAILED:")
    as_json = json.loads(_cli(str(CORPUS), "--format", "json").stdout)
    assert len(lines) - 1 == len(as_json["findings"]) >= len(CASES)
    assert all(": reject" in line or ": flag" in line or ": warn" in line for line in lines[:-1])


def test_the_cli_exits_0_on_the_valid_samples_and_1_when_one_is_broken(tmp_path: Path) -> None:
    from test_validate_results import SERVICED, make_project

    project = make_project(tmp_path)
    done = _cli(str(project / "results"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1].startswith("ok: 4 files checked")
    path = project / "results" / SERVICED
    path.write_text(path.read_text()[:100])
    done = _cli(str(project / "results"))
    assert done.returncode == 1
    assert "Traceback" not in done.stdout + done.stderr
    assert f"{path}:/: reject: [file.syntax]" in done.stdout


@settings(max_examples=60, deadline=None, suppress_health_check=_TMP_OK)
@given(data=st.binary(max_size=400), suffix=st.sampled_from([".json", ".yaml"]))
def test_random_bytes_never_crash_the_validator(tmp_path: Path, data: bytes, suffix: str) -> None:
    path = tmp_path / f"random{suffix}"
    path.write_bytes(data)
    report = validate_paths([path])
    assert "internal.error" not in {f.check for f in report.findings}
    assert report.blocking  # nothing random is a valid epbench document


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=20,
)


@settings(max_examples=60, deadline=None, suppress_health_check=_TMP_OK)
@given(value=json_values, kind=st.sampled_from(["result", "endpoint", "serving-workload"]))
def test_random_documents_of_a_known_kind_get_schema_findings_not_crashes(
    tmp_path: Path, value: object, kind: str
) -> None:
    path = tmp_path / "doc.json"
    doc = value if isinstance(value, dict) else {"value": value}
    path.write_text(json.dumps({**doc, "kind": kind}))
    report = validate_paths([path])
    checks = {f.check for f in report.findings}
    assert "internal.error" not in checks
    # an integer past 64 bits is refused by the loader, before the schema
    assert any(c.startswith("schema.") or c == "value.too-large" for c in checks)
