"""A result's evidence: its run journal, gzipped beside it, pinned by hash and line count.

    results/<submitter>/<endpoint>/<stem>.json              the result
    results/<submitter>/<endpoint>/<stem>.events.jsonl.gz   its journal (`epbench submit`)
    result["evidence"] = {"sha256": ..., "lines": ..., "bytes": ...}   of the journal's bytes

The hash is over the uncompressed journal, so it is fixed when the run ends (`epbench run`
writes it) and does not depend on how the file was compressed. In a run folder the journal is
still `events.jsonl` beside `result.json`; `journal_path` finds either.

Caps (a journal is untrusted input, and gzip can expand a small file a thousandfold):
a compressed journal over MAX_COMPRESSED_BYTES is refused before it is opened, and reading
stops at MAX_JOURNAL_BYTES of uncompressed bytes. A request line is 300-900 bytes (its
inter-token gaps are most of it) and compresses to about a quarter of that, so 32 MiB holds
over 100,000 requests: a full sweep of the shipped workloads is under 20,000. docs/evidence.md
has the measured figures.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

SUFFIX = ".events.jsonl.gz"
RUN_JOURNAL = "events.jsonl"
MAX_COMPRESSED_BYTES = 32 * 1024 * 1024
MAX_JOURNAL_BYTES = 256 * 1024 * 1024


class EvidenceError(ValueError):
    """The journal is missing, too large, damaged or not the one the result names."""


def journal_path(result_path: Path) -> Path | None:
    """The journal beside a result: `<stem>.events.jsonl.gz`, or a run folder's
    `events.jsonl` beside its `result.json`; None when neither exists."""
    packed = result_path.with_name(result_path.stem + SUFFIX)
    if packed.is_file():
        return packed
    plain = result_path.with_name(RUN_JOURNAL)
    if result_path.name == "result.json" and plain.is_file():
        return plain
    return None


def describe(data: bytes) -> dict[str, Any]:
    """The result's `evidence` block for a journal's (uncompressed) bytes."""
    return {
        "sha256": hashlib.sha256(data).hexdigest(),
        "lines": data.count(b"\n"),
        "bytes": len(data),
    }


def pack(data: bytes, dest: Path) -> None:
    """Write the journal gzipped (mtime 0: the same journal gives the same file)."""
    dest.write_bytes(gzip.compress(data, compresslevel=6, mtime=0))


def read_bytes(path: Path) -> bytes:
    """The journal's uncompressed bytes, within the caps; EvidenceError otherwise."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise EvidenceError(f"cannot read the journal ({type(exc).__name__})") from None
    if path.name.endswith(".gz"):
        if size > MAX_COMPRESSED_BYTES:
            raise EvidenceError(
                f"the journal is {size} bytes compressed; the cap is {MAX_COMPRESSED_BYTES}"
            )
        inflater = zlib.decompressobj(wbits=31)
        try:
            data = inflater.decompress(path.read_bytes(), MAX_JOURNAL_BYTES + 1)
        except zlib.error:
            raise EvidenceError("the journal is not a valid gzip file") from None
        if len(data) > MAX_JOURNAL_BYTES:
            raise EvidenceError(f"the journal inflates past {MAX_JOURNAL_BYTES} bytes")
        if not inflater.eof:
            raise EvidenceError("the journal's gzip stream is truncated")
        return data
    if size > MAX_JOURNAL_BYTES:
        raise EvidenceError(f"the journal is {size} bytes; the cap is {MAX_JOURNAL_BYTES}")
    return path.read_bytes()


def check_bytes(data: bytes, pinned: Mapping[str, Any]) -> None:
    """EvidenceError unless the journal's bytes are the ones the result pins."""
    actual = describe(data)
    for key in ("sha256", "lines", "bytes"):
        if key in pinned and pinned[key] != actual[key]:
            raise EvidenceError(
                f"the journal's {key} is {actual[key]}, the result pins {pinned[key]}: "
                "this is not the journal the result was computed from"
            )


def load(path: Path, pinned: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The journal's records, after checking its bytes against the result's `evidence`."""
    data = read_bytes(path)
    check_bytes(data, pinned)
    records = []
    for number, line in enumerate(data.split(b"\n"), 1):
        if not line:
            continue
        try:
            record = _DECODER.decode(line.decode("utf-8"))
        except ValueError:
            raise EvidenceError(f"journal line {number} is not JSON") from None
        if not isinstance(record, dict):
            raise EvidenceError(f"journal line {number} is not an object")
        records.append(record)
    return records


def _finite(text: str) -> float:
    value = float(text)
    if value in (_INF, -_INF):
        raise ValueError(f"{text} overflows to infinity")
    return value


_INF = float("inf")


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


# One decoder for every line (json.loads with hooks would build a new one per call).
_DECODER = json.JSONDecoder(parse_constant=_refuse, parse_float=_finite)
