"""Without a terminal, `epbench run` and the demo print progress lines rather than nothing."""

from __future__ import annotations

import io
import subprocess
import sys

from epbench.runner.progress import auto_mode
from tests.conftest import ROOT


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_a_bar_on_a_terminal_and_lines_without_one():
    assert auto_mode(_Terminal()) == "bar"
    assert auto_mode(io.StringIO()) == "lines"


def test_the_demo_asks_for_progress_lines_when_stderr_is_not_a_terminal():
    code = (
        "import epbench.runner.entry, epbench.demo as demo\n"
        "seen = []\n"
        "def fake(**kw):\n"
        "    seen.append(kw['progress'])\n"
        "    raise SystemExit(0)\n"
        "demo.run_command = fake\n"
        "epbench.runner.entry.run_command = fake\n"
        "try:\n"
        "    demo.run_demo(__import__('pathlib').Path('.'))\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(set(seen)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "['lines']", done.stdout + done.stderr
