"""Who may sign results, for which tier: the repository's attestation policy, and the signer
identity a Fulcio certificate carries for a GitHub Actions run.

The policy (`.github/attestation-policy.yaml`, maintainers only through CODEOWNERS) lists
signers; each names a workflow (`owner/repo/path`, the certificate's SAN without its ref),
the refs it may sign at, the repositories it may run in (the caller, for a reusable
workflow), their refs, the events that may start it, and the tier it earns:

    schema_version: 1
    issuer: https://token.actions.githubusercontent.com
    signers:
      - tier: attested
        workflow: epbench/epbench/.github/workflows/benchmark.yml
        refs: [refs/heads/main]
        callers: [epbench/epbench]
        caller_refs: [refs/heads/main]
        triggers: [schedule, workflow_dispatch]
        direct: true          # the run's top-level workflow is this one (not called)

Patterns match whole strings: `*` is one path segment (letters, digits, `.`, `_`, `-`) and
`**` any number of them (`/` included); anything else is literal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat import asn1

from epbench.core.documents import load_document
from epbench.core.errors import InputError
from epbench.core.provenance import ATTESTED, ATTESTED_BY_SUBMITTER

GITHUB = "https://github.com/"
_FIELDS = {"tier", "workflow", "refs", "callers", "caller_refs", "triggers", "direct"}
_SEGMENT = r"[A-Za-z0-9._-]+"
_SAFE = re.compile(r"[A-Za-z0-9._/@*:-]{1,300}")


class Refused(Exception):
    """An attestation that does not earn a tier; `reason` is the one line shown for it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class SignerRule:
    """One entry of the policy's `signers`: who may sign, and the tier it earns."""

    tier: str
    workflow: str
    refs: tuple[str, ...]
    callers: tuple[str, ...]
    caller_refs: tuple[str, ...]
    triggers: tuple[str, ...]
    direct: bool


@dataclass(frozen=True)
class AttestationPolicy:
    """The OIDC issuer the certificates must name, and the signers allowed, in file order."""

    issuer: str
    signers: tuple[SignerRule, ...]


@dataclass(frozen=True)
class Claims:
    """What a GitHub Actions signing certificate says about the run that signed."""

    issuer: str
    workflow: str  # owner/repo/path of the signing workflow (a reusable one: the called one)
    workflow_ref: str
    repository: str  # owner/repo the run belongs to (the caller)
    ref: str  # the caller's ref
    trigger: str  # the event that started the run
    config: str  # owner/repo/path@ref of the run's top-level workflow
    runner: str  # github-hosted or self-hosted ("unknown" when the certificate omits it)


@dataclass(frozen=True)
class Signer:
    """A signer the policy accepts: its tier, claims, and the identity shown for it."""

    tier: str
    claims: Claims
    identity: str


def matches(pattern: str, value: str) -> bool:
    """True when `value` is entirely what `pattern` describes (see the module docstring)."""
    parts = re.split(r"(\*\*|\*)", pattern)
    regex = "".join({"**": r"[A-Za-z0-9._/-]+", "*": _SEGMENT}.get(p, re.escape(p))
                    for p in parts)
    return re.fullmatch(regex, value) is not None


def shown(value: str) -> str:
    """A value from a certificate, fit for a one-line reason (hostile text made plain)."""
    return value if _SAFE.fullmatch(value) else repr(value[:120])


# --- the policy file ---

def load_policy(path: Path | str) -> AttestationPolicy:
    """The policy in `path`; InputError (one line: file, pointer, what is wrong) if it is bad."""
    document = load_document(path)
    if not isinstance(document, dict) or set(document) != {"schema_version", "issuer",
                                                           "signers"}:
        raise InputError(f"{path}: expected exactly the keys schema_version, issuer, signers")
    if document["schema_version"] != 1:
        raise InputError(f"{path}:/schema_version: must be 1")
    issuer = document["issuer"]
    if not isinstance(issuer, str) or not issuer.startswith("https://"):
        raise InputError(f"{path}:/issuer: must be an https:// URL")
    signers = document["signers"]
    if not isinstance(signers, list) or not signers:
        raise InputError(f"{path}:/signers: must be a non-empty list")
    return AttestationPolicy(issuer, tuple(_rule(path, f"/signers/{n}", item)
                                           for n, item in enumerate(signers)))


