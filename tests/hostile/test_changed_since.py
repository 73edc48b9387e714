"""Finding 2: `--changed-since` could be made to check nothing. A pull request in a real git
repository adds an invalid result under a name git would quote (non-ASCII, a tab, a quote),
replaces a result with a link to /etc/passwd, adds a linked folder, a stray file and a hidden
one, and deletes a result. Every one of them must be reported; and git output the check
cannot read stops it instead of passing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from attack import SERVICED, epbench, git, make_project, repository

from epbench.core.errors import InputError
from epbench.generator.changes import parse_name_status

EMULATED = "carol/emulator/2026-11-23-chat-short-d4e5f6a7.json"
AGENTIC = "bob/acme-llama-8b/2026-11-22-tool-lookup-c3d4e5f6.json"
QUOTED = 'alice/acme-llama-8b/ré\tsult "q".json'


def hostile_branch(tmp_path: Path) -> Path:
    project = repository(make_project(tmp_path / "project"))
    git(project, "checkout", "-q", "-b", "pr")
    results = project / "results"
    (results / QUOTED).write_text(json.dumps({"kind": "result", "run_id": "x"}))
    (results / SERVICED).unlink()
    (results / SERVICED).symlink_to("/etc/passwd")
    (results / "mallory").symlink_to("/etc")
    (results / "alice" / "notes.txt").write_text("hello")
    (results / "alice" / ".hidden.json").write_text("{}")
    (results / EMULATED).unlink()
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "hostile")
    return project


def test_every_hostile_change_on_the_branch_is_reported(tmp_path: Path) -> None:
    project = hostile_branch(tmp_path)
    done = epbench("validate", "--changed-since", "main", "--format", "json", cwd=project)
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads(done.stdout)
    found = {(os.path.relpath(project / f["file"], project), f["check"])
             for f in report["findings"]}
    assert any(name == "results/" + QUOTED and check.startswith("schema.")
               for name, check in found)
    assert ("results/" + SERVICED, "file.type-change") in found
    assert ("results/mallory", "file.symlink") in found
    assert ("results/alice/notes.txt", "file.unknown") in found
    assert ("results/alice/.hidden.json", "file.hidden") in found
    assert ("results/" + EMULATED, "file.deleted") in found
    # the untouched result is not checked again
    assert not any(name == "results/" + AGENTIC for name, _ in found)


def test_a_clean_branch_checks_only_what_it_adds(tmp_path: Path) -> None:
    project = repository(make_project(tmp_path / "project"))
    git(project, "checkout", "-q", "-b", "pr")
    done = epbench("validate", "--changed-since", "main", cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1].startswith("ok: 0 files checked")


@pytest.mark.parametrize("output", [
    b"U\0results/a.json\0",          # unmerged: git cannot say what the file is
    b"X\0results/a.json\0",          # unknown change
    b"B\0results/a.json\0",          # broken pairing
    b"Z\0results/a.json\0",          # a letter git does not print
    b"A\0",                          # a status without its path
    b"R100\0results/a.json\0",       # a rename without its second path
    b"results/a.json\0",             # --name-only output, not --name-status
])
def test_git_output_the_check_cannot_read_stops_it(output: bytes) -> None:
    with pytest.raises(InputError, match="nothing was checked"):
        parse_name_status(output, "main")


def test_names_git_would_quote_come_back_exactly() -> None:
    name = 'results/ré\tsult "q"\\.json'
    assert parse_name_status(f"A\0{name}\0M\0results/b.json\0".encode(), "main") == [
        ("A", name), ("M", "results/b.json")]
    assert parse_name_status(b"R097\0results/old.json\0results/new.json\0", "main") == [
        ("R", "results/new.json"), ("D", "results/old.json")]


@pytest.mark.parametrize("companion", [".sigstore.json", ".events.jsonl.gz"])
def test_a_branch_that_changes_only_a_results_bundle_or_journal_checks_that_result(
    tmp_path: Path, companion: str,
) -> None:
    project = repository(make_project(tmp_path / "project"))
    git(project, "checkout", "-q", "-b", "pr")
    result = project / "results" / SERVICED
    result.with_name(result.stem + companion).write_bytes(b"{}")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "a companion file alone")
    done = epbench("validate", "--changed-since", "main", "--format", "json", cwd=project)
    report = json.loads(done.stdout)
    checked = [os.path.relpath(project / f["path"], project) for f in report["files"]]
    assert checked == ["results/" + SERVICED], done.stdout[:2000]
