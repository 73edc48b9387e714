"""The emulator as a process: `epbench emulate` errors, and no emulator outlives its parent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from epbench.cli import main

pytestmark = pytest.mark.integration


def test_epbench_emulate_with_a_bad_config_prints_one_line_and_exits_1(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "kind: endpoint\nschema_version: 1\nid: x\nprovider: p\nmodel: {name: m}\n"
        "api: openai-chat\nbase_url: http://127.0.0.1:1/v1\ndivision: emulated\n"
        "region: local\npricing: {usd_per_hour: 1, effective_date: '2026-01-01'}\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["emulate", "--config", str(bad), "--port", "0"])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("epbench: error: ") and "emulator:" in lines[0]


PARENT = """
import sys, time
sys.path.insert(0, {root!r})
from tests.emulator_fixture import emulator_endpoint
from epbench.runner.emulator import start_emulator
emu = start_emulator(emulator_endpoint())
print(emu.pid, flush=True)
time.sleep(60)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not yet reaped by init) counts as gone
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_the_emulator_exits_when_the_process_that_started_it_is_killed(repo_root):
    parent = subprocess.Popen([sys.executable, "-c", PARENT.format(root=str(repo_root))],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert _alive(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 10
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child)
    finally:
        if parent.poll() is None:
            parent.kill()
