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

Validation streams the journal (`load`, `check_file`): blocks of 1 MiB are inflated, hashed
and split into lines by the journal's one reader (epbench.core.journal_file.read_lines,
strict), each line checked for its kind and shape as it comes (epbench.core.journal_lines),
so a bomb of `{}` lines stops at its second line and memory never holds the whole journal.
"""

from __future__ import annotations

import gzip
import hashlib
import zlib
from collections.abc import Iterator, Mapping, MutableMapping
from pathlib import Path
from typing import Any

from epbench.core import journal_columns, journal_file
from epbench.core.journal_records import RUN_JOURNAL, SUFFIX

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


class _Reader:
    """The journal's uncompressed bytes in blocks, within the caps, hashed and counted as they
    pass: nothing but one block (and one line) is ever held."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.digest = hashlib.sha256()
        self.size = 0
        self.lines = 0

    def blocks(self) -> Iterator[bytes]:
        try:
            size = self.path.stat().st_size
            handle = self.path.open("rb")
        except OSError as exc:
            raise EvidenceError(f"cannot read the journal ({type(exc).__name__})") from None
        packed = self.path.name.endswith(".gz")
        cap = MAX_COMPRESSED_BYTES if packed else MAX_JOURNAL_BYTES
        if size > cap:
            what = "bytes compressed" if packed else "bytes"
            raise EvidenceError(f"the journal is {size} {what}; the cap is {cap}")
        with handle:
            source = iter(lambda: handle.read(_BLOCK), b"")
            for block in (_inflate(source) if packed else source):
                self.size += len(block)
                if self.size > MAX_JOURNAL_BYTES:
                    raise EvidenceError(f"the journal inflates past {MAX_JOURNAL_BYTES} bytes")
                self.digest.update(block)
                self.lines += block.count(b"\n")
                yield block

    def described(self) -> dict[str, Any]:
        return {"sha256": self.digest.hexdigest(), "lines": self.lines, "bytes": self.size}


def _inflate(source: Iterator[bytes]) -> Iterator[bytes]:
    inflater = zlib.decompressobj(wbits=31)
    try:
        for chunk in source:
            while chunk and not inflater.eof:
                yield inflater.decompress(chunk, _BLOCK)
                chunk = inflater.unconsumed_tail
            if inflater.eof:
                return
        if not inflater.eof:
            raise EvidenceError("the journal's gzip stream is truncated")
    except zlib.error:
        raise EvidenceError("the journal is not a valid gzip file") from None


def read_bytes(path: Path) -> bytes:
    """The journal's uncompressed bytes, within the caps; EvidenceError otherwise (for small
    journals: validation streams them with `load` and `check_file`)."""
    return b"".join(_Reader(path).blocks())


def check_file(path: Path, pinned: Mapping[str, Any]) -> None:
    """EvidenceError unless the journal file (streamed, within the caps) is the one pinned."""
    reader = _Reader(path)
    for _ in reader.blocks():
        pass
    _check_described(reader.described(), pinned)


def _check_described(actual: Mapping[str, Any], pinned: Mapping[str, Any]) -> None:
    for key in ("sha256", "lines", "bytes"):
        if key in pinned and pinned[key] != actual[key]:
            raise EvidenceError(
                f"the journal's {key} is {actual[key]}, the result pins {pinned[key]}: "
                "this is not the journal the result was computed from"
            )


def load(path: Path, pinned: Mapping[str, Any],
         max_requests: int | None = None) -> list[MutableMapping[str, Any]]:
    """The journal's records, streamed: each line a JSON object of a known kind and shape
    (epbench.core.journal_lines), no duplicate key, no deeper than its MAX_DEPTH (the strict
    reader, epbench.core.journal_file), no more request lines than `max_requests`; then its
    bytes checked against the result's `evidence`.
    Request lines are held as columns (epbench.core.journal_columns: a Row each, read like the
    dict it was, inter-token gaps as `array('i')`); the other lines as dicts."""
    reader = _Reader(path)
    records: list[MutableMapping[str, Any]] = []
    table = journal_columns.Requests()
    try:
        for number, record in journal_file.read_lines(reader.blocks(), strict=True):
            if record.get("type", "request") != "request":
                records.append(record)
                continue
            if max_requests is not None and table.rows >= max_requests:
                raise EvidenceError(f"journal line {number}: more request lines than the "
                                    f"{max_requests} the workload's plan sends")
            records.append(table.append(record))
    except journal_file.JournalLineError as exc:
        raise EvidenceError(str(exc)) from None
    _check_described(reader.described(), pinned)
    return records


_BLOCK = 1 << 20
