"""The README's test command installs with uv, and tests/server_envs.py builds the servers'
virtualenvs with the uv of the test dependencies: the two pins are one version, and the
command is one line, the form .ci/run extracts and runs."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]


def readme_test_command() -> str:
    """The line .ci/run runs: the first shell block after the line "Run the tests"."""
    out = subprocess.run(
        ["awk", '/^Run the tests/{found=1} found && /^```sh/{getline; print; exit}',
         str(ROOT / "README.md")], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_the_readme_installs_the_uv_version_the_test_dependencies_pin() -> None:
    command = readme_test_command()
    assert command.endswith("pytest -n 3"), command
    assert not command.endswith("\\"), command
    installed = re.findall(r"pip install (uv==\S+)", command)
    assert len(installed) == 1, command
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["test"]
    pinned = [str(r.specifier) for r in map(Requirement, extras) if r.name == "uv"]
    assert pinned == [installed[0].removeprefix("uv")], (pinned, installed)
    assert "uv pip install --compile-bytecode -e '.[test]'" in command, command
