"""No file may carry something that looks like a credential.

Endpoint files name the environment variable that holds a key (`api_key_env`,
epbench.generator.checks.endpoint.key_env), never the key.
Every string (and key) in every document is scanned with the rules of `epbench.core.credentials`:
well-known key prefixes, random hex runs (a 32-digit lower-case hex key is Azure's shape) and
long high-entropy base64-like tokens. A hex run is accepted only where the document holds a
digest or an id made from one: under a key named like `sha256`, `git_sha`, `commit`, `digest`
or `run_id` (importers derive run ids from a hash of the run).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from epbench.core.credentials import (
    PREFIXES,
    TOKEN,
    entropy,
    has_key_shape,
    hex_shaped,
    looks_like_secret,
    random_hex,
    token_is_secret,
)
from epbench.core.findings import Finding, pointer_from_path
from epbench.generator.checks.base import Subject, check, on_result

__all__ = ["SECRET", "entropy", "looks_like_secret", "scan"]

SECRET = check(
    "secret.suspected", "reject", "no value looks like an API key or token",
    "remove the credential from the file (and revoke it: it may have been published); "
    "put only the NAME of its environment variable in api_key_env",
)

_DIGEST_KEY = re.compile(r"(?:^|_)(?:id|sha|sha1|sha256|sha512|digest|commit|hash)$")
_DIGEST_BEFORE = re.compile(r'"([A-Za-z0-9_]{1,40})"\s*:\s*"$')
MAX_STRINGS = 100_000


def _digest_key(key: object) -> bool:
    return isinstance(key, str) and bool(_DIGEST_KEY.search(key.lower()))


# The fast pass works on the ASCII bytes of the text, at C speed: a key prefix can only be
# where it still is once every byte that no prefix holds is dropped (dropping bytes can join
# new ones, never part one: at worst the full rule then runs for nothing); a TOKEN is a run
# of 32+ bytes of its class, found by mapping that class to one byte.
_PREFIX_BYTES = frozenset("".join(PREFIXES).encode())
_NOT_IN_PREFIX = bytes(b for b in range(256) if b not in _PREFIX_BYTES)
_PREFIX_NEEDLES = tuple(prefix.encode() for prefix in PREFIXES)
_TOKEN_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_=-")
_TOKEN_CLASS = bytes(0x61 if b in _TOKEN_BYTES else 0x20 for b in range(256))
_TOKEN_RUN = b"a" * 32


def _key_shape(text: str, ascii_text: bytes | None) -> bool:
    """has_key_shape(text), with the substring prefilter on the prefix bytes only."""
    if ascii_text is None:
        return has_key_shape(text)
    kept = ascii_text.translate(None, _NOT_IN_PREFIX)
    return any(needle in kept for needle in _PREFIX_NEEDLES) and has_key_shape(text)


def _tokens(text: str, ascii_text: bytes | None) -> Iterator[re.Match[str]]:
    """TOKEN.finditer(text): the same matches, each run found by a substring search."""
    if ascii_text is None:
        yield from TOKEN.finditer(text)
        return
    classes = ascii_text.translate(_TOKEN_CLASS)
    start = classes.find(_TOKEN_RUN)
    while start >= 0:
        token = TOKEN.match(text, start)
        if token is None:  # cannot happen: the class is TOKEN's
            raise AssertionError(start)
        yield token
        start = classes.find(_TOKEN_RUN, token.end())


def _suspicious(text: str) -> bool:
    """The fast pass over a document's JSON text: anything that might be a credential? Hex
    runs that are the values of digest keys (`"sha256": "..."`) do not count."""
    ascii_text = text.encode("ascii") if text.isascii() else None
    if _key_shape(text, ascii_text):
        return True
    for token in _tokens(text, ascii_text):
        if token_is_secret(token.group()):
            return True
        for run in hex_shaped(text, token):  # hex_runs, the digest key looked at first
            key = _DIGEST_BEFORE.search(text, max(0, run.start() - 80), run.start())
            if (key is None or not _digest_key(key.group(1))) and random_hex(run.group()):
                return True
    return False


def scan(document: Any, file: str, text: str | None = None) -> list[Finding]:
    """A finding for every string (or key) in the document that looks like a credential.

    One regex pass over the document's JSON text first (fast, C speed; the file's own text
    when it has no escapes): only when something there looks like a key is the tree walked to
    name each place."""
    if text is None or "\\" in text:  # escapes could hide a key from a scan of the raw text
        text = json.dumps(document, ensure_ascii=False)
    if not _suspicious(text):
        return []
    out: list[Finding] = []
    stack: list[tuple[Any, list[str | int]]] = [(document, [])]
    seen = 0
    while stack and seen < MAX_STRINGS:
        item, where = stack.pop()
        seen += 1
        if isinstance(item, dict):
            for key, value in item.items():
                if isinstance(key, str) and looks_like_secret(key):
                    out.append(SECRET.at(file, pointer_from_path(where),
                                         "a key of this object looks like an API key or token"))
                stack.append((value, [*where, key]))
        elif isinstance(item, list):
            stack.extend((v, [*where, i]) for i, v in enumerate(item))
        elif isinstance(item, str) and looks_like_secret(
                item, digest=bool(where) and _digest_key(where[-1])):
            out.append(SECRET.at(file, pointer_from_path(where),
                                 "this value looks like an API key or token (not shown)"))
    return out


HEADER_VALUES = check(
    "secret.header-values", "reject", "a result keeps the names of the headers a run sent, "
    "never their values",
    "re-run with a current epbench (it stores `request.header_names`), or replace "
    "`request.headers` with `header_names` listing the names only",
)


def check_header_values(result: dict[str, Any], file: str) -> list[Finding]:
    """A result must not carry `endpoint.request.headers` (values); names only."""
    request = (result.get("endpoint") or {}).get("request") or {}
    if "headers" in request:
        return [HEADER_VALUES.at(file, "/endpoint/request/headers",
                                 "the result stores header values (not shown)")]
    return []


@on_result(130)
def _on_result(s: Subject) -> list[Finding]:
    return check_header_values(s.doc, s.file)
