"""ruff and mypy are part of the test suite, so a red lint is a red CI run."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT, need


def _tool(name: str) -> list[str]:
    if shutil.which(name) is None:
        need(f"{name} is not installed (it is in the `test` extra)")
    return [name]


@pytest.mark.slow
def test_ruff_finds_nothing():
    done = subprocess.run(
        [*_tool("ruff"), "check", "--no-cache", "."],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


@pytest.mark.slow
def test_mypy_finds_nothing():
    _tool("mypy")
    done = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
