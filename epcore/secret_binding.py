"""Which secret may be sent to which endpoint, from which runners: maintainers decide, not the
endpoint file.

An endpoint file arrives by pull request and names a key variable (`api_key_env`), a base URL
and runner labels. Taken at its word, it could ask the scheduled benchmark to send another
endpoint's secret to a host of its choosing, or to run on a self-hosted machine. So the
benchmark matrix only schedules what the allow-list binds:

    # .github/benchmark-allowlist.yaml (CODEOWNERS: maintainers only)
    runners: [ubuntu-24.04]
    endpoints:
      acme-llama-3-1-8b:
        secret: ACME_API_KEY       # the one secret sent to this endpoint (null: no key)
        host: api.acme.example     # the one host it is sent to

A scheduled endpoint must be listed by id; its `api_key_env` must be that secret, its base URL
an https URL on that host (http only on loopback), and each runner label must be listed.
Key variable names that would shadow the runner's own environment are refused everywhere
(`reserved_env`): the benchmark job exports the key under that name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from epbench.core.documents import load_document
from epbench.core.errors import InputError

ALLOWLIST = Path(".github") / "benchmark-allowlist.yaml"
_RESERVED_ENV = re.compile(r"^(PATH|HOME|SHELL|USER|PWD|IFS|ENV|BASH_ENV|CI|LD_.*|PYTHON.*|"
                           r"GITHUB_.*|RUNNER_.*|ACTIONS_.*|EPBENCH_.*|GIT_.*|PIP_.*|SSL_.*|"
                           r"REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE|HTTPS?_PROXY|NO_PROXY|ALL_PROXY|"
                           r"https?_proxy|no_proxy|all_proxy|TMPDIR)$")
_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]{0,99}$")
_HOST = re.compile(r"^[a-z0-9.-]{1,253}$")
_LABEL = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def reserved_env(name: str) -> bool:
    """True for a variable name the benchmark job must not export a key under."""
    return bool(_RESERVED_ENV.match(name))


@dataclass(frozen=True)
class Binding:
    """One endpoint id's secret (None: no key) and the host it may be sent to."""

    secret: str | None
    host: str


@dataclass(frozen=True)
class Allowlist:
    """The maintainers' bindings and runner labels."""

    endpoints: dict[str, Binding]
    runners: frozenset[str]


def load_allowlist(path: Path) -> Allowlist:
    """The allow-list at `path`; InputError (one line) when it is missing or malformed."""
    if not path.is_file():
        raise InputError(f"{path}: no allow-list -- scheduled benchmarks need the maintainers' "
                         "list of endpoint secrets, hosts and runner labels")
    doc: Any = load_document(path)
    if not isinstance(doc, dict) or set(doc) - {"endpoints", "runners"}:
        raise InputError(f"{path}: the allow-list holds `endpoints` and `runners` only")
    runners = doc.get("runners") or []
    if not isinstance(runners, list) or not all(
            isinstance(r, str) and _LABEL.match(r) for r in runners):
        raise InputError(f"{path}:/runners: a list of runner labels ([A-Za-z0-9._-])")
    endpoints: dict[str, Binding] = {}
    for endpoint_id, entry in (doc.get("endpoints") or {}).items():
        where = f"{path}:/endpoints/{endpoint_id}"
        if not isinstance(entry, dict) or set(entry) != {"secret", "host"}:
            raise InputError(f"{where}: each endpoint has exactly `secret` and `host`")
        secret, host = entry["secret"], entry["host"]
        if secret is not None and not (isinstance(secret, str) and _ENV_NAME.match(secret)
                                       and not reserved_env(secret)):
            raise InputError(f"{where}/secret: a secret name such as ACME_API_KEY, or null")
        if not isinstance(host, str) or not _HOST.match(host):
            raise InputError(f"{where}/host: a host name such as api.acme.example")
        endpoints[str(endpoint_id)] = Binding(secret, host)
    return Allowlist(endpoints, frozenset(runners))


def binding_problems(document: dict[str, Any], allow: Allowlist) -> list[tuple[str, str]]:
    """(JSON pointer, what is wrong) for a scheduled endpoint the allow-list does not bind."""
    endpoint_id = str(document.get("id"))
    binding = allow.endpoints.get(endpoint_id)
    if binding is None:
        return [("/id", f"endpoint {endpoint_id!r} is not in the allow-list: a maintainer binds "
                        "its secret and host first")]
    out = []
    key_env = document.get("api_key_env") or None
    if key_env != binding.secret:
        out.append(("/api_key_env", f"the allow-list binds secret {binding.secret!r} to "
                                    f"{endpoint_id!r}, not {key_env!r}"))
    url = urlsplit(str(document.get("base_url", "")))
    host = (url.hostname or "").lower()
    if host != binding.host:
        out.append(("/base_url", f"the allow-list sends {endpoint_id!r}'s secret to "
                                 f"{binding.host!r} only, not {host[:100]!r}"))
    elif url.scheme != "https" and not (url.scheme == "http" and host in _LOOPBACK):
        out.append(("/base_url", "a secret is sent over https only"))
    for i, runner in enumerate((document.get("schedule") or {}).get("runners") or []):
        label = str(runner.get("label"))
        if label not in allow.runners:
            out.append((f"/schedule/runners/{i}/label",
                        f"runner label {label[:64]!r} is not in the allow-list"))
    return out
