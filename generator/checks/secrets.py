"""No file may carry something that looks like a credential.

Endpoint files name the environment variable that holds a key (`api_key_env`), never the key.
Every string in every document is scanned for well-known key shapes (OpenAI-style `sk-...`,
GitHub `ghp_...`, AWS `AKIA...`, Slack `xox.-`, `Bearer <token>`, MLCommons `mlc_...`) and for
long high-entropy tokens (32+ characters mixing upper case, lower case and digits).
Hex digests (sha256, git shas) are all lower case and do not match.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from typing import Any

from epcore.findings import Finding, pointer_from_path
from generator.checks.base import check

SECRET = check(
    "secret.suspected", "reject", "no value looks like an API key or token",
    "remove the credential from the file (and revoke it: it may have been published); "
    "put only the NAME of its environment variable in api_key_env",
)
KEY_ENV = check(
    "endpoint.api-key-env", "reject", "api_key_env is an environment variable NAME",
    "set api_key_env to a variable name such as ACME_API_KEY and export the key in your shell",
)

_KEY_SHAPES = re.compile(
    r"(?:\bsk-[A-Za-z0-9_-]{16,}|\bghp_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}"
    r"|\bAKIA[0-9A-Z]{16}\b|\bxox[abprs]-[A-Za-z0-9-]{10,}|\bmlc_[A-Za-z0-9_-]{16,}"
    r"|\bBearer\s+[A-Za-z0-9._~+/=-]{16,}|\bhf_[A-Za-z0-9]{20,})"
)
_PREFIXES = ("sk-", "ghp_", "github_pat_", "AKIA", "xox", "mlc_", "Bearer", "hf_")
_TOKEN = re.compile(r"[A-Za-z0-9+/_=-]{32,}")
_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]{0,99}$")
MIN_ENTROPY_BITS = 4.0
MAX_STRINGS = 100_000


def entropy(text: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(text)
    return -sum(c / len(text) * math.log2(c / len(text)) for c in counts.values())


def looks_like_secret(text: str) -> bool:
    """True for a known key shape, or a long token mixing cases and digits with high entropy."""
    if _has_key_shape(text):
        return True
    return any(_token_is_secret(token) for token in _TOKEN.findall(text))


def _has_key_shape(text: str) -> bool:
    """A well-known key shape (substring prefilter first: the regex is the slow part)."""
    return any(prefix in text for prefix in _PREFIXES) and bool(_KEY_SHAPES.search(text))


def _token_is_secret(token: str) -> bool:
    return (any(c.isupper() for c in token) and any(c.islower() for c in token)
            and any(c.isdigit() for c in token) and entropy(token) >= MIN_ENTROPY_BITS)


def scan(document: Any, file: str, text: str | None = None) -> list[Finding]:
    """A finding for every string (or key) in the document that looks like a credential.

    One regex pass over the document's JSON text first (fast, C speed; the file's own text
    when it has no escapes): only when something there looks like a key is the tree walked to
    name each place."""
    if text is None or "\\" in text:  # escapes could hide a key from a scan of the raw text
        text = json.dumps(document, ensure_ascii=False)
    if not _has_key_shape(text) and not any(
        _token_is_secret(token) for token in _TOKEN.findall(text)
    ):
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
        elif isinstance(item, str) and looks_like_secret(item):
            out.append(SECRET.at(file, pointer_from_path(where),
                                 "this value looks like an API key or token (not shown)"))
    return out


def check_key_env(endpoint: dict[str, Any], file: str, pointer: str = "") -> list[Finding]:
    """api_key_env names a variable; it is not the key itself."""
    value = endpoint.get("api_key_env")
    if value is None:
        return []
    if not isinstance(value, str) or not _ENV_NAME.match(value) or looks_like_secret(value):
        return [KEY_ENV.at(file, f"{pointer}/api_key_env",
                           "api_key_env is not an environment variable name")]
    return []
