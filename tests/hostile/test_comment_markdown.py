"""Finding 4: the bot posted whatever Markdown the pull request wrote. On `pull_request`
GitHub runs the PR's own copy of submission.yml, so its artifact can say anything. Here the
artifact is forged as such a PR would (a report.md saying "passed" with @-mentions, an image
and a link; a report.json claiming no blocking finding, with markup in every field and fields
no report has), and the comment job is run step by step with a stand-in `gh`: the posted body
is rendered by the base branch's code from the known fields only, with its own verdict, and
says that the checks ran on the PR's own workflow file."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from epbench.generator.comment import WORKFLOW_NOTE
from tests import workflow_steps
from tests.conftest import need

PAYLOAD = "@octocat ![pwn](https://evil.example/x.png) [ok](https://evil.example) <img src=x>"
FORGED_MD = "## epbench validation: passed\n\nLGTM " + PAYLOAD + "\nFORGED-MARKDOWN-SENTINEL\n"
FORGED: dict[str, Any] = {
    "kind": "validation-report", "schema_version": 1, "blocking": False,
    "summary": {"files": 1, "passed": 1, "flagged": 0, "rejected": 0,
                "findings": {"reject": 0, "reject-point": 0, "flag": 0, "warn": 0}},
    "comment": "FORGED-FIELD-SENTINEL " + PAYLOAD,
    "files": [{"path": "results/eve/x/" + PAYLOAD + ".json", "kind": "<script>",
               "status": "passed", "endpoint": PAYLOAD, "submitter": "@maintainers",
               "html": "FORGED-FIELD-SENTINEL"}],
    "findings": [
        {"file": "results/eve/x/" + PAYLOAD + ".json", "pointer": "/notes",
         "check": "secret.suspected", "severity": "reject", "message": PAYLOAD,
         "fix": "ping @security-team", "extra": "FORGED-FIELD-SENTINEL"},
        {"file": "x", "pointer": "/", "check": "[ok](https://evil.example)",
         "severity": "warn", "message": "a finding with a forged check id", "fix": ""},
        {"file": "x", "pointer": "/", "check": "fine.check", "severity": "approved",
         "message": "a finding with a forged severity", "fix": ""},
    ],
}


@pytest.fixture
def forged_artifact(tmp_path: Path) -> dict[str, str]:
    if shutil.which("jq") is None:
        need("jq is not installed (apt-get install jq; GitHub's runners have it)")
    env = workflow_steps.comment_env(tmp_path, FORGED)
    (tmp_path / "report" / "report.md").write_text(FORGED_MD)
    return env


def assert_inert(body: str) -> None:
    """Nothing in the body can mention, link, embed or mark up anything from the artifact."""
    assert "@" not in body
    ours = "[workflow run](https://github.com/o/r/actions/runs/1)"
    assert body.count(ours) == 1 and "](" not in body.replace(ours, "")
    assert "https://evil" not in body and "www." not in body
    assert "![" not in body and "<img" not in body and "<script" not in body
    assert "FORGED-MARKDOWN-SENTINEL" not in body and "FORGED-FIELD-SENTINEL" not in body


def test_a_forged_report_is_rerendered_with_its_own_verdict_and_no_live_markup(
    tmp_path: Path, forged_artifact: dict[str, str],
) -> None:
    job = workflow_steps.run_comment_job(forged_artifact, tmp_path)
    assert [p.returncode for p in job.steps] == [0, 0, 0], [p.stderr for p in job.steps]
    assert job.body is not None
    assert_inert(job.body)
    assert "epbench validation: changes needed" in job.body  # recomputed, not "passed"
    assert "epbench validation: passed" not in job.body
    assert "a finding with a forged check id" not in job.body  # unknown fields dropped
    assert "a finding with a forged severity" not in job.body
    assert WORKFLOW_NOTE not in job.body  # this pull request did not touch .github/


def test_a_pull_request_that_changes_github_gets_the_note_first(
    tmp_path: Path, forged_artifact: dict[str, str],
) -> None:
    env = {**forged_artifact, "FAKE_FILES": "results/a.json .github/workflows/submission.yml",
           "FAKE_TOTAL": "2"}
    job = workflow_steps.run_comment_job(env, tmp_path)
    assert job.body is not None
    assert job.body.splitlines()[1] == WORKFLOW_NOTE
    assert_inert(job.body)


def test_a_file_list_github_cut_short_counts_as_a_github_change(
    tmp_path: Path, forged_artifact: dict[str, str],
) -> None:
    job = workflow_steps.run_comment_job({**forged_artifact, "FAKE_TOTAL": "3001"}, tmp_path)
    assert job.body is not None and WORKFLOW_NOTE in job.body


def test_a_report_that_links_to_another_file_is_not_read(
    tmp_path: Path, forged_artifact: dict[str, str],
) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text('{"kind": "validation-report", "files": [], "findings": [{"file": '
                      '"TOKEN-SENTINEL", "pointer": "", "check": "a.b", "severity": "warn", '
                      '"message": "m", "fix": ""}]}')
    report = tmp_path / "report" / "report.json"
    report.unlink()
    report.symlink_to(secret)
    job = workflow_steps.run_comment_job(forged_artifact, tmp_path)
    assert job.body is not None
    assert "TOKEN-SENTINEL" not in job.body
    assert "left no readable report" in job.body
