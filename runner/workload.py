"""Loading serving workload files: safe load, schema check, one typed view of what to run."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from epcore.documents import parse_document, read_bytes_limited
from epcore.errors import InputError
from epcore.schema import check_schema

DEFAULT_TIMEOUT_S = 120.0


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
    doc, sha = read_workload(path)
    findings = check_schema(doc, "serving-workload", str(path))
    if findings:
        first = findings[0]
        raise InputError(f"{path}:{first.pointer or '/'}: {first.message} ({first.fix})")
    return ServingWorkload(
        path=path,
        doc=doc,
        sha256=sha,
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
    )
