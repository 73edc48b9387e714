"""The three renderings of a validation report: text, JSON (schema-checked), Markdown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from epbench.core.schema import check_schema
from epbench.generator.report import MARKER, md
from epbench.generator.validate import validate_paths
from tests.generator.checks.test_validate_results import AGENTIC, SERVICED, load, make_project, save


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """A tree with a passed, a flagged and a rejected result."""
    project = make_project(tmp_path)
    flagged = load(project, AGENTIC)
    flagged["agentic"]["pass_hat_k"]["1"] = 0.01
    save(project, AGENTIC, flagged)
    rejected = load(project, SERVICED)
    rejected["points"][1]["errors"]["http_5xx"] = 0
    rejected["started_at"] = "2999-01-01T00:00:00Z"
    save(project, SERVICED, rejected)
    return project


def test_text_has_one_line_per_finding_then_a_summary(mixed: Path) -> None:
    report = validate_paths([mixed / "results"])
    lines = report.render("text").splitlines()
    assert len(lines) == len(report.findings) + 1
    assert lines[-1] == ("FAILED: 4 files checked: 2 passed, 1 flagged, 1 rejected "
                         "(3 reject, 1 reject-point, 1 flag, 1 warn)")  # future, order, path
    future = next(line for line in lines if "[date.future]" in line)
    assert future.startswith(f"{mixed / 'results' / SERVICED}:/started_at: reject: ")
    assert " -- set the real run date" in future


def test_json_matches_the_validation_report_schema(mixed: Path) -> None:
    document = json.loads(validate_paths([mixed / "results"]).render("json"))
    assert check_schema(document, "validation-report", "report.json") == []
    assert document["kind"] == "validation-report"
    assert document["blocking"] is True
    statuses = {Path(f["path"]).name: f["status"] for f in document["files"]}
    assert statuses[Path(SERVICED).name] == "rejected"
    assert statuses[Path(AGENTIC).name] == "flagged"
    assert document["summary"]["files"] == 4


def test_markdown_is_a_pull_request_comment_a_contributor_can_act_on(mixed: Path) -> None:
    markdown = validate_paths([mixed / "results"]).render("markdown")
    lines = markdown.splitlines()
    assert lines[0] == MARKER
    assert lines[1] == "## epbench validation: changes needed"
    assert "### Files" in markdown and "### What failed" in markdown
    assert "### Flags and warnings" in markdown
    # what was added: endpoint, workload and submitter of each file
    assert "| acme-llama-8b | tool-lookup | bob |" in markdown
    failed = markdown.split("### What failed")[1].split("###")[0]
    assert "date.future" in failed and "set the real run date" in failed
    assert "derived.error-sum" in failed and "exactly one error class" in failed


def test_markdown_for_a_clean_tree_says_it_passed(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    markdown = validate_paths([project / "results" / AGENTIC]).render("markdown")
    assert markdown.splitlines()[1] == "## epbench validation: passed"
    assert "What failed" not in markdown


def test_md_escapes_every_markup_character() -> None:
    assert md("<b>|`x`|</b> & [a](b) *c* _d_") == (
        "&lt;b&gt;&#124;&#96;x&#96;&#124;&lt;/b&gt; &amp; &#91;a&#93;(b) &#42;c&#42; &#95;d&#95;"
    )
    assert md("line\nbreak\\") == "line&#92;nbreak&#92;"


def test_an_unknown_format_is_refused() -> None:
    from epbench.generator.report import Report

    with pytest.raises(ValueError, match="yaml"):
        Report().render("yaml")


def test_a_huge_report_still_fits_in_one_pull_request_comment(tmp_path: Path) -> None:
    from epbench.core.findings import Finding
    from epbench.generator.report import MD_MAX_CHARS, FileStatus, Report

    report = Report()
    for i in range(3000):
        report.files.append(FileStatus(f"results/x/{i}.json", None, "rejected"))
        report.findings.append(Finding(f"results/x/{i}.json", "", "file.syntax", "reject",
                                       "m" * 300, "f" * 200))
    markdown = report.render("markdown")
    assert len(markdown) < 65_536
    assert "more (run `epbench validate` locally" in markdown
    assert MD_MAX_CHARS < 65_536
    assert "... and 2900 more files." in markdown


def test_a_local_report_names_files_relative_to_the_project_not_by_absolute_path() -> None:
    from epbench.core.paths import project_dir
    from epbench.generator.validate import validate_paths

    root = project_dir()
    report = validate_paths([root / "endpoints" / "emulator.yaml"])
    text = report.render("markdown")
    assert "<code>endpoints/emulator.yaml</code>" in text
    assert str(root) not in text
