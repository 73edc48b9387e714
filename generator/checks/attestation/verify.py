"""Verifying a result's Sigstore bundle offline: who signed it, and for which tier.

`verify_result_bundle(bundle, subjects, policy=..., trust=...)` takes the bytes of
`<stem>.sigstore.json` and the sha256 of the result and its journal, and answers with the
result's Provenance. The `sigstore` library verifies the cryptography against `trust` (the
public-good root the library ships, unless a test passes its own):

1. the leaf certificate chains to the trust root's CA at the log's signing time, carries an
   SCT from a trusted CT log, and is for code signing;
2. the transparency log entry: its Merkle inclusion proof up to a checkpoint the log signed,
   and its signed entry timestamp; the entry is the DSSE envelope of this bundle;
3. the signing time lies within the certificate's validity;
4. the DSSE signature over the statement, by the certificate's key.

Then, here: the signer identity (the certificate's SAN and GitHub extensions) against the
repository's policy (`policy.py`), and the in-toto statement: SLSA provenance whose subjects
include each file by name with exactly its sha256. Every failure, whatever the bundle bytes
hold, is a `self_reported` Provenance with one line saying why.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from typing import Any
from urllib.parse import quote

from cryptography import x509
from sigstore.models import Bundle, TrustedRoot
from sigstore.verify import Verifier

from epbench.core.documents import parse_document
from epbench.core.errors import InputError
from epbench.core.provenance import Provenance, self_reported
from epbench.generator.checks.attestation.policy import (
    AttestationPolicy,
    Refused,
    Signer,
    claims_of,
    judge,
)

MAX_BUNDLE_BYTES = 4 * 1024 * 1024
"""A bundle over two files is about 10 KB; one run's bundle over 500 files about 60 KB."""
MAX_SUBJECTS = 5000
INTOTO = "application/vnd.in-toto+json"
STATEMENT_TYPES = ("https://in-toto.io/Statement/v1",)
SLSA_PROVENANCE = "https://slsa.dev/provenance/v1"
PUBLIC_GOOD_TUF = "https://tuf-repo-cdn.sigstore.dev"
_HEX = re.compile(r"[0-9a-f]{64}")


@cache
def public_good_trust() -> TrustedRoot:
    """The Sigstore public-good trust root shipped inside the pinned `sigstore` package: no
    network, no user cache (a cache could be stale or planted), the same on every machine."""
    folder = resources.files("sigstore") / "_store" / quote(PUBLIC_GOOD_TUF, safe="")
    with resources.as_file(folder / "trusted_root.json") as path:
        if not path.is_file():
            raise InputError(f"{path}: the sigstore package ships no public-good trust root "
                             "(reinstall the pinned sigstore version)")
        return TrustedRoot.from_file(str(path))


def verify_result_bundle(bundle: bytes, subjects: dict[str, str], *,
                         policy: AttestationPolicy,
                         trust: TrustedRoot | None = None) -> Provenance:
    """The tier a result earns from its bundle: ATTESTED or ATTESTED_BY_SUBMITTER with the
    signer, or self-reported with the one-line reason. `subjects` maps each file name (the
    result's and its journal's) to its sha256 in hex."""
    try:
        signer = check_bundle(bundle, subjects, policy=policy, trust=trust)
    except Refused as refused:
        return self_reported(refused.reason)
    return Provenance(signer.tier, f"signed by {signer.identity}", signer.identity)


def check_bundle(bundle: bytes, subjects: dict[str, str], *, policy: AttestationPolicy,
                 trust: TrustedRoot | None = None) -> Signer:
    """`verify_result_bundle`, as the accepted Signer (tier, claims, identity), or Refused."""
    if not subjects or not all(isinstance(n, str) and isinstance(d, str) and _HEX.fullmatch(d)
                               for n, d in subjects.items()):
        raise ValueError("subjects must map file names to lowercase sha256 hex digests")
    if not isinstance(bundle, bytes) or len(bundle) > MAX_BUNDLE_BYTES:
        raise Refused(f"the attestation bundle is not bytes of at most {MAX_BUNDLE_BYTES} bytes")
    try:  # plain JSON first (no duplicate keys, bounded depth), then Sigstore's model
        parse_document(bundle, "bundle.json", MAX_BUNDLE_BYTES)
        parsed = Bundle.from_json(bundle)
    except Exception as exc:  # hostile bytes: any failure is one refusal
        raise Refused(f"the attestation bundle is malformed: {_detail(exc)}") from None
    _check_signing_time(parsed)
    accepted: list[Signer] = []
    try:
        payload_type, payload = Verifier(trusted_root=trust or public_good_trust()).verify_dsse(
            parsed, _IdentityCheck(policy, accepted))
    except Refused:
        raise
    except Exception as exc:  # the library raises more than VerificationError
        raise Refused(_failed(exc)) from None
    if len(accepted) != 1:  # the library checked the identity exactly once, or not at all
        raise Refused("the attestation's signer identity was not checked")
    if payload_type != INTOTO:
        raise Refused(f"the attestation signs a {_plain(payload_type)[:60]!r} payload, not an "
                      "in-toto statement")
    _check_statement(payload, subjects)
    return accepted[0]


