"""Request traces as data: one parser for the formats a `pattern: trace` workload replays.

    mooncake-jsonl  one JSON object a line: `timestamp` (milliseconds from the trace's start),
                    `input_length`, `output_length` (tokens), `hash_ids` (one id per 512-token
                    prefix block; equal ids at the same place mean equal blocks)
    azure-csv       Azure's 2023 LLM inference traces: a `TIMESTAMP,ContextTokens,
                    GeneratedTokens` header, then wall-clock times with up to 9 fraction digits

A trace sits in the repository (workloads/traces/), so it is untrusted data like any workload:
it is read as bytes with a size limit, never evaluated, and each problem is one line naming
the file and the line (`name:LINE: what is wrong`). Times are seconds from the trace's first
request; they must not go backwards (a shuffled trace would replay another workload).
"""

from __future__ import annotations

import hashlib
import math
import re
from array import array
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import orjson

from epbench.core.documents import DocumentError, read_bytes_limited
from epbench.core.errors import InputError

FORMATS = ("mooncake-jsonl", "azure-csv")
BLOCK_TOKENS = 512
"""Tokens per Mooncake hash-id block (the trace's publishers fixed it)."""
MAX_TRACE_BYTES = 64 * 1024 * 1024
MAX_ROWS = 2_000_000
MAX_TOKENS = 10_000_000
"""The longest input or output a row may claim (a trace claiming more is not a real trace)."""
MAX_BLOCKS = MAX_TOKENS // BLOCK_TOKENS + 1
TRACE_PATH = re.compile(r"^workloads/traces/[a-z0-9][a-z0-9._-]{0,120}\.(csv|jsonl)$")
"""Where a workload may name a trace: inside the repository's workloads/traces/, no `..`."""
AZURE_HEADER = ("TIMESTAMP", "ContextTokens", "GeneratedTokens")
_AZURE_TIME = re.compile(
    rb"^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$")
_INT = re.compile(rb"^\d{1,9}$")


@dataclass
class Trace:
    """A parsed trace: per request, seconds from the first request, input and output tokens
    and (Mooncake) its prefix-block hash ids."""

    name: str
    format: str
    times_s: array
    inputs: array
    outputs: array
    hash_ids: list[tuple[int, ...]] | None = None

    def __len__(self) -> int:
        return len(self.times_s)


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_trace_bytes(path: Path, name: str) -> bytes:
    """The trace file's bytes (InputError when unreadable or over MAX_TRACE_BYTES)."""
    try:
        return read_bytes_limited(path, MAX_TRACE_BYTES)
    except DocumentError as exc:
        raise InputError(f"{name}: {exc.problem.message}") from None


def parse_trace(data: bytes, fmt: str, name: str) -> Trace:
    """The trace in `data`; InputError `name:LINE: problem` at the first bad line."""
    if fmt == "mooncake-jsonl":
        return _mooncake(data, name)
    if fmt == "azure-csv":
        return _azure(data, name)
    raise InputError(f"{name}: unknown trace format {fmt!r} (one of {', '.join(FORMATS)})")


def _fail(name: str, line: int, message: str) -> InputError:
    return InputError(f"{name}:{line}: {message}"[:400])


def _lines(data: bytes, name: str) -> list[bytes]:
    if b"\x00" in data:
        raise InputError(f"{name}: holds a NUL byte; a trace is text")
    lines = data.split(b"\n")
    if len(lines) > MAX_ROWS + 2:
        raise InputError(f"{name}: over {MAX_ROWS} rows")
    return lines


def _count(value: object, name: str, line: int, field: str, low: int = 0) -> int:
    if type(value) is not int or not low <= value <= MAX_TOKENS:
        raise _fail(name, line, f"{field} must be an integer from {low} to {MAX_TOKENS}, "
                                f"not {str(value)[:40]!r}")
    return value


