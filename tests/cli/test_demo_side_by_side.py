"""The demo's runs go side by side: each starts its own emulator, so the seven runs (a serving
sweep and agentic runs on chat completions and on each native API, and a shared-prefix sweep)
go four at a time, not one after another (what kept the demo at 232-264 s)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

import epbench.runner.entry
from epbench.demo import run_demo


class _Stop(Exception):
    pass


def test_the_demo_starts_its_run_groups_at_once(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    lock = threading.Lock()
    active = [0, 0]  # now, most at once
    workloads: list[str] = []

    def fake(**kw: object) -> list[Path]:
        with lock:
            active[0] += 1
            active[1] = max(active[1], active[0])
            workloads.append(Path(str(kw["workload"])).stem)
        time.sleep(0.5)
        with lock:
            active[0] -= 1
        raise _Stop

    monkeypatch.setattr(epbench.runner.entry, "run_command", fake)
    with pytest.raises(_Stop):
        run_demo(tmp_path)
    assert active[1] == 4, active  # MAX_AT_ONCE; the last three start as the first end
    assert sorted(workloads) == ["agentic", "chat-short", "chat-short", "chat-short",
                                 "parallel-stock-quotes", "retail-refund", "shared-prefix"]
