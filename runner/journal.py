"""The event journal: one JSON line per finished request, written as it finishes.

Each `append` is a single `os.write` of one whole line on a file descriptor opened with
O_APPEND, so a SIGKILL loses only requests still in flight, never a finished one, and never
interleaves two lines. A kill can still tear the line being written: `read` drops a torn last
line, and opening a journal to append cuts such a tail first so the next line starts clean.

Besides request (and agentic trial) lines, a journal holds one `{"type": "run", "spec": ...}`
line first (what epcore.summary needs to recompute the result from the journal alone) and one
`{"type": "session"}` line each time a process starts sending (the first run, every resume).
"""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from epcore.errors import RunError


class Journal:
    """Append-only JSON-lines file."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _cut_torn_tail(self.path)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def append(self, record: dict[str, Any]) -> None:
        os.write(self._fd, (json.dumps(record, separators=(",", ":")) + "\n").encode())

    def start_session(self) -> None:
        """Mark that a process starts sending: its monotonic and wall-clock instants."""
        self.append({
            "type": "session",
            "t_ns": time.perf_counter_ns(),
            "at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z",
        })

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def read(path: Path) -> list[dict[str, Any]]:
        """Every whole record; a torn last line is dropped, a bad line elsewhere is a RunError."""
        path = Path(path)
        if not path.exists():
            return []
        lines = path.read_bytes().split(b"\n")
        records: list[dict[str, Any]] = []
        last = len(lines) - 1
        for number, line in enumerate(lines):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                if number == last:
                    break  # torn by a kill mid-write
                raise RunError(
                    f"{path}: line {number + 1} is not JSON; the journal is damaged"
                ) from None
            if isinstance(record, dict):
                records.append(record)
        return records


def _cut_torn_tail(path: Path) -> None:
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        keep = data.rfind(b"\n") + 1
        with path.open("r+b") as handle:
            handle.truncate(keep)