def _mooncake(data: bytes, name: str) -> Trace:
    times, inputs, outputs = array("d"), array("i"), array("i")
    hashes: list[tuple[int, ...]] = []
    previous = 0.0
    for number, raw in enumerate(_lines(data, name), start=1):
        raw = raw.strip()
        if not raw:
            continue
        try:
            row = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise _fail(name, number, "not a JSON object") from None
        if not isinstance(row, dict):
            raise _fail(name, number, "not a JSON object")
        stamp = row.get("timestamp")
        if not isinstance(stamp, int | float) or isinstance(stamp, bool) \
                or not math.isfinite(stamp) or stamp < 0:
            raise _fail(name, number, f"timestamp must be milliseconds >= 0, not "
                                      f"{str(stamp)[:40]!r}")
        seconds = float(stamp) / 1000.0
        if seconds < previous:
            raise _fail(name, number, "timestamp goes backwards (a trace is in arrival order)")
        previous = seconds
        length = _count(row.get("input_length"), name, number, "input_length", low=1)
        output = _count(row.get("output_length"), name, number, "output_length")
        ids = row.get("hash_ids")
        if not isinstance(ids, list) or len(ids) > MAX_BLOCKS or not all(
                type(h) is int and 0 <= h < 2**63 for h in ids):
            raise _fail(name, number, f"hash_ids must be a list of at most {MAX_BLOCKS} "
                                      f"integers >= 0")
        if len(ids) > math.ceil(length / BLOCK_TOKENS):
            raise _fail(name, number, f"{len(ids)} hash ids for {length} input tokens "
                                      f"(at most one per {BLOCK_TOKENS} tokens)")
        times.append(seconds)
        inputs.append(length)
        outputs.append(output)
        hashes.append(tuple(ids))
    if not times:
        raise InputError(f"{name}: no requests")
    return Trace(name, "mooncake-jsonl", _from_first(times), inputs, outputs, hashes)


def _azure(data: bytes, name: str) -> Trace:
    lines = _lines(data, name)
    header = tuple(c.strip().decode("ascii", "replace") for c in lines[0].split(b","))
    if header != AZURE_HEADER:
        raise _fail(name, 1, f"the header must be {','.join(AZURE_HEADER)}")
    stamps: list[int] = []
    inputs, outputs = array("i"), array("i")
    previous = -1
    for number, raw in enumerate(lines[1:], start=2):
        raw = raw.strip()
        if not raw:
            continue
        cells = raw.split(b",")
        if len(cells) != 3:
            raise _fail(name, number, f"{len(cells)} fields where the header has 3")
        stamp_ns = _azure_ns(cells[0].strip(), name, number)
        if stamp_ns < previous:
            raise _fail(name, number, "TIMESTAMP goes backwards (a trace is in arrival order)")
        previous = stamp_ns
        counts = []
        for cell, field, low in ((cells[1], "ContextTokens", 1), (cells[2], "GeneratedTokens", 0)):
            cell = cell.strip()
            if not _INT.match(cell):
                raise _fail(name, number, f"{field} must be an integer, not "
                                          f"{cell[:40].decode('ascii', 'replace')!r}")
            counts.append(_count(int(cell), name, number, field, low))
        stamps.append(stamp_ns)
        inputs.append(counts[0])
        outputs.append(counts[1])
    if not stamps:
        raise InputError(f"{name}: no requests")
    first = stamps[0]
    times = array("d", ((t - first) / 1e9 for t in stamps))
    return Trace(name, "azure-csv", times, inputs, outputs, None)


def _azure_ns(cell: bytes, name: str, line: int) -> int:
    """Nanoseconds since 0001-01-01 (integers: a float of 6e10 seconds keeps only 8 us)."""
    match = _AZURE_TIME.match(cell)
    if match is None:
        raise _fail(name, line, f"TIMESTAMP must look like 2023-11-16 18:17:03.9799600, not "
                                f"{cell[:40].decode('ascii', 'replace')!r}")
    y, mo, d, h, mi, s = (int(g) for g in match.groups()[:6])
    try:
        day = date(y, mo, d).toordinal()
    except ValueError:
        raise _fail(name, line, "TIMESTAMP is not a calendar date") from None
    if h > 23 or mi > 59 or s > 60:
        raise _fail(name, line, "TIMESTAMP is not a time of day")
    fraction = (match.group(7) or b"").ljust(9, b"0")
    return (day * 86400 + h * 3600 + mi * 60 + s) * 1_000_000_000 + int(fraction)


def _from_first(times: array) -> array:
    """Seconds from the first request (rounded to the nanosecond)."""
    first = times[0]
    return array("d", (round(t - first, 9) for t in times))
