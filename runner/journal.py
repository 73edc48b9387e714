"""The event journal: one JSON line per finished request, written as it finishes.

Each `append` is a single `os.write` of one whole line on a file descriptor opened with
O_APPEND, so a SIGKILL loses only requests still in flight, never a finished one, and never
interleaves two lines. A kill can still tear the line being written: `read` drops a torn last
line, and opening a journal to append cuts such a tail first so the next line starts clean.

Besides request (and agentic trial) lines, a journal holds one `{"type": "run", "spec": ...}`
line first (what epbench.core.summary needs to recompute the result from the journal alone) and one
`{"type": "session"}` line each time a process starts sending (the first run, every resume).

An endpoint may echo the key it was sent ("Incorrect API key provided: sk-..."), and the
journal is uploaded and published. So the run's secrets (its key and header values) are
removed from every line, and each `error` text also loses anything credential-shaped
(`epbench.core.credentials.redact`), before the line is written.
"""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from epbench.core.credentials import REDACTED, redact
from epbench.core.errors import RunError
from epbench.core.journal_lines import REQUEST_FIELDS, TRIAL_FIELDS, complete_records

MIN_SECRET_CHARS = 8
__all__ = ["REQUEST_FIELDS", "TRIAL_FIELDS", "Journal", "complete_records"]

class Journal:
    """Append-only JSON-lines file."""

    def __init__(self, path: Path, secrets: list[str] | tuple[str, ...] = ()) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # short values (an organisation id "42") cannot be told apart from data; keys are long
        self._secrets = tuple(s for s in secrets if s and len(s) >= MIN_SECRET_CHARS)
        _cut_torn_tail(self.path)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def append(self, record: dict[str, Any]) -> None:
        error = record.get("error")
        if isinstance(error, str) and error:
            record = {**record, "error": redact(error, self._secrets)}
        line = json.dumps(record, separators=(",", ":"))
        for secret in self._secrets:  # wherever else it landed, as JSON spells it
            line = line.replace(json.dumps(secret)[1:-1], REDACTED)
        os.write(self._fd, (line + "\n").encode())

    def start_session(self, rtt_ms: list[float] | None = None) -> None:
        """Mark that a process starts sending: its monotonic and wall-clock instants, and the
        round trips its preflight measured (epbench.core.round_trips)."""
        line: dict[str, Any] = {
            "type": "session",
            "t_ns": time.perf_counter_ns(),
            "at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z",
        }
        if rtt_ms:
            line["rtt_ms"] = [round(v, 4) for v in rtt_ms]
        self.append(line)

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
