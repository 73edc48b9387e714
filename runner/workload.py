"""Loading workload files: one loader (safe load, sha256 of the bytes, the schema of its kind)
and one typed view of a serving workload.

`load_workload_file(path)` is the only place a workload file is read and checked: the run,
`--resume` and the emulator's agentic player all start from its `LoadedWorkload`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from epbench.core.documents import parse_document, read_bytes_limited
from epbench.core.errors import InputError
from epbench.core.findings import problems_text
from epbench.core.schema import check_schema

DEFAULT_TIMEOUT_S = 120.0
KINDS = ("serving-workload", "agentic-workload")


@dataclass(frozen=True)
class LoadedWorkload:
    """A workload file read once and checked against the schema of its kind."""

    path: Path
    doc: dict[str, Any]
    sha256: str
    kind: str  # "serving-workload" | "agentic-workload"

    @property
    def id(self) -> str:
        return str(self.doc.get("id", self.path.stem))

    @property
    def version(self) -> str:
        return str(self.doc.get("version", "0"))

    @property
    def seed(self) -> int:
        seed = self.doc.get("seed", 0)
        return seed if isinstance(seed, int) else 0

    @property
    def timeout_s(self) -> float:
        return float(self.doc.get("timeout_s", DEFAULT_TIMEOUT_S))


def load_workload_file(path: Path) -> LoadedWorkload:
    """Read, hash and schema-check a workload file; InputError names the first problem."""
    doc, sha = read_workload(path)
    kind = doc.get("kind")
    if kind not in KINDS:
        raise InputError(
            f"{path}:/kind: not a workload (kind {kind!r}); use a serving or agentic workload"
        )
    findings = check_schema(doc, str(kind), str(path))
    if findings:
        raise InputError(problems_text(findings))
    return LoadedWorkload(path=Path(path), doc=doc, sha256=sha, kind=str(kind))


@dataclass(frozen=True)
class ServingWorkload:
    """A checked serving workload file."""

    path: Path
    doc: dict[str, Any]
    sha256: str
    id: str
    version: str
    seed: int
    pattern: str
    load: dict[str, Any]
    prompts: dict[str, Any]
    quick: dict[str, Any] = field(default_factory=dict)
    slo: dict[str, float] = field(default_factory=dict)
    sampling: dict[str, Any] = field(default_factory=dict)
    retry: dict[str, Any] = field(default_factory=dict)
    timeout_s: float = DEFAULT_TIMEOUT_S
    bounds: dict[str, Any] = field(default_factory=dict)

    @property
    def max_tokens(self) -> int:
        return int(self.prompts["max_tokens"])


def read_workload(path: Path) -> tuple[dict[str, Any], str]:
    """(document, sha256 of its bytes) for any workload file; InputError if unreadable."""
    data = read_bytes_limited(path)
    doc = parse_document(data, path)
    if not isinstance(doc, dict):
        raise InputError(f"{path}: a workload file must be a mapping with a `kind`")
    return doc, hashlib.sha256(data).hexdigest()


def load_serving_workload(path: Path) -> ServingWorkload:
    """The serving workload at `path`, schema-checked; InputError names the first problem."""
    loaded = load_workload_file(path)
    if loaded.kind != "serving-workload":
        raise InputError(f"{path}:/kind: {loaded.kind}, where a serving workload is needed")
    return serving_workload(loaded)


def serving_workload(loaded: LoadedWorkload) -> ServingWorkload:
    """The typed view of a loaded serving workload."""
    doc = loaded.doc
    return ServingWorkload(
        path=loaded.path,
        doc=doc,
        sha256=loaded.sha256,
        id=doc["id"],
        version=str(doc["version"]),
        seed=int(doc["seed"]),
        pattern=doc["load"]["pattern"],
        load=doc["load"],
        prompts=doc["prompts"],
        quick=doc.get("quick") or {},
        slo=doc.get("slo") or {},
        sampling=doc.get("sampling") or {},
        retry=doc.get("retry") or {},
        timeout_s=float(doc.get("timeout_s", DEFAULT_TIMEOUT_S)),
        bounds=doc.get("bounds") or {},
    )
