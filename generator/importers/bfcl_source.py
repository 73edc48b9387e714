"""Reading BFCL's data: from the `bfcl-eval` wheel (a zip, never installed) or a folder.

BFCL v4 ships its questions as JSON lines in `bfcl_eval/data/BFCL_v4_<category>.json` and the
accepted answers in `bfcl_eval/data/possible_answer/BFCL_v4_<category>.json`. A folder may be
that `data/` folder itself or any folder above it (an unpacked wheel). Nothing is executed:
the files are read as text and parsed as JSON.
"""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from epcore.errors import InputError

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
)
MAX_MEMBER_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Entry:
    """One BFCL test entry: its id, the question's messages, its functions, and the ground
    truth (None for the irrelevance categories, which expect no call)."""

    id: str
    messages: list[dict[str, Any]]
    functions: list[dict[str, Any]]
    ground_truth: list[dict[str, Any]] | None


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
        except zipfile.BadZipFile as exc:
            raise InputError(f"{path}: not a wheel (zip) file: {exc}") from exc
        for info in self._zip.infolist():
            match = re.search(r"(?:^|/)bfcl_eval/data/(.+\.json)$", info.filename)
            if match:
                if info.file_size > MAX_MEMBER_BYTES:
                    raise InputError(f"{path}: {info.filename} is over 64 MB")
                self._files[match.group(1)] = (info.filename, None)
            meta = re.match(r"bfcl_eval-([^/]+)\.dist-info/METADATA$", info.filename)
            if meta:
                self.version = meta.group(1)
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

    def _lines(self, rel: str) -> list[dict[str, Any]]:
        member, file = self._files[rel]
        if file is not None:
            text = file.read_text("utf-8")
        else:
            assert self._zip is not None
            text = self._zip.read(member).decode("utf-8")
        out = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                out.append(json.loads(line))
            except ValueError as exc:
                raise InputError(f"{self.path}: {rel} line {n}: not JSON: {exc}") from exc
        return out

    def has(self, category: str) -> bool:
        return f"BFCL_v4_{category}.json" in self._files

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
            answers = {a["id"]: a["ground_truth"] for a in self._lines(answer_rel)}
        out = []
        for doc in self._lines(rel):
            turns = doc.get("question") or []
            if len(turns) != 1:
                raise InputError(f"{self.path}: {rel} {doc.get('id')}: not a single-turn entry")
            truth = None
            if "irrelevance" not in category:
                if doc["id"] not in answers:
                    raise InputError(f"{self.path}: {rel} {doc['id']}: no possible answer")
                truth = answers[doc["id"]]
            out.append(Entry(doc["id"], list(turns[0]), list(doc["function"]), truth))
        return out