class _IdentityCheck:
    """The policy step the library runs on the certificate once its chain is verified."""

    def __init__(self, policy: AttestationPolicy, accepted: list[Signer]) -> None:
        self.policy = policy
        self.accepted = accepted

    def verify(self, cert: x509.Certificate) -> None:
        self.accepted.append(judge(self.policy, claims_of(cert)))


def _check_signing_time(bundle: Bundle) -> None:
    """The log's time of the entry lies within the certificate's validity (the library also
    checks it, after this; here it gets its own one-line reason)."""
    cert = bundle.signing_certificate
    when = bundle.log_entry._inner.integrated_time  # no public accessor
    if not when:
        return  # no log time (a timestamp authority's instead): the library decides
    try:
        signed = datetime.fromtimestamp(int(when), tz=UTC)
    except (OverflowError, OSError, ValueError):
        raise Refused("the transparency log entry's time is out of range") from None
    start, end = cert.not_valid_before_utc, cert.not_valid_after_utc
    if not start <= signed <= end:
        raise Refused(f"signed at {signed:%Y-%m-%dT%H:%M:%SZ}, outside the signing "
                      f"certificate's validity ({start:%Y-%m-%dT%H:%M:%SZ} to "
                      f"{end:%Y-%m-%dT%H:%M:%SZ})")


def _check_statement(payload: bytes, subjects: dict[str, str]) -> None:
    """The statement is SLSA provenance naming each file with exactly its digest."""
    try:
        statement = parse_document(payload, "statement.json")
    except InputError as exc:
        raise Refused(f"the attested statement is not plain JSON: {_detail(exc)}") from None
    if not isinstance(statement, dict) or statement.get("_type") not in STATEMENT_TYPES:
        raise Refused("the attested payload is not an in-toto Statement v1")
    if statement.get("predicateType") != SLSA_PROVENANCE:
        raise Refused("the attested statement is not SLSA build provenance v1")
    listed = statement.get("subject")
    if not isinstance(listed, list) or not 0 < len(listed) <= MAX_SUBJECTS:
        raise Refused(f"the attested statement lists no subjects (or more than {MAX_SUBJECTS})")
    signed = [_subject(item) for item in listed]
    for name, digest in sorted(subjects.items()):
        digests = {d for n, d in signed if _same_file(name, n)}
        if not digests:
            raise Refused(f"the attestation does not cover {_plain(name)[:120]}")
        if digest not in digests:
            raise Refused(f"{_plain(name)[:120]} has changed since it was signed (sha256 "
                          f"{digest[:12]}…, signed {sorted(digests)[0][:12]}…)")


def _same_file(given: str, signed: str) -> bool:
    """Whether a statement's subject name is the file `given` names: equal, or one a path
    ending in the other (`results/a/b/x.json` and `x.json`). Give the path from the
    repository root (`results/...`) to bind where the file sits as well as its bytes."""
    return given == signed or signed.endswith("/" + given) or given.endswith("/" + signed)


def _subject(item: Any) -> tuple[str, str]:
    if not isinstance(item, dict) or not isinstance(item.get("name"), str) \
            or not isinstance(item.get("digest"), dict):
        raise Refused("an attested subject is not a name with digests")
    digest = item["digest"].get("sha256")
    if not isinstance(digest, str) or not _HEX.fullmatch(digest):
        raise Refused("an attested subject has no sha256 digest")
    return item["name"], digest


_FAILURES = (  # the library's message starts -> what failed, for people
    ("failed to build timestamp certificate chain", "the signing certificate does not chain to "
     "a trusted Sigstore CA at the signing time"),
    ("failed to verify SCT", "the signing certificate has no valid SCT from a trusted CT log"),
    ("invalid log entry", "the transparency log entry does not verify"),
    ("invalid signing cert", "the signing time lies outside the certificate's validity"),
    ("DSSE", "the envelope's signature does not verify with the signing certificate"),
    ("log entry", "the transparency log entry is not this bundle's envelope"),
    ("transparency log entry is inconsistent", "the transparency log entry is not this "
     "bundle's envelope"),
)


def _failed(exc: BaseException) -> str:
    """The one-line reason for a verification the library refused."""
    detail = _detail(exc)
    what = next((said for start, said in _FAILURES if detail.startswith(start)),
                "the attestation does not verify")
    return f"{what} ({detail})" if len(detail) <= 100 else f"{what} ({detail[:99]}…)"


def _plain(text: str) -> str:
    """`text` on one line, without control or format characters."""
    return "".join(c if c.isprintable() else " " for c in text)


def _detail(exc: BaseException) -> str:
    """An exception's message as a short single line (library messages can be long)."""
    text = re.sub(r"\s*\[type=[^\]]*\]|\s*For further information visit \S+", "",
                  _plain(str(exc)))  # pydantic's hints are for programmers
    text = " ".join(text.split()) or type(exc).__name__
    return text if len(text) <= 160 else text[:159] + "…"
