"""Loading endpoint files: safe load, schema check, and the API key from the environment.

The key is read from the variable the file names (`api_key_env`), kept in memory only, and
never written to a result, a journal or a log line (it is excluded from the dataclass repr).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from epcore.documents import load_document
from epcore.errors import InputError, RunError
from epcore.schema import check_schema


@dataclass(frozen=True)
class Endpoint:
    """A checked endpoint file and what the client needs from it."""

    path: Path
    doc: dict[str, Any]
    base_url: str
    headers: dict[str, str]
    timeout_s: float | None
    api_key: str | None = field(default=None, repr=False)
    omit: tuple[str, ...] = ()  # request settings the endpoint refuses (`request.omit`)

    @property
    def emulator(self) -> dict[str, Any] | None:
        block = self.doc.get("emulator")
        return block if isinstance(block, dict) else None


def load_endpoint(path: Path, environ: dict[str, str] | None = None) -> Endpoint:
    """The endpoint at `path`; InputError for a bad file, RunError for a missing key."""
    doc = load_document(path)
    if not isinstance(doc, dict):
        raise InputError(f"{path}: an endpoint file must be a mapping with `kind: endpoint`")
    findings = check_schema(doc, "endpoint", str(path))
    if findings:
        first = findings[0]
        raise InputError(f"{path}:{first.pointer or '/'}: {first.message} ({first.fix})")
    env = os.environ if environ is None else environ
    key_name = doc.get("api_key_env")
    api_key = None
    if key_name:
        api_key = env.get(key_name)
        if not api_key:
            raise RunError(
                f"{path}: api_key_env names {key_name}, which is not set; "
                f"export {key_name}=<your key>"
            )
    request = doc.get("request") or {}
    return Endpoint(
        path=path,
        doc=doc,
        base_url=str(doc["base_url"]),
        headers=dict(request.get("headers") or {}),
        timeout_s=request.get("timeout_s"),
        api_key=api_key,
        omit=tuple(request.get("omit") or ()),
    )
