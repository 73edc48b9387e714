"""A real emulator on loopback for tests: the shipped endpoints/emulator.yaml, with overrides.

    from tests.emulator_fixture import running_emulator

    with running_emulator({"faults": {"http_5xx": 0.5}}) as emu:
        httpx.post(emu.base_url + "/chat/completions", json=...)

`overrides` is deep-merged into the file's `emulator:` block; the emulator runs in a child
process (epbench.runner.emulator.start_emulator) and is stopped when the block ends.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from epbench.core.documents import load_document
from epbench.core.paths import shipped_endpoints_dir
from epbench.runner.emulator import EmulatorProcess, start_emulator


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


async def stream_wave(port: int, bodies: list[dict[str, Any]]) -> list[bytes]:
    """Send each body as a streamed request at once, one raw connection each, all opened
    first; return each whole response. A lean client (asyncio streams, no pool), so that a
    wave of 64 requests reaches the emulator within milliseconds: httpx's default pool
    spends seconds on that many concurrent requests.
    """
    connections = [await asyncio.open_connection("127.0.0.1", port) for _ in bodies]

    async def one(i: int, body: dict[str, Any]) -> bytes:
        reader, writer = connections[i]
        data = json.dumps({**body, "stream": True}).encode()
        writer.write(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(data)
                     + data)
        response = b""
        while not response.endswith(b"0\r\n\r\n"):
            part = await reader.read(65536)
            if not part:
                break
            response += part
        writer.close()
        return response

    return list(await asyncio.gather(*(one(i, b) for i, b in enumerate(bodies))))
