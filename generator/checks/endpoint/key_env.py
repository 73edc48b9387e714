"""An endpoint names the environment variable that holds its key (`api_key_env`), never the
key: a NAME, not one that looks like a credential (epbench.core.credentials, the rules of
epbench.generator.checks.secret), and not one the benchmark job exports itself.
"""

from __future__ import annotations

import re
from typing import Any

from epbench.core.credentials import looks_like_secret
from epbench.core.findings import Finding
from epbench.core.secret_binding import reserved_env
from epbench.generator.checks.base import Subject, check, on_endpoint, on_result

KEY_ENV = check(
    "endpoint.api-key-env", "reject", "api_key_env is an environment variable NAME",
    "set api_key_env to a variable name such as ACME_API_KEY and export the key in your shell",
)

_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]{0,99}$")


def check_key_env(endpoint: dict[str, Any], file: str, pointer: str = "") -> list[Finding]:
    """api_key_env names a variable, not the key itself, and not one `epbench matrix` refuses
    (`epbench.core.secret_binding.reserved_env`)."""
    value = endpoint.get("api_key_env")
    if value is None:
        return []
    if not isinstance(value, str) or not _ENV_NAME.match(value) or looks_like_secret(value):
        return [KEY_ENV.at(file, f"{pointer}/api_key_env",
                           "api_key_env is not an environment variable name")]
    if reserved_env(value):
        return [KEY_ENV.at(file, f"{pointer}/api_key_env",
                           f"{value!r} is a reserved environment variable name (the benchmark "
                           "job would export the key over it)",
                           "name the key's own variable, e.g. ACME_API_KEY")]
    return []


@on_result(120)
def _on_result(s: Subject) -> list[Finding]:
    return check_key_env(s.doc["endpoint"], s.file, "/endpoint")


@on_endpoint(20)
def _on_endpoint(s: Subject) -> list[Finding]:
    return check_key_env(s.doc, s.file)
