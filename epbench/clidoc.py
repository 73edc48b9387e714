"""The CLI reference page, generated from the commands' own `--help`.

`python -m epbench.clidoc > docs/cli.md` regenerates it; tests/test_cli_reference.py fails when
the committed page is stale, so the reference cannot drift from the code.
"""

from __future__ import annotations

import click

from epbench.cli import main

HEADER = (
    "# `epbench` command reference\n\n"
    "Generated from `--help` by `python -m epbench.clidoc > docs/cli.md`; "
    "a test fails when this page is stale.\n"
)


def _help(command: click.Command, name: str, parent: click.Context | None) -> str:
    ctx = click.Context(command, info_name=name, parent=parent, terminal_width=100,
                        max_content_width=100)
    return command.get_help(ctx)


def render() -> str:
    """The whole reference as Markdown."""
    parts = [HEADER, "\n## epbench\n\n```text\n", _help(main, "epbench", None), "\n```\n"]
    root = click.Context(main, info_name="epbench")
    for name in sorted(main.commands):
        command = main.commands[name]
        parts += [f"\n## epbench {name}\n\n```text\n", _help(command, name, root), "\n```\n"]
    return "".join(parts)


if __name__ == "__main__":  # pragma: no cover
    print(render(), end="")
