"""Loading endpoint files: safe load, schema check, and the API key from the environment.

The key is read from the variable the file names (`api_key_env`), kept in memory only, and
never written to a result, a journal or a log line (it is excluded from the dataclass repr).
Header values work the same way: the file holds `${NAME}` references only (the schema allows
nothing else), they are read from the environment here, and `doc` (what plans and results
copy) keeps the header names only (`request.header_names`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from epbench.core.documents import load_document
from epbench.core.errors import InputError, RunError
from epbench.core.findings import problems_text
from epbench.core.pricing import card_on
from epbench.core.schema import check_schema

_REFERENCE = re.compile(r"^\$\{([A-Z_][A-Z0-9_]{0,99})\}$")


@dataclass(frozen=True)
class Endpoint:
    """A checked endpoint file and what the client needs from it."""

    path: Path
    doc: dict[str, Any]
    base_url: str
    headers: dict[str, str] = field(repr=False)
    timeout_s: float | None
    api_key: str | None = field(default=None, repr=False)
    omit: tuple[str, ...] = ()  # request settings the endpoint refuses (`request.omit`)
    # vendor options merged into every request body (`request.extra_body`)
    extra_body: dict[str, Any] = field(default_factory=dict)

    @property
    def secrets(self) -> list[str]:
        """Every value this run sends that must never be stored: the key and header values."""
        return [v for v in (self.api_key, *self.headers.values()) if v]

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
        raise InputError(problems_text(findings))
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
    if isinstance(doc.get("pricing"), list):  # a price history: the result pins today's card
        card = card_on(doc["pricing"])
        if card is None:
            raise InputError(f"{path}:/pricing: no price card has taken effect yet")
        doc = {**doc, "pricing": card}
    request = doc.get("request") or {}
    headers = _resolve_headers(path, request.get("headers") or {}, env)
    return Endpoint(
        path=path,
        doc=public_doc(doc),
        base_url=str(doc["base_url"]),
        headers=headers,
        timeout_s=request.get("timeout_s"),
        api_key=api_key,
        omit=tuple(request.get("omit") or ()),
        extra_body=dict(request.get("extra_body") or {}),
    )


# What epbench measures with: `request.extra_body` can never set or change these (the schema
# refuses them; with_extra_body skips them and anything the request already has).
RESERVED_BODY_KEYS = frozenset({
    "model", "messages", "input", "instructions", "system", "prompt", "stream",
    "stream_options", "max_tokens", "max_completion_tokens", "max_output_tokens", "min_tokens",
    "ignore_eos", "n", "best_of", "tools", "tool_choice", "parallel_tool_calls", "temperature",
    "top_p", "top_k", "seed", "stop", "stop_sequences", "logprobs", "echo", "store",
})


def with_extra_body(body: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """`body` (a native request body) with the endpoint's extra fields added; a field the
    body already has or that epbench measures with is never overridden."""
    if not extra:
        return body
    added = {k: v for k, v in extra.items() if k not in body and k not in RESERVED_BODY_KEYS}
    return {**body, **added}


def _resolve_headers(path: Path, headers: dict[str, str], env: Any) -> dict[str, str]:
    """Each `${NAME}` header value read from the environment; RunError when one is unset."""
    out = {}
    for name, value in headers.items():
        match = _REFERENCE.match(str(value))
        if match is None:  # the schema already refused it; never send a literal
            raise InputError(f"{path}:/request/headers/{name}: a header value must be a "
                             "${NAME} reference to an environment variable")
        resolved = env.get(match.group(1))
        if not resolved:
            raise RunError(f"{path}: header {name} references ${{{match.group(1)}}}, which is "
                           f"not set; export {match.group(1)}=<value>")
        out[name] = resolved
    return out


def public_doc(doc: dict[str, Any]) -> dict[str, Any]:
    """The endpoint as plans and results copy it: header values dropped, names kept."""
    request = doc.get("request")
    if not isinstance(request, dict) or "headers" not in request:
        return doc
    names = sorted(request["headers"])
    public = {k: v for k, v in request.items() if k != "headers"}
    if names:
        public["header_names"] = names
    return {**doc, "request": public}
