"""docs/cli.md is exactly what the installed `epbench … --help` prints, command by command."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from epbench import clidoc
from tests.conftest import ROOT, need


def sections(page: str) -> dict[str, str]:
    """`## epbench <cmd>` heading -> the text in its code block."""
    found = re.findall(r"^## (epbench[^\n]*)\n\n```text\n(.*?)\n```$", page, flags=re.S | re.M)
    return dict(found)


@pytest.fixture(scope="module")
def real_help() -> dict[str, str]:
    """Each command's --help from the console script, run as a user runs it."""
    beside = Path(sys.executable).with_name("epbench")
    script = str(beside) if beside.is_file() else shutil.which("epbench")
    if script is None:
        need(f"the epbench console script (beside {sys.executable} or on PATH: pip install -e .)")
    env = {**os.environ, "COLUMNS": str(clidoc.COLUMNS), "PYTHONPATH": str(ROOT)}
    out = {}
    for path in clidoc.commands():
        done = subprocess.run([script, *path, "--help"], capture_output=True, text=True,
                              env=env, check=True, timeout=60)
        out[" ".join(["epbench", *path])] = done.stdout.rstrip()
    return out


def test_the_reference_page_is_what_every_command_prints_for_help(
        real_help: dict[str, str]) -> None:
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    documented = sections(page)
    assert list(documented) == list(real_help), "docs/cli.md: run python -m epbench.clidoc"
    for title, text in real_help.items():
        assert documented[title] == text, (
            f"docs/cli.md is stale for `{title} --help`: run "
            "`python -m epbench.clidoc > docs/cli.md`")


def test_help_shows_the_short_option_the_command_accepts(real_help: dict[str, str]) -> None:
    for text in real_help.values():
        assert "-h, --help" in text
        assert not re.search(r"^  --help ", text, flags=re.M)


def test_the_generator_renders_what_the_committed_page_holds() -> None:
    assert clidoc.render() == (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")


def test_import_choices_and_their_help_come_from_the_importer_registry(
        real_help: dict[str, str]) -> None:
    from epbench.generator.importers import IMPORTERS

    text = real_help["epbench import"]
    for importer in IMPORTERS.values():
        assert f"{importer.kind}: PATH is {importer.reads}" in text
    choice = clidoc.main.commands["import"].params[0]
    assert list(choice.type.choices) == list(IMPORTERS)  # type: ignore[attr-defined]
