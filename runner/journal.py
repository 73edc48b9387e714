"""The event journal: one JSON line per finished request, written as it finishes.

Each `append` is a single `os.write` of one whole line on a file descriptor opened with
O_APPEND, so a SIGKILL loses only requests still in flight, never a finished one, and never
interleaves two lines. A kill can still tear the line being written: `read` drops a torn last
line, and opening a journal to append cuts such a tail first so the next line starts clean.

An endpoint may echo the key it was sent ("Incorrect API key provided: sk-..."), and the
journal is uploaded and published. So the run's secrets (its key and header values) are
removed from every line, and each `error` text also loses anything credential-shaped
(`epcore.credentials.redact`), before the line is written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from epcore.credentials import REDACTED, redact
from epcore.errors import RunError

MIN_SECRET_CHARS = 8

# What a serving request line must hold to be summarized, and a trial line to be resumed.
REQUEST_FIELDS: dict[str, type | tuple[type, ...]] = {
    "request_id": str, "point": str, "seq": int, "class": str, "t_send_ns": int, "t_done_ns": int,
}
TRIAL_FIELDS: dict[str, type | tuple[type, ...]] = {"task": str, "trial": int, "result": str}


def complete_records(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """(the records that hold every field their kind needs, how many did not).

    A line can parse and still lack fields (written by another tool, or edited): such lines
    are skipped and counted, never allowed to crash a summary or a resume."""
    kept = []
    for record in records:
        kind = record.get("type", "request")
        if kind == "trial":
            needed = TRIAL_FIELDS
        elif kind == "request" and "task" not in record:
            needed = REQUEST_FIELDS
        else:
            kept.append(record)  # agentic request lines: evidence, not read back
            continue
        if all(isinstance(record.get(k), t) for k, t in needed.items()):
            kept.append(record)
    return kept, len(records) - len(kept)


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
