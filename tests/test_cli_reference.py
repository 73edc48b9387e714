"""The CLI reference page is generated from --help and must not be stale."""

from __future__ import annotations

from epbench import clidoc


def test_cli_reference_page_matches_the_commands_help(repo_root):
    committed = (repo_root / "docs" / "cli.md").read_text(encoding="utf-8")
    assert committed == clidoc.render(), (
        "docs/cli.md is stale: run `python -m epbench.clidoc > docs/cli.md`"
    )


def test_every_command_is_in_the_reference():
    page = clidoc.render()
    for name in clidoc.main.commands:
        assert f"## epbench {name}\n" in page
