"""A real emulator on loopback for tests: the shipped endpoints/emulator.yaml, with overrides.

    from tests.emulator_fixture import running_emulator

    with running_emulator({"faults": {"http_5xx": 0.5}}) as emu:
        httpx.post(emu.base_url + "/chat/completions", json=...)

`overrides` is deep-merged into the file's `emulator:` block; the emulator runs in a child
process (workloads.emulator.start_emulator) and is stopped when the block ends.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from epbench.documents import load_document
from epbench.paths import shipped_endpoints_dir
from workloads.emulator import EmulatorProcess, start_emulator


def deep_merge(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """A copy of `base` with `overrides` merged in (mappings merge, anything else replaces)."""
    merged = copy.deepcopy(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def emulator_endpoint(overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The shipped emulator endpoint document with `overrides` merged into its emulator block."""
    document: dict[str, Any] = load_document(shipped_endpoints_dir() / "emulator.yaml")
    document["emulator"] = deep_merge(document["emulator"], overrides or {})
    return document


@contextmanager
def running_emulator(
    overrides: dict[str, Any] | None = None, workload_dirs: list[Path] | None = None
) -> Iterator[EmulatorProcess]:
    """Start the emulator (shipped settings + overrides) and stop it afterwards."""
    with start_emulator(emulator_endpoint(overrides), workload_dirs=workload_dirs) as emulator:
        yield emulator
