"""Reading BFCL's data: from the `bfcl-eval` wheel (a zip, never installed) or a folder.

BFCL v4 ships its questions as JSON lines in `bfcl_eval/data/BFCL_v4_<category>.json` and the
accepted answers in `bfcl_eval/data/possible_answer/BFCL_v4_<category>.json`. A folder may be
that `data/` folder itself or any folder above it (an unpacked wheel). Nothing is executed:
the files are read as text and parsed as JSON.

The archive is untrusted. A member is read through a byte limit (`MAX_MEMBER_BYTES`, counted
on the bytes that come out, never on the sizes the zip declares), in blocks whose inflated
size zlib bounds, so a member that declares 100 bytes and inflates to 200 MB costs one block
of memory; only stored and deflated members are read (bzip2 and LZMA cannot be bounded that
way). Every malformed input (not a zip, a truncated one, a bad CRC, text that is not UTF-8 or
JSON, an entry of another shape) is one `InputError` naming the file, the line and what is
wrong (`epbench.generator.importers.bfcl_shape`).
"""

from __future__ import annotations

import json
import re
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from epbench.core.errors import InputError
from epbench.generator.importers.bfcl_shape import ShapeError, answer_shape, entry_shape

CATEGORIES = (
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_irrelevance",
    "simple_java",
    "simple_javascript",
)
MAX_MEMBER_BYTES = 64 * 1024 * 1024
_BLOCK = 1024 * 1024
_READABLE = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, RuntimeError,
               NotImplementedError)
"""What reading a damaged member raises: bad CRC or header, truncated data, a stream zlib
refuses, encryption (RuntimeError), an unknown method."""


@dataclass(frozen=True)
class Entry:
    """One BFCL test entry: its id, the question's messages, its functions, and the ground
    truth (None for the irrelevance categories, which expect no call)."""

    id: str
    messages: list[dict[str, Any]]
    functions: list[dict[str, Any]]
    ground_truth: list[dict[str, Any]] | None


def read_limited(handle: IO[bytes], what: str) -> bytes:
    """Every byte `handle` gives, at most MAX_MEMBER_BYTES (InputError past it), read in
    blocks so that no single read inflates more than one block."""
    data = bytearray()
    while True:
        block = handle.read(min(_BLOCK, MAX_MEMBER_BYTES + 1 - len(data)))
        if not block:
            return bytes(data)
        data += block
        if len(data) > MAX_MEMBER_BYTES:
            raise InputError(f"{what}: over {MAX_MEMBER_BYTES >> 20} MiB once inflated "
                             "(reading stopped there)")


class Source:
    """The BFCL data files of a wheel or folder, by their path relative to `data/`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._files: dict[str, tuple[str, Path | None]] = {}  # rel -> (zip member, file)
        self.version = "unknown"
        if path.is_file():
            self._open_zip(path)
        elif path.is_dir():
            self._open_dir(path)
        else:
            raise InputError(f"{path}: no such BFCL wheel or data folder")
        if not any(rel.startswith("BFCL_v4_") for rel in self._files):
            raise InputError(
                f"{path}: no BFCL_v4_*.json data files (expected bfcl_eval/data/ inside a "
                "bfcl-eval wheel, or that folder)"
            )

    def _open_zip(self, path: Path) -> None:
        try:
            self._zip: zipfile.ZipFile | None = zipfile.ZipFile(path)
            infos = self._zip.infolist()
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            raise InputError(f"{path}: not a wheel (zip) file: {_said(exc)}") from None
        for info in infos:
            match = re.search(r"(?:^|/)bfcl_eval/data/(.+\.json)$", info.filename)
            if match:
                self._files[match.group(1)] = (info.filename, None)
            meta = re.match(r"bfcl_eval-([^/]+)\.dist-info/METADATA$", info.filename)
            if meta:
                self.version = meta.group(1)[:100]
        if self.version == "unknown":
            named = re.match(r"bfcl_eval-([0-9][^-]*)-", path.name)
            if named:
                self.version = named.group(1)

    def _open_dir(self, path: Path) -> None:
        self._zip = None
        data = path
        if not any(path.glob("BFCL_v4_*.json")):
            found = sorted(path.glob("**/bfcl_eval/data"))
            data = found[0] if found else path
        for file in data.glob("**/*.json"):
            self._files[file.relative_to(data).as_posix()] = ("", file)
        for meta in sorted(path.glob("**/bfcl_eval-*.dist-info/METADATA")):
            self.version = meta.parent.name[len("bfcl_eval-") : -len(".dist-info")]

    def _bytes(self, rel: str) -> bytes:
        member, file = self._files[rel]
        where = f"{self.path}: {member or rel}"
        if file is not None:
            try:
                with file.open("rb") as handle:
                    return read_limited(handle, where)
            except OSError as exc:
                raise InputError(f"{where}: cannot be read: {_said(exc)}") from None
        assert self._zip is not None
        info = self._zip.getinfo(member)
        if info.compress_type not in _READABLE:
            raise InputError(f"{where}: compressed with method {info.compress_type}; only "
                             "stored and deflated members are read")
        try:
            with self._zip.open(info) as handle:
                return read_limited(handle, where)
        except _ZIP_ERRORS as exc:
            raise InputError(f"{where}: a damaged archive member: {_said(exc)}") from None

    def _lines(self, rel: str) -> list[tuple[int, Any]]:
        """(line number, value) of each JSON line."""
        where = f"{self.path}: {rel}"
        try:
            text = self._bytes(rel).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{where}: not UTF-8 text (byte {exc.start})") from None
        out = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                out.append((n, json.loads(line)))
            except ValueError as exc:
                raise InputError(f"{where} line {n}: not JSON: {_said(exc)}") from None
            except RecursionError:
                raise InputError(f"{where} line {n}: nested too deeply") from None
        return out

    def entries(self, category: str) -> list[Entry]:
        """The category's entries, with their ground truth joined by id."""
        rel = f"BFCL_v4_{category}.json"
        if rel not in self._files:
            raise InputError(f"{self.path}: no {rel} in the BFCL data")
        answers: dict[str, list[dict[str, Any]]] = {}
        if "irrelevance" not in category:
            answer_rel = f"possible_answer/{rel}"
            if answer_rel not in self._files:
                raise InputError(f"{self.path}: no {answer_rel} in the BFCL data")
            for n, answer in self._lines(answer_rel):
                self._shaped(answer_shape, answer, answer_rel, n)
                answers[answer["id"]] = answer["ground_truth"]
        out = []
        for n, doc in self._lines(rel):
            self._shaped(entry_shape, doc, rel, n)
            turns = doc["question"]
            if len(turns) != 1:
                raise InputError(f"{self.path}: {rel} line {n} ({doc['id'][:100]!r}): not a "
                                 "single-turn entry")
            truth = None
            if "irrelevance" not in category:
                if doc["id"] not in answers:
                    raise InputError(f"{self.path}: {rel} line {n} ({doc['id'][:100]!r}): "
                                     "no possible answer")
                truth = answers[doc["id"]]
            out.append(Entry(doc["id"], list(turns[0]), list(doc["function"]), truth))
        return out

    def _shaped(self, check: Any, doc: Any, rel: str, n: int) -> None:
        try:
            check(doc)
        except ShapeError as exc:
            raise InputError(f"{self.path}: {rel} line {n}: {exc}") from None


def _said(exc: BaseException) -> str:
    """An exception's message on one line, at most 200 characters."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:200]
