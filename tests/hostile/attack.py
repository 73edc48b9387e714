"""What the attack tests in this folder share: a real git repository in a temporary folder, a
project holding the sample results, and the epbench command line run as a contributor would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
TESTS = ROOT / "tests"
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from tests.generator.checks.test_validate_results import SERVICED, make_project  # noqa: E402

__all__ = ["ROOT", "SERVICED", "TINY_WORKLOAD", "epbench", "git", "git_env", "make_project",
           "repository"]

TINY_WORKLOAD = {
    "kind": "serving-workload", "schema_version": 1, "id": "tiny", "version": "1.0",
    "description": "four requests", "seed": 3,
    "prompts": {"input_tokens": {"distribution": "fixed", "value": 32}, "max_tokens": 8,
                "ignore_eos": True},
    "load": {"pattern": "concurrency", "concurrency": [2], "requests_per_point": 4,
             "warmup_requests": 0},
    "slo": {"ttft_ms": 1000, "tpot_ms": 100}, "timeout_s": 30,
}
"""One point of four requests: a real run in a second or two."""


def git_env(home: Path) -> dict[str, str]:
    """A plain git identity, and no user or system config from this machine."""
    return {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
            "GIT_CONFIG_NOSYSTEM": "1", "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home)}


def git(cwd: Path, *args: str, home: Path | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env=git_env(home or cwd))
    return done.stdout


def repository(project: Path) -> Path:
    """`project` made a git repository on branch main with everything committed."""
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "base")
    return project


def epbench(*args: str, cwd: Path, env: dict[str, str] | None = None,
            ) -> subprocess.CompletedProcess[str]:
    """`epbench ARGS` in `cwd`, with this checkout's code."""
    full = dict(os.environ if env is None else env, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "epbench.cli", *args], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=600)