def _rule(path: Path | str, pointer: str, item: Any) -> SignerRule:
    if not isinstance(item, dict) or set(item) != _FIELDS:
        raise InputError(f"{path}:{pointer}: expected exactly the keys "
                         f"{', '.join(sorted(_FIELDS))}")
    if item["tier"] not in (ATTESTED, ATTESTED_BY_SUBMITTER):
        raise InputError(f"{path}:{pointer}/tier: must be {ATTESTED} or {ATTESTED_BY_SUBMITTER}")
    if not isinstance(item["direct"], bool):
        raise InputError(f"{path}:{pointer}/direct: must be true or false")
    workflow = item["workflow"]
    if not isinstance(workflow, str) or not re.fullmatch(
            rf"{_SEGMENT}/{_SEGMENT}/\.github/workflows/{_SEGMENT}\.ya?ml", workflow):
        raise InputError(f"{path}:{pointer}/workflow: must be owner/repo/.github/workflows/"
                         "<file>.yml, without patterns")
    lists = {}
    for key in ("refs", "callers", "caller_refs", "triggers"):
        value = item[key]
        if not isinstance(value, list) or not value or not all(
                isinstance(v, str) and _SAFE.fullmatch(v) for v in value):
            raise InputError(f"{path}:{pointer}/{key}: must be a non-empty list of patterns "
                             "(letters, digits, . _ - / * only)")
        lists[key] = tuple(value)
    if any(matches(p, "refs/pull/1/merge") for p in lists["refs"] + lists["caller_refs"]):
        raise InputError(f"{path}:{pointer}: a pattern admits pull-request refs (refs/pull/...)")
    if any(t.startswith("pull_request") for t in lists["triggers"]):
        raise InputError(f"{path}:{pointer}/triggers: pull-request events may not sign")
    return SignerRule(item["tier"], workflow, lists["refs"], lists["callers"],
                      lists["caller_refs"], lists["triggers"], item["direct"])


# --- the certificate ---

def _extension(cert: x509.Certificate, number: int, name: str) -> str:
    """A Fulcio extension 1.3.6.1.4.1.57264.1.<number> (a DER UTF8String)."""
    oid = x509.ObjectIdentifier(f"1.3.6.1.4.1.57264.1.{number}")
    try:
        value = cert.extensions.get_extension_for_oid(oid).value
        text = asn1.decode_der(str, value.value)  # type: ignore[attr-defined]
    except x509.ExtensionNotFound:
        raise Refused(f"the signing certificate has no {name} (a GitHub Actions "
                      "certificate carries it)") from None
    except Exception:  # any malformed encoding is the same refusal
        raise Refused(f"the signing certificate's {name} is malformed") from None
    if not isinstance(text, str):
        raise Refused(f"the signing certificate's {name} is malformed")
    return text


def _github_path(uri: str, name: str) -> str:
    if not uri.startswith(GITHUB) or len(uri) > 500:
        raise Refused(f"the signing certificate's {name} is not a GitHub URL: {shown(uri)}")
    return uri[len(GITHUB):]


