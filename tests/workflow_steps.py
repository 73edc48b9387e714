"""Running the scripts inside workflow steps on this machine, with a stand-in `gh`.

The comment job is run step by step as Actions would: each step's `run` script in bash with
the step's environment, `GITHUB_OUTPUT` read back between steps, the base-branch checkout
being this checkout (`$GITHUB_WORKSPACE/base`), and `gh` a script that logs its arguments and
answers from FAKE_* variables.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW_DIR = ROOT / ".github" / "workflows"

FAKE_GH = """#!/usr/bin/env bash
printf '%s\\n' "$*" >> "$FAKE_LOG"
prev=""
for arg in "$@"; do
  if [ "$prev" = "--input" ]; then cp "$arg" "$FAKE_PAYLOAD"; fi
  prev="$arg"
done
case "$*" in
  *"/files --jq"*) printf '%s\\n' $FAKE_FILES ;;
  *".changed_files"*) echo "$FAKE_TOTAL" ;;
  *"/pulls/"*) echo "$FAKE_HEAD" ;;
  *"--paginate"*) if [ -n "$FAKE_EXISTING" ]; then echo "$FAKE_EXISTING"; fi ;;
esac
exit 0
"""
COMMENT_STEPS = ("Find the pull request and whether it changes .github/",
                 "Render the comment with the base branch's code",
                 "Post or update the sticky comment")


def load_workflow(name: str) -> dict[str, Any]:
    document = yaml.safe_load((WORKFLOW_DIR / name).read_text(encoding="utf-8"))
    if True in document:  # YAML 1.1 reads the key `on` as True
        document["on"] = document.pop(True)
    return document


def step_named(workflow: str, job: str, name: str) -> dict[str, Any]:
    document = load_workflow(workflow)
    return next(s for s in document["jobs"][job]["steps"] if s.get("name") == name)


def run_step(step: dict[str, Any], env: dict[str, str],
             cwd: Path) -> subprocess.CompletedProcess[str]:
    bash = shutil.which("bash")
    assert bash is not None
    full = {"PATH": os.environ["PATH"], "HOME": str(cwd), **env}
    return subprocess.run([bash, "-e", "-c", step["run"]], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=120, check=False)


def comment_env(tmp_path: Path, report: dict[str, Any] | None = None) -> dict[str, str]:
    """A fake `gh`, an artifact folder with pr-number 17 (and `report` as report.json), and
    the variables the comment job's steps read."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    gh = bin_dir / "gh"
    gh.write_text(FAKE_GH)
    gh.chmod(0o755)
    folder = tmp_path / "report"
    folder.mkdir()
    (folder / "pr-number").write_text("17\n")
    if report is not None:
        (folder / "report.json").write_text(json.dumps(report))
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "base").symlink_to(ROOT)
    return {
        "PATH": f"{bin_dir}:{os.environ['PATH']}", "RUNNER_TEMP": str(tmp_path),
        "GITHUB_WORKSPACE": str(workspace), "GITHUB_OUTPUT": str(tmp_path / "output"),
        "FAKE_LOG": str(tmp_path / "gh.log"), "FAKE_PAYLOAD": str(tmp_path / "sent.json"),
        "FAKE_HEAD": "abc123", "FAKE_EXISTING": "", "FAKE_TOTAL": "1",
        "FAKE_FILES": "results/a/b/c.json", "GH_TOKEN": "x", "REPO": "o/r",
        "HEAD_SHA": "abc123", "RUN_URL": "https://github.com/o/r/actions/runs/1",
    }


@dataclass
class JobRun:
    """What the comment job did: each step's process, the gh calls, the posted body."""

    steps: list[subprocess.CompletedProcess[str]]
    calls: list[str]
    body: str | None


def run_comment_job(env: dict[str, str], cwd: Path) -> JobRun:
    """The comment job's three steps in order, with each step's `if:` and outputs applied."""
    done: list[subprocess.CompletedProcess[str]] = []
    outputs: dict[str, str] = {}
    for name in COMMENT_STEPS:
        step = step_named("submission-comment.yml", "comment", name)
        if "if" in step and outputs.get("post") != "true":
            break
        step_env = {**env, "CHANGED": outputs.get("github-changed", ""),
                    "PR": outputs.get("number", "")}
        Path(env["GITHUB_OUTPUT"]).write_text("")
        process = run_step(step, step_env, cwd)
        done.append(process)
        if process.returncode != 0:
            break
        for line in Path(env["GITHUB_OUTPUT"]).read_text().splitlines():
            key, _, value = line.partition("=")
            outputs[key] = value
    log = Path(env["FAKE_LOG"])
    payload = Path(env["FAKE_PAYLOAD"])
    return JobRun(done, log.read_text().splitlines() if log.exists() else [],
                  json.loads(payload.read_text())["body"] if payload.exists() else None)
