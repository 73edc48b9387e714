"""The README's test command installs with uv, and tests/server_envs.py builds the servers'
virtualenvs with the uv of the test dependencies: the two pins are one version, the command is
one line, the form .ci/run extracts and runs, and the servers' installs see the machine's pip
settings."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]


def readme_test_command() -> str:
    """The line .ci/run runs, taken from README.md by .ci/run's own awk program."""
    program = re.search(r"awk '([^']+)' README\.md", (ROOT / ".ci" / "run").read_text())
    assert program, ".ci/run no longer reads the command with awk"
    out = subprocess.run(["awk", program.group(1), str(ROOT / "README.md")],
                         capture_output=True, text=True, check=True)
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


def test_the_servers_uv_installs_are_told_the_machines_pip_settings() -> None:
    """tests/server_envs.py builds the servers' virtualenvs with uv, which reads no pip
    configuration: what `pip config list` prints becomes uv's flags, a PIP_* variable over the
    files whichever comes first, lists split, anything else left out, and pip's index
    strategy always (uv's own took an older package from a local index)."""
    from tests.server_envs import uv_flags

    printed = "\n".join([
        ":env:.find-links='/opt/wheels'",
        "global.find-links='/srv/other'",
        "global.constraint='/etc/xdg/pip/constraints.txt'",
        "global.extra-index-url='file:///opt/a/simple file:///opt/b/simple'",
        "global.index-url='https://mirror.example/simple'",
        "global.cert='/etc/ssl/certs/ca-certificates.crt'",
        ":env:.default-timeout='180'",
    ])
    assert uv_flags(printed) == [
        "--index-strategy", "unsafe-best-match",
        "--find-links", "/opt/wheels",
        "--constraints", "/etc/xdg/pip/constraints.txt",
        "--extra-index-url", "file:///opt/a/simple", "--extra-index-url", "file:///opt/b/simple",
        "--index-url", "https://mirror.example/simple",
    ]
    assert uv_flags("") == ["--index-strategy", "unsafe-best-match"]