def claims_of(cert: x509.Certificate) -> Claims:
    """The run's identity from the certificate's SAN and Fulcio's GitHub extensions."""
    try:
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        uris = names.get_values_for_type(x509.UniformResourceIdentifier)
    except Exception:  # a SAN the library cannot read
        raise Refused("the signing certificate names no workflow (no SAN URI)") from None
    if len(uris) != 1:
        raise Refused(f"the signing certificate names {len(uris)} URIs, not one workflow")
    signer = _extension(cert, 9, "build signer URI")
    if signer != uris[0]:
        raise Refused("the signing certificate's SAN and build signer URI disagree")
    workflow, at, workflow_ref = _github_path(signer, "SAN").rpartition("@")
    if not at:
        raise Refused(f"the signing certificate's workflow has no ref: {shown(signer)}")
    return Claims(
        issuer=_extension(cert, 8, "OIDC issuer"),
        workflow=workflow, workflow_ref=workflow_ref,
        repository=_github_path(_extension(cert, 12, "source repository URI"),
                                "source repository URI"),
        ref=_extension(cert, 14, "source repository ref"),
        trigger=_extension(cert, 20, "build trigger"),
        config=_github_path(_extension(cert, 18, "build config URI"), "build config URI"),
        runner=_optional(cert, 11, "runner environment"),
    )


def _optional(cert: x509.Certificate, number: int, name: str) -> str:
    try:
        return shown(_extension(cert, number, name))
    except Refused:
        return "unknown"


def judge(policy: AttestationPolicy, claims: Claims) -> Signer:
    """The signer the policy accepts for these claims; Refused says why not, in one line."""
    if claims.issuer != policy.issuer:
        raise Refused(f"the certificate was issued for {shown(claims.issuer)}, not GitHub "
                      "Actions' OIDC issuer")
    signed = f"{shown(claims.workflow)}@{shown(claims.workflow_ref)}"
    rules = [r for r in policy.signers if r.workflow == claims.workflow]
    if not rules:
        repo = "/".join(claims.workflow.split("/")[:2])
        same_path = [r for r in policy.signers
                     if r.workflow.split("/", 2)[2:] == claims.workflow.split("/", 2)[2:]]
        if same_path:
            raise Refused(f"signed by {signed}: a workflow of {shown(repo)}, not of "
                          f"{same_path[0].workflow.split('/.github/')[0]} (a fork or a copy)")
        raise Refused(f"signed by {signed}: a workflow the attestation policy does not allow "
                      "to sign")
    reasons = [_mismatch(rule, claims, signed) for rule in rules]
    for rule, reason in zip(rules, reasons, strict=True):
        if reason is None:
            identity = signed if rule.direct else f"{signed} in {shown(claims.repository)}"
            return Signer(rule.tier, claims, identity)
    raise Refused(next(r for r in reasons if r is not None))


def _mismatch(rule: SignerRule, claims: Claims, signed: str) -> str | None:
    """Why `rule` does not admit `claims` (None when it does)."""
    if claims.workflow_ref.startswith("refs/pull/") or claims.ref.startswith("refs/pull/"):
        return f"signed by {signed} for a pull request ({shown(claims.ref)}): refused"
    if not any(matches(p, claims.workflow_ref) for p in rule.refs):
        return (f"signed by {rule.workflow} at {shown(claims.workflow_ref)}, not at a ref the "
                f"policy allows ({', '.join(rule.refs)})")
    if not any(matches(p, claims.repository) for p in rule.callers):
        return f"signed by {signed} run in {shown(claims.repository)}, which may not sign"
    if not any(matches(p, claims.ref) for p in rule.caller_refs):
        return (f"signed by {signed} run at {shown(claims.ref)}, not at a ref the policy "
                f"allows ({', '.join(rule.caller_refs)})")
    if claims.trigger not in rule.triggers:
        return f"signed by {signed} on a {shown(claims.trigger)} event, which may not sign"
    if rule.direct and claims.config != f"{claims.workflow}@{claims.workflow_ref}":
        return f"signed by {signed} called from {shown(claims.config)}, not run directly"
    if not rule.direct and not claims.config.startswith(f"{claims.repository}/"):
        return f"signed by {signed} from a workflow outside {shown(claims.repository)}"
    return None
