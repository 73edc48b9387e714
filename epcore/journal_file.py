"""The journal file: its one writer (`Journal`) and its one reader (`read_lines`, strict or
tolerant), for the records of epbench.core.journal_records.

Each `append` is a single `os.write` of one whole line on a file descriptor opened with
O_APPEND, so a SIGKILL loses only requests still in flight, never a finished one, and never
interleaves two lines. A kill can still tear the line being written: the tolerant reader drops
a torn last line, and opening a journal to append cuts such a tail first so the next line
starts clean.

An endpoint may echo the key it was sent ("Incorrect API key provided: sk-..."), and the
journal is uploaded and published. So the run's secrets (its key and header values) are
removed from every line, and each `error` text also loses anything credential-shaped
(`epbench.core.credentials.redact`), before the line is written. Lines are serialized by
orjson (compact, UTF-8; bench/journal_write.py has the cost per line).

    read_lines(blocks, strict=True)    `epbench validate` (epbench.core.evidence): every line
                                       decoded by epbench.core.strict_json and of a known kind
                                       and shape (epbench.core.journal_lines), at most
                                       MAX_LINE_BYTES long; JournalLineError otherwise
    read_lines(blocks, strict=False)   the runner (`--resume`, merge, reports): the same
                                       decoder, a torn last line dropped, lines that are not
                                       objects skipped; `Journal.read` of a file
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from epbench.core import journal_lines
from epbench.core.credentials import REDACTED, redact
from epbench.core.errors import RunError
from epbench.core.journal_records import session_line
from epbench.core.strict_json import Refused, decode

MIN_SECRET_CHARS = 8
MAX_LINE_BYTES = 16 * 1024 * 1024
"""A request of 131,072 tokens (the largest max_tokens a workload may ask) writes about 1 MB
of inter-token gaps."""
_BLOCK = 1 << 20


class JournalLineError(ValueError):
    """A journal line could not be read; the message names it (`journal line 3 is not JSON`)."""


class Journal:
    """Append-only JSON-lines file: the one writer of journal records."""

    def __init__(self, path: Path, secrets: list[str] | tuple[str, ...] = ()) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # short values (an organisation id "42") cannot be told apart from data; keys are long
        self._secrets = tuple(s for s in secrets if s and len(s) >= MIN_SECRET_CHARS)
        # each secret as JSON spells it inside a string (orjson escapes only " \ and controls)
        self._spelled = tuple(orjson.dumps(s)[1:-1] for s in self._secrets)
        _cut_torn_tail(self.path)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def append(self, record: Mapping[str, Any]) -> None:
        error = record.get("error")
        if isinstance(error, str) and error:
            record = {**record, "error": redact(error, self._secrets)}
        line = orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
        for spelled in self._spelled:  # wherever else it landed
            if spelled in line:
                line = line.replace(spelled, _REDACTED)
        os.write(self._fd, line)

    def start_session(self, rtt_ms: list[float] | None = None) -> None:
        """Mark that a process starts sending: its monotonic and wall-clock instants, and the
        round trips its preflight measured (epbench.core.round_trips)."""
        self.append(session_line(time.perf_counter_ns(), rtt_ms))

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
        """Every whole record (tolerant: a torn last line is dropped); a bad line elsewhere is
        a RunError."""
        path = Path(path)
        if not path.exists():
            return []
        with path.open("rb") as handle:
            try:
                return [r for _, r in read_lines(iter(lambda: handle.read(_BLOCK), b""),
                                                 strict=False)]
            except JournalLineError as exc:
                raise RunError(f"{path}: {exc}; the journal is damaged") from None


_REDACTED = REDACTED.encode()


def read_lines(blocks: Iterable[bytes], *, strict: bool) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) for each line of a journal's bytes, given in blocks."""
    number = 0
    tail = b""
    for block in blocks:
        lines = (tail + block).split(b"\n") if tail else block.split(b"\n")
        tail = lines.pop()
        if strict and len(tail) > MAX_LINE_BYTES:
            raise JournalLineError(f"journal line {number + 1} is longer than "
                                   f"{MAX_LINE_BYTES} bytes")
        for line in lines:
            number += 1
            if line if strict else line.strip():
                record = _record(line, number, strict)
                if record is not None:
                    yield number, record
    if tail if strict else tail.strip():
        number += 1
        try:
            record = _record(tail, number, strict)
        except JournalLineError:
            if strict:
                raise
            return  # torn by a kill mid-write
        if record is not None:
            yield number, record


def _record(line: bytes, number: int, strict: bool) -> dict[str, Any] | None:
    try:
        record = decode(line, journal_lines.MAX_DEPTH)
    except Refused as exc:
        raise JournalLineError(f"journal line {number} {exc}") from None
    if not strict:
        return record if isinstance(record, dict) else None
    problem = journal_lines.line_problem(record)
    if problem is not None:
        raise JournalLineError(f"journal line {number} {problem}")
    return record


def _cut_torn_tail(path: Path) -> None:
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        keep = data.rfind(b"\n") + 1
        with path.open("r+b") as handle:
            handle.truncate(keep)
