"""The CLI reference page, generated from the commands' own `--help`.

Each section is what `epbench [COMMAND] --help` prints, produced by running the real command
(`main` with its own context settings, so `-h, --help`, and the program name `epbench`) in an
80-column terminal (click then wraps at 78; its CliRunner would force 80).
`python -m epbench.clidoc > docs/cli.md` regenerates the page; tests/cli/test_cli_reference.py
compares it with the installed `epbench` command's output, so the reference cannot drift.
"""

from __future__ import annotations

import contextlib
import io
import os

from epbench.cli import main

COLUMNS = 80
HEADER = (
    "# `epbench` command reference\n\n"
    "Generated from `--help` by `python -m epbench.clidoc > docs/cli.md` (an "
    f"{COLUMNS}-column terminal); a test fails when this page differs from what "
    "`epbench … --help` prints.\n"
)


def commands() -> list[list[str]]:
    """The argument path of every command, the group first: [], ["build"], ..."""
    return [[], *([name] for name in sorted(main.commands))]


def help_text(path: list[str]) -> str:
    """What `epbench <path> --help` prints."""
    out = io.StringIO()
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(COLUMNS)
    try:
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            main.main([*path, "--help"], prog_name="epbench")
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved
    return out.getvalue()


def section(path: list[str], text: str) -> str:
    title = " ".join(["epbench", *path])
    return f"\n## {title}\n\n```text\n{text.rstrip()}\n```\n"


def render() -> str:
    """The whole reference as Markdown."""
    return HEADER + "".join(section(path, help_text(path)) for path in commands())


if __name__ == "__main__":  # pragma: no cover
    print(render(), end="")
