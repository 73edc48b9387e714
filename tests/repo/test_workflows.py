"""The security properties of .github/workflows/, read from the files themselves.

Pull requests come from strangers, so: no pull_request_target; no secrets where a pull request
can trigger; permissions declared for every workflow and job, write access only where a table
here allows it; every action pinned to a commit SHA with its version in a comment; checkouts
that do not keep the token; no `${{ }}` inside shell scripts; a comment workflow that never
checks out or runs anything; timeouts and concurrency groups everywhere.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from epbench.runner.matrix import MatrixJob
from tests import workflow_steps
from tests.conftest import ROOT, need

WORKFLOW_DIR = ROOT / ".github" / "workflows"
WORKFLOW_FILES = sorted(WORKFLOW_DIR.glob("*.yml"))
PR_TRIGGERS = {"pull_request", "pull_request_target", "pull_request_review",
               "pull_request_review_comment", "issue_comment"}
# The only write scopes any job holds, and where.
ALLOWED_WRITES = {
    ("benchmark.yml", "merge-and-propose"): {"contents", "pull-requests", "id-token",
                                             "attestations"},
    ("epbench-run.yml", "run"): {"id-token", "attestations"},
    ("pages.yml", "deploy"): {"pages", "id-token"},
    ("submission-comment.yml", "comment"): {"pull-requests"},
}
PINNED = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")
VERSION_COMMENT = re.compile(r"#\s*v\d+\.\d+\.\d+\s*$")


def load(path: Path) -> dict[str, Any]:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(document, dict), path
    # YAML 1.1 reads the key `on` as True.
    if True in document:
        document["on"] = document.pop(True)
    return document


def triggers(document: dict[str, Any]) -> set[str]:
    on = document["on"]
    if isinstance(on, str):
        return {on}
    if isinstance(on, list):
        return set(on)
    return set(on)


def steps(document: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(job_id, step) for job_id, job in document["jobs"].items()
            for step in job.get("steps", [])]


WORKFLOWS = {path.name: load(path) for path in WORKFLOW_FILES}
ids = pytest.mark.parametrize("name", sorted(WORKFLOWS))


def test_the_six_workflows_are_there() -> None:
    assert sorted(WORKFLOWS) == [
        "benchmark.yml", "ci.yml", "epbench-run.yml", "pages.yml", "submission-comment.yml",
        "submission.yml",
    ]


@ids
def test_no_workflow_uses_pull_request_target(name: str) -> None:
    assert "pull_request_target" not in triggers(WORKFLOWS[name])
    assert "pull_request_target" not in (WORKFLOW_DIR / name).read_text()


@ids
def test_workflows_a_pull_request_can_trigger_never_mention_secrets(name: str) -> None:
    if not triggers(WORKFLOWS[name]) & PR_TRIGGERS:
        return
    text = yaml.safe_dump(WORKFLOWS[name])  # the workflow without its comments
    assert "secrets." not in text and "secrets[" not in text


def test_the_pull_request_triggered_workflows_are_ci_and_submission() -> None:
    assert {n for n, w in WORKFLOWS.items() if triggers(w) & PR_TRIGGERS} == {
        "ci.yml", "submission.yml",
    }


@ids
def test_permissions_are_declared_for_the_workflow_and_every_job(name: str) -> None:
    document = WORKFLOWS[name]
    assert document.get("permissions") == {}, "workflow level grants nothing; jobs ask"
    for job_id, job in document["jobs"].items():
        assert isinstance(job.get("permissions"), dict), f"{name}: job {job_id}"


@ids
def test_write_access_is_held_only_where_the_table_allows(name: str) -> None:
    for job_id, job in WORKFLOWS[name]["jobs"].items():
        granted = job["permissions"]
        assert all(level in {"read", "write", "none"} for level in granted.values())
        writes = {scope for scope, level in granted.items() if level == "write"}
        assert writes == ALLOWED_WRITES.get((name, job_id), set()), f"{name}: job {job_id}"


@ids
def test_every_action_is_pinned_to_a_commit_sha_with_its_version_in_a_comment(name: str) -> None:
    for line in (WORKFLOW_DIR / name).read_text().splitlines():
        match = re.match(r"^\s*(?:-\s+)?uses:\s*(\S+)(.*)$", line)
        if not match or match.group(1).startswith("./"):
            continue
        assert PINNED.match(match.group(1)), line
        assert VERSION_COMMENT.search(match.group(2)), line


def test_each_action_is_pinned_to_the_same_sha_everywhere() -> None:
    pins: dict[str, set[str]] = {}
    for path in WORKFLOW_FILES:
        for action, sha in re.findall(r"uses:\s*([\w./-]+)@([0-9a-f]{40})", path.read_text()):
            pins.setdefault(action, set()).add(sha)
    assert pins and all(len(shas) == 1 for shas in pins.values()), pins


@ids
def test_checkouts_do_not_keep_the_token(name: str) -> None:
    for job_id, step in steps(WORKFLOWS[name]):
        if str(step.get("uses", "")).startswith("actions/checkout@"):
            assert step.get("with", {}).get("persist-credentials") is False, f"{name}: {job_id}"


@ids
def test_no_expression_is_expanded_inside_a_shell_script(name: str) -> None:
    for job_id, step in steps(WORKFLOWS[name]):
        assert "${{" not in step.get("run", ""), f"{name}: {job_id}: pass it through env:"


@ids
def test_every_job_has_a_timeout(name: str) -> None:
    for job_id, job in WORKFLOWS[name]["jobs"].items():
        assert 0 < int(job["timeout-minutes"]) <= 360, f"{name}: job {job_id}"


@ids
def test_every_workflow_has_a_concurrency_group(name: str) -> None:
    concurrency = WORKFLOWS[name]["concurrency"]
    assert concurrency["group"]
    # Checks are cancelled by a newer push; a benchmark or a deployment is never cut off.
    expected = name in {"ci.yml", "submission.yml", "submission-comment.yml"}
    assert concurrency["cancel-in-progress"] is expected


def test_the_comment_workflow_runs_only_the_base_branchs_renderer() -> None:
    document = WORKFLOWS["submission-comment.yml"]
    assert set(document["on"]) == {"workflow_run"}
    assert document["on"]["workflow_run"]["workflows"] == ["submission"]
    uses = [str(step.get("uses", "")) for _, step in steps(document)]
    assert [u.split("@")[0] for u in uses if u] == ["actions/checkout",
                                                    "actions/download-artifact"]
    checkout = next(s for _, s in steps(document) if "actions/checkout@" in s.get("uses", ""))
    # the default branch the workflow runs from, never the pull request's head
    assert checkout["with"]["ref"] == "${{ github.event.repository.default_branch }}"
    assert checkout["with"]["persist-credentials"] is False
    assert checkout["with"]["sparse-checkout"].split() == ["epbench", "epcore", "generator"]
    scripts = "\n".join(step.get("run", "") for _, step in steps(document))
    # Commands in command position: at a line's start or after ; | & ( $(
    ran = re.findall(r"(?:^|[;|&(])\s*(?:[A-Z_]+=\S+\s+)?(pip|python3?|epbench|npm|npx|node|make|"
                     r"git|bash|sh|source|eval|\.)(?=\s)", scripts, flags=re.MULTILINE)
    assert ran == ["python3"], ran
    assert 'PYTHONPATH="$GITHUB_WORKSPACE/base" python3 -P -m epbench.generator.comment' in scripts
    assert "report.md" not in scripts  # no Markdown from the artifact
    render = next(s for _, s in steps(document)
                  if s.get("name") == "Render the comment with the base branch's code")
    assert "GH_TOKEN" not in render.get("env", {})  # the token is never beside artifact data


def test_the_comment_workflow_checks_the_pr_number_and_finds_its_comment_by_marker() -> None:
    document = WORKFLOWS["submission-comment.yml"]
    script = "\n".join(step.get("run", "") for _, step in steps(document))
    assert "<!-- epbench-validation-report -->" in script
    assert "^[0-9]{1,10}$" in script  # digits only
    assert "HEAD_SHA" in script  # ... and the PR's head must be the commit that was checked
    assert "--input" in script  # the body reaches the API from a file, never an argument
    download = next(s for _, s in steps(document) if "download-artifact" in s.get("uses", ""))
    assert download["with"]["run-id"] == "${{ github.event.workflow_run.id }}"


def test_the_submission_workflow_validates_with_the_base_branchs_code() -> None:
    document = WORKFLOWS["submission.yml"]
    assert set(document["on"]["pull_request"]["paths"]) == {
        "results/**", "workloads/**", "endpoints/**",
        "**/.cache/**", "_site/**",  # committed build state: validate rejects it
    }
    checkouts = [s for _, s in steps(document) if "actions/checkout@" in s.get("uses", "")]
    assert checkouts[0]["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"
    script = "\n".join(s.get("run", "") for _, s in steps(document))
    assert "pip install ./base" in script
    assert 'epbench validate --changed-since "origin/$BASE_REF" --format json' in script
    upload = next(s for _, s in steps(document) if "upload-artifact" in s.get("uses", ""))
    assert upload["with"]["name"] == "validation-report"
    assert upload["if"] == "${{ !cancelled() }}"  # uploaded on rejection too


def test_the_benchmark_skips_its_run_job_on_an_empty_matrix_and_reads_keys_by_name() -> None:
    document = WORKFLOWS["benchmark.yml"]
    assert set(document["on"]) == {"schedule", "workflow_dispatch"}
    assert set(document["on"]["workflow_dispatch"]["inputs"]) == {
        "endpoint", "workload", "region", "shards",
    }
    run = document["jobs"]["run"]
    assert run["if"] == "needs.matrix.outputs.any == 'true'"
    assert run["strategy"]["matrix"] == "${{ fromJSON(needs.matrix.outputs.matrix) }}"
    assert run["runs-on"] == "${{ matrix.runner }}"
    assert run["environment"] == "benchmark"
    env = next(s for s in run["steps"] if s.get("name") == "epbench run")["env"]
    assert env["ENDPOINT_API_KEY"] == "${{ secrets[matrix.api_key_env] }}"


def test_the_benchmark_workflow_reads_only_fields_the_matrix_emits() -> None:
    text = (WORKFLOW_DIR / "benchmark.yml").read_text()
    used = set(re.findall(r"(?<![\w.])matrix\.([a-z_]+)", text))
    emitted = set(MatrixJob.__dataclass_fields__)
    assert used and used <= emitted, used - emitted


def test_secrets_appear_only_in_benchmark_jobs_that_use_an_environment() -> None:
    """...or in the reusable workflow, whose caller passes the one secret it names."""
    for name, document in WORKFLOWS.items():
        for job_id, job in document["jobs"].items():
            if "secrets" in yaml.safe_dump(job):
                if name == "epbench-run.yml":
                    assert triggers(document) == {"workflow_call"}
                    assert set(document["on"]["workflow_call"]["secrets"]) == {"api-key"}
                    continue
                assert name == "benchmark.yml" and job.get("environment") == "benchmark", (
                    f"{name}: {job_id}"
                )


def test_pages_deploys_as_github_documents() -> None:
    document = WORKFLOWS["pages.yml"]
    assert document["concurrency"] == {"group": "pages", "cancel-in-progress": False}
    deploy = document["jobs"]["deploy"]
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy["environment"]["name"] == "github-pages"
    build_uses = [s.get("uses", "").split("@")[0] for s in document["jobs"]["build"]["steps"]]
    assert "actions/configure-pages" in build_uses
    upload = next(s for s in document["jobs"]["build"]["steps"]
                  if "upload-pages-artifact" in s.get("uses", ""))
    assert upload["with"]["path"] == "_site"


def test_ci_runs_every_check_the_issue_lists() -> None:
    scripts = "\n".join(s.get("run", "") for _, s in steps(WORKFLOWS["ci.yml"]))
    for command in ("ruff check", "mypy", "pytest", "epbench validate", "epbench build",
                    "epbench run --endpoint emulator --workload chat-short --quick",
                    "epbench run --endpoint emulator --workload workloads/agentic --quick"):
        assert command in scripts, command


# --- the scripts inside the steps, run here with a stand-in `gh` (tests/workflow_steps.py) ---

REPORT = {"kind": "validation-report", "schema_version": 1, "blocking": True,
          "summary": {}, "files": [{"path": "results/a/b/c.json", "kind": "result",
                                    "status": "rejected"}],
          "findings": [{"file": "results/a/b/c.json", "pointer": "/run_id",
                        "check": "schema.pattern", "severity": "reject",
                        "message": "bad run id", "fix": "fix it"}]}


@pytest.fixture
def comment_env(tmp_path: Path) -> dict[str, str]:
    if shutil.which("jq") is None:
        need("jq is not installed (apt-get install jq; GitHub's runners have it)")
    return workflow_steps.comment_env(tmp_path, REPORT)


def test_the_comment_job_posts_a_new_comment_whose_body_comes_from_a_file(
    tmp_path: Path, comment_env: dict[str, str],
) -> None:
    job = workflow_steps.run_comment_job(comment_env, tmp_path)
    assert [p.returncode for p in job.steps] == [0, 0, 0], [p.stderr for p in job.steps]
    assert job.calls[0] == "api repos/o/r/pulls/17 --jq .head.sha"
    assert job.calls[-1] == (
        f"api --method POST repos/o/r/issues/17/comments --input {tmp_path}/payload.json --silent"
    )
    assert job.body is not None
    assert job.body.startswith("<!-- epbench-validation-report -->\n## epbench validation: "
                               "changes needed")
    assert "commit abc123" in job.body and "bad run id" in job.body


def test_the_comment_job_updates_its_earlier_comment(
    tmp_path: Path, comment_env: dict[str, str],
) -> None:
    job = workflow_steps.run_comment_job({**comment_env, "FAKE_EXISTING": "555"}, tmp_path)
    assert job.calls[-1].startswith("api --method PATCH repos/o/r/issues/comments/555 ")


@pytest.mark.parametrize("number", ["17; touch PWNED", "$(touch PWNED)", "-1", "", "12345678901"])
def test_the_comment_job_refuses_a_pr_number_that_is_not_digits(
    tmp_path: Path, comment_env: dict[str, str], number: str,
) -> None:
    (tmp_path / "report" / "pr-number").write_text(number)
    job = workflow_steps.run_comment_job(comment_env, tmp_path)
    assert [p.returncode for p in job.steps] == [1]
    assert "not a pull request number" in job.steps[0].stdout
    assert not (tmp_path / "PWNED").exists()
    assert job.calls == []  # no API call at all


def test_the_comment_job_will_not_comment_on_a_pr_at_another_commit(
    tmp_path: Path, comment_env: dict[str, str],
) -> None:
    job = workflow_steps.run_comment_job({**comment_env, "FAKE_HEAD": "f00"}, tmp_path)
    assert [p.returncode for p in job.steps] == [0]
    assert "now at another commit" in job.steps[0].stdout
    assert len(job.calls) == 1 and job.body is None  # only the lookup


def test_the_submission_step_keeps_the_report_and_exit_code_when_validate_rejects(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "pr"
    (repo / "results" / "mallory").mkdir(parents=True)

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo,
                       check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    (repo / "README.md").write_text("base\n")
    git("add", "-A")
    git("commit", "-q", "-m", "base")
    git("update-ref", "refs/remotes/origin/main", "HEAD")
    (repo / "results" / "mallory" / "broken.json").write_text('{"kind": "result", ')
    git("add", "-A")
    git("commit", "-q", "-m", "hostile")
    output = tmp_path / "output"
    env = {"RUNNER_TEMP": str(tmp_path), "GITHUB_OUTPUT": str(output),
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"), "BASE_REF": "main",
           "PR_NUMBER": "17", "PYTHONPATH": str(ROOT),  # this checkout's epbench, and the
           "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}  # python it runs on
    done = workflow_steps.run_step(workflow_steps.step_named(
        "submission.yml", "validate", "Validate what the pull request adds or changes"),
        env, repo)
    assert done.returncode == 0, done.stderr  # the step succeeds; a later step fails the job
    assert output.read_text() == "exit-code=1\n"
    assert (tmp_path / "report" / "pr-number").read_text() == "17\n"
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert [(f["file"], f["check"]) for f in report["findings"]] == [
        (str(repo / "results" / "mallory" / "broken.json"), "file.syntax")]
    summary = (tmp_path / "summary").read_text()  # rendered by the base branch's renderer
    assert "broken.json" in summary and "changes needed" in summary
