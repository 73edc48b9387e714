"""A Sigstore instance of our own, offline, for tests: a local Fulcio-like CA, a CT log key, a
Rekor-like transparency log key, and bundles signed the way GitHub's artifact attestations are.

    from tests.sigstore_fixture import make_signed_result, SUBMITTER

    bundle, trust, policy = make_signed_result(result_bytes, journal_bytes, stem="<stem>")
    verify_result_bundle(bundle, {"<stem>.json": sha, "<stem>.events.jsonl.gz": sha},
                         policy=policy, trust=trust)      # -> Provenance(ATTESTED, ...)

What a bundle holds, as the public-good instance makes it for `actions/attest-build-provenance`:
a DSSE envelope whose payload is an in-toto Statement v1 (one subject per file, with its sha256,
and a SLSA provenance v1 predicate), signed by a short-lived leaf certificate that carries
GitHub's OIDC claims as Fulcio's extensions (1.3.6.1.4.1.57264.1.*) and an embedded SCT from
the CT log; the leaf chains through an intermediate to a root. The log entry (`dsse` 0.0.1)
has its integrated time, a signed entry timestamp, and an RFC 6962 inclusion proof into a tree
of several entries, whose root a signed checkpoint names.

Every key is made fresh once per test process; `LocalSigstore.sign` has a knob for each way a
hostile or broken bundle differs from a good one. The policy returned is the repository's own
`.github/attestation-policy.yaml`, so the tests check the shipped policy.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
import tempfile
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import rfc8785
from cryptography import x509
from cryptography.hazmat import asn1
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from sigstore.models import TrustedRoot

from epbench.generator.checks.attestation import AttestationPolicy, load_policy
from tests.conftest import ROOT

POLICY_FILE = ROOT / ".github" / "attestation-policy.yaml"
ISSUER = "https://token.actions.githubusercontent.com"
PROJECT = "epbench/epbench"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
SLSA_PROVENANCE = "https://slsa.dev/provenance/v1"
INTOTO_PAYLOAD = "application/vnd.in-toto+json"
SCT_OID = x509.ObjectIdentifier("1.3.6.1.4.1.11129.2.4.2")


def _oid(n: int) -> x509.ObjectIdentifier:
    return x509.ObjectIdentifier(f"1.3.6.1.4.1.57264.1.{n}")


@dataclass(frozen=True)
class Identity:
    """The GitHub Actions OIDC claims a signing certificate carries.

    `workflow` is the signing workflow's `owner/repo/path` (the job_workflow_ref without its
    ref: for a reusable workflow, the called one), `workflow_ref` its ref; `repository` and
    `ref` are the repository the run belongs to (the caller) and its ref; `caller_workflow`
    is the run's top-level workflow (`owner/repo/path`), the signing one when None."""

    workflow: str = f"{PROJECT}/.github/workflows/benchmark.yml"
    workflow_ref: str = "refs/heads/main"
    repository: str = PROJECT
    ref: str = "refs/heads/main"
    trigger: str = "schedule"
    issuer: str = ISSUER
    caller_workflow: str | None = None


SCHEDULED = Identity()
"""The project's own scheduled benchmark on main: the `attested` tier."""
SUBMITTER = Identity(
    workflow=f"{PROJECT}/.github/workflows/epbench-run.yml", workflow_ref="refs/tags/v1.4.0",
    repository="acme-ai/llm-bench", ref="refs/heads/main", trigger="workflow_dispatch",
    caller_workflow="acme-ai/llm-bench/.github/workflows/benchmark.yml")
"""epbench's reusable workflow at a release tag, called from a provider's repository: the
`attested-by-submitter` tier."""


def _der(value: str) -> bytes:
    return asn1.encode_der(value)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _spki(key: ec.EllipticCurvePublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.DER,
                            serialization.PublicFormat.SubjectPublicKeyInfo)


def _key_id(key: ec.EllipticCurvePublicKey) -> bytes:
    return hashlib.sha256(_spki(key)).digest()


def _new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _sign(key: ec.EllipticCurvePrivateKey, data: bytes) -> bytes:
    return key.sign(data, ec.ECDSA(hashes.SHA256()))


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "epbench tests"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common)])


EPOCH = datetime(2024, 1, 1, tzinfo=UTC)


def _ca(common: str, key: ec.EllipticCurvePrivateKey, issuer: tuple[x509.Name,
        ec.EllipticCurvePrivateKey] | None, path_length: int) -> x509.Certificate:
    """A CA certificate (self-signed when `issuer` is None), valid 2024-2036."""
    issuer_name, issuer_key = issuer or (_name(common), key)
    builder = (
        x509.CertificateBuilder().subject_name(_name(common)).issuer_name(issuer_name)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(EPOCH).not_valid_after(EPOCH + timedelta(days=365 * 12))
        .add_extension(x509.BasicConstraints(ca=True, path_length=path_length), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False,
                                     key_encipherment=False, data_encipherment=False,
                                     key_agreement=False, key_cert_sign=True, crl_sign=True,
                                     encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                       critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
            issuer_key.public_key()), critical=False)
    )
    return builder.sign(issuer_key, hashes.SHA256())


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _leaf(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def _tree_hash(leaves: list[bytes]) -> bytes:
    """RFC 6962 Merkle tree hash of leaf hashes."""
    if len(leaves) == 1:
        return leaves[0]
    split = 1 << ((len(leaves) - 1).bit_length() - 1)  # largest power of two below n
    return _node(_tree_hash(leaves[:split]), _tree_hash(leaves[split:]))


def _audit_path(index: int, leaves: list[bytes]) -> list[bytes]:
    """RFC 6962 inclusion proof of leaf `index`, from the leaf's level upwards."""
    if len(leaves) == 1:
        return []
    split = 1 << ((len(leaves) - 1).bit_length() - 1)
    if index < split:
        return [*_audit_path(index, leaves[:split]), _tree_hash(leaves[split:])]
    return [*_audit_path(index - split, leaves[split:]), _tree_hash(leaves[:split])]


@dataclass
class Knobs:
    """How one bundle departs from a good one (all off: a bundle that verifies)."""

    valid_for: timedelta = timedelta(minutes=10)  # the leaf's lifetime, from `signed_at`
    integrated_after: timedelta = timedelta(seconds=5)  # the log's time, after `signed_at`
    untrusted_ca: bool = False  # the leaf chains to a CA the trust root does not hold
    foreign_log: bool = False  # the entry, SET and checkpoint are signed by another log's key
    bad_proof: bool = False  # one hash of the inclusion proof is wrong
    no_log_entry: bool = False  # the bundle has no transparency log entry
    no_sct: bool = False  # the leaf carries no SCT
    statement: dict[str, Any] | None = None  # this statement instead of the honest one
    signature_over: bytes | None = None  # sign these bytes instead of the envelope's PAE


@dataclass
class LocalSigstore:
    """The keys of a local Sigstore instance, and bundles signed with them."""

    root_key: ec.EllipticCurvePrivateKey = field(default_factory=_new_key)
    intermediate_key: ec.EllipticCurvePrivateKey = field(default_factory=_new_key)
    ct_key: ec.EllipticCurvePrivateKey = field(default_factory=_new_key)
    log_key: ec.EllipticCurvePrivateKey = field(default_factory=_new_key)
    stranger_key: ec.EllipticCurvePrivateKey = field(default_factory=_new_key)

    def __post_init__(self) -> None:
        self.root = _ca("local fulcio root", self.root_key, None, 1)
        self.intermediate = _ca("local fulcio intermediate", self.intermediate_key,
                                (self.root.subject, self.root_key), 0)
        self.stranger = _ca("someone else's CA", self.stranger_key, None, 0)
        self._trust: TrustedRoot | None = None

    # --- the trust root ---

    def trusted_root_json(self) -> dict[str, Any]:
        """The trust root, as Sigstore's trusted_root.json spells it."""
        def log(key: ec.EllipticCurvePrivateKey, url: str) -> dict[str, Any]:
            return {"baseUrl": url, "hashAlgorithm": "SHA2_256",
                    "publicKey": {"rawBytes": _b64(_spki(key.public_key())),
                                  "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                                  "validFor": {"start": "2024-01-01T00:00:00Z"}},
                    "logId": {"keyId": _b64(_key_id(key.public_key()))}}
        chain = [self.intermediate, self.root]
        return {
            "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
            "tlogs": [log(self.log_key, "https://rekor.invalid")],
            "certificateAuthorities": [{
                "subject": {"organization": "epbench tests", "commonName": "local fulcio"},
                "uri": "https://fulcio.invalid",
                "certChain": {"certificates": [
                    {"rawBytes": _b64(c.public_bytes(serialization.Encoding.DER))}
                    for c in chain]},
                "validFor": {"start": "2024-01-01T00:00:00Z"},
            }],
            "ctlogs": [log(self.ct_key, "https://ctfe.invalid")],
            "timestampAuthorities": [],
        }

    def trust(self) -> TrustedRoot:
        """The trust root as the sigstore library loads it (from a file, its public API)."""
        if self._trust is None:
            with tempfile.TemporaryDirectory() as folder:
                path = Path(folder) / "trusted_root.json"
                path.write_text(json.dumps(self.trusted_root_json()), encoding="utf-8")
                self._trust = TrustedRoot.from_file(str(path))
        return self._trust

    # --- the signing certificate ---

    def leaf(self, identity: Identity, key: ec.EllipticCurvePrivateKey, signed_at: datetime,
             knobs: Knobs) -> x509.Certificate:
        """A Fulcio-style leaf: empty subject, the workflow as SAN URI, GitHub's claims as
        extensions, an embedded SCT over the precertificate."""
        issuer_cert, issuer_key = ((self.stranger, self.stranger_key) if knobs.untrusted_ca
                                   else (self.intermediate, self.intermediate_key))
        signer = f"https://github.com/{identity.workflow}@{identity.workflow_ref}"
        top = identity.caller_workflow or identity.workflow
        config = f"https://github.com/{top}@{identity.ref}"
        repo_uri = f"https://github.com/{identity.repository}"
        owner = identity.repository.split("/")[0]
        sha = hashlib.sha1(signer.encode()).hexdigest()
        raw = {1: identity.issuer, 2: identity.trigger, 3: sha, 4: "benchmark",
               5: identity.repository, 6: identity.ref}
        der = {8: identity.issuer, 9: signer, 10: sha, 11: "github-hosted", 12: repo_uri,
               13: sha, 14: identity.ref, 15: "123456", 16: f"https://github.com/{owner}",
               17: "654321", 18: config, 19: sha, 20: identity.trigger,
               21: f"{repo_uri}/actions/runs/1/attempts/1", 22: "public"}
        builder = (
            x509.CertificateBuilder().subject_name(x509.Name([]))
            .issuer_name(issuer_cert.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(signed_at).not_valid_after(signed_at + knobs.valid_for)
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False,
                                         key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, key_cert_sign=False,
                                         crl_sign=False, encipher_only=False,
                                         decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]),
                           critical=False)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                           critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                issuer_key.public_key()), critical=False)
            .add_extension(x509.SubjectAlternativeName(
                [x509.UniformResourceIdentifier(signer)]), critical=True)
        )
        for number, value in raw.items():
            builder = builder.add_extension(
                x509.UnrecognizedExtension(_oid(number), value.encode()), critical=False)
        for number, value in der.items():
            builder = builder.add_extension(
                x509.UnrecognizedExtension(_oid(number), _der(value)), critical=False)
        if knobs.no_sct:
            return builder.sign(issuer_key, hashes.SHA256())
        precert = builder.sign(issuer_key, hashes.SHA256())
        sct = self._sct(precert.tbs_certificate_bytes, issuer_key.public_key(), signed_at)
        sct_list = struct.pack("!H", len(sct)) + sct
        extension = x509.UnrecognizedExtension(
            SCT_OID, asn1.encode_der(struct.pack("!H", len(sct_list)) + sct_list))
        cert = builder.add_extension(extension, critical=False).sign(issuer_key, hashes.SHA256())
        assert cert.tbs_precertificate_bytes == precert.tbs_certificate_bytes
        return cert

    def _sct(self, tbs: bytes, issuer_key: ec.EllipticCurvePublicKey,
             when: datetime) -> bytes:
        """One serialized RFC 6962 SCT (v1, precert entry) from the CT log key."""
        millis = int(when.timestamp() * 1000)
        signed = (struct.pack("!BBQH", 0, 0, millis, 1) + _key_id(issuer_key)
                  + struct.pack("!I", len(tbs))[1:] + tbs + struct.pack("!H", 0))
        signature = _sign(self.ct_key, signed)
        return (struct.pack("!B", 0) + _key_id(self.ct_key.public_key())
                + struct.pack("!QH", millis, 0)
                + struct.pack("!BBH", 4, 3, len(signature)) + signature)

    # --- the bundle ---

    def sign(self, subjects: dict[str, bytes], identity: Identity = SCHEDULED,
             signed_at: datetime | None = None, knobs: Knobs | None = None) -> bytes:
        """A Sigstore bundle (v0.3 JSON) over the sha256 of each named file's bytes."""
        knobs = knobs or Knobs()
        signed_at = (signed_at or datetime.now(UTC) - timedelta(hours=1)).replace(
            microsecond=0)
        key = _new_key()
        cert = self.leaf(identity, key, signed_at, knobs)
        statement = knobs.statement if knobs.statement is not None else {
            "_type": STATEMENT_TYPE,
            "subject": [{"name": name, "digest": {"sha256": hashlib.sha256(data).hexdigest()}}
                        for name, data in subjects.items()],
            "predicateType": SLSA_PROVENANCE,
            "predicate": {"buildDefinition": {"buildType": "https://actions.github.io/"
                                                           "buildtypes/workflow/v1"}},
        }
        payload = json.dumps(statement).encode()
        pae = b"DSSEv1 %d %s %d %s" % (len(INTOTO_PAYLOAD), INTOTO_PAYLOAD.encode(),
                                       len(payload), payload)
        signature = _sign(key, knobs.signature_over if knobs.signature_over is not None
                          else pae)
        pem = cert.public_bytes(serialization.Encoding.PEM)
        envelope = {"payload": _b64(payload), "payloadType": INTOTO_PAYLOAD,
                    "signatures": [{"sig": _b64(signature), "keyid": ""}]}
        body = rfc8785.dumps({
            "apiVersion": "0.0.1", "kind": "dsse",
            "spec": {"envelopeHash": {"algorithm": "sha256", "value": hashlib.sha256(
                         json.dumps(envelope).encode()).hexdigest()},
                     "payloadHash": {"algorithm": "sha256",
                                     "value": hashlib.sha256(payload).hexdigest()},
                     "signatures": [{"signature": _b64(signature), "verifier": _b64(pem)}]},
        })
        entries = self._log_entry(body, signed_at + knobs.integrated_after, knobs)
        bundle = {
            "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
            "verificationMaterial": {
                "certificate": {"rawBytes": _b64(cert.public_bytes(serialization.Encoding.DER))},
                "tlogEntries": [] if knobs.no_log_entry else [entries],
                "timestampVerificationData": {},
            },
            "dsseEnvelope": envelope,
        }
        return json.dumps(bundle, indent=2).encode()

    def _log_entry(self, body: bytes, integrated: datetime, knobs: Knobs) -> dict[str, Any]:
        """The entry at index 5 of a 7-entry log: SET, inclusion proof, signed checkpoint."""
        log_key = self.stranger_key if knobs.foreign_log else self.log_key
        log_id = _key_id(self.log_key.public_key())  # the log it claims to be
        index, others = 5, [f"someone else's entry {n}".encode() for n in range(6)]
        leaves = [_leaf(data) for data in others[:index]] + [_leaf(body)] + [
            _leaf(data) for data in others[index:]]
        root = _tree_hash(leaves)
        proof = _audit_path(index, leaves)
        if knobs.bad_proof:
            proof[1] = hashlib.sha256(b"not the sibling").digest()
        when = int(integrated.timestamp())
        promise = _sign(log_key, rfc8785.dumps({
            "body": _b64(body), "integratedTime": when, "logID": log_id.hex(),
            "logIndex": index}))
        note = f"rekor.invalid - 1234567890\n{len(leaves)}\n{_b64(root)}\n"
        signature = _b64(log_id[:4] + _sign(log_key, note.encode()))
        checkpoint = f"{note}\n\u2014 rekor.invalid {signature}\n"
        return {
            "logIndex": str(index), "logId": {"keyId": _b64(log_id)},
            "kindVersion": {"kind": "dsse", "version": "0.0.1"},
            "integratedTime": str(when),
            "inclusionPromise": {"signedEntryTimestamp": _b64(promise)},
            "inclusionProof": {"logIndex": str(index), "rootHash": _b64(root),
                               "treeSize": str(len(leaves)),
                               "hashes": [_b64(h) for h in proof],
                               "checkpoint": {"envelope": checkpoint}},
            "canonicalizedBody": _b64(body),
        }


@cache
def local_sigstore() -> LocalSigstore:
    """One local instance per test process (key generation is the slow part)."""
    return LocalSigstore()


def result_names(stem: str) -> tuple[str, str]:
    """The file names a result `<stem>.json` and its journal go by."""
    return f"{stem}.json", f"{stem}.events.jsonl.gz"


def make_signed_result(result_bytes: bytes, journal_bytes: bytes,
                       identity: Identity = SCHEDULED, *, stem: str = "result",
                       knobs: Knobs | None = None,
                       ) -> tuple[bytes, TrustedRoot, AttestationPolicy]:
    """A bundle over a result and its journal (named `<stem>.json`, `<stem>.events.jsonl.gz`),
    the local trust root that verifies it, and the repository's attestation policy."""
    names = result_names(stem)
    sigstore = local_sigstore()
    bundle = sigstore.sign({names[0]: result_bytes, names[1]: journal_bytes}, identity,
                           knobs=knobs)
    return bundle, sigstore.trust(), load_policy(POLICY_FILE)


def sign_beside(result: Path, identity: Identity = SCHEDULED, *, relative_to: Path | None = None,
                knobs: Knobs | None = None) -> Path:
    """Sign a result file and its journal on disk (named by their path from `relative_to`, as
    the workflows name them, else by file name) and write `<stem>.sigstore.json` beside
    them; returns the bundle's path. Verify with `local_sigstore().trust()`, or point a
    verifier at a file `write_trusted_root` writes."""
    journal = result.with_name(result.name.removesuffix(".json") + ".events.jsonl.gz")
    files = {}
    for path in (result, journal):
        name = path.relative_to(relative_to).as_posix() if relative_to else path.name
        files[name] = path.read_bytes()
    bundle = result.with_name(result.name.removesuffix(".json") + ".sigstore.json")
    bundle.write_bytes(local_sigstore().sign(files, identity, knobs=knobs))
    return bundle


def write_trusted_root(path: Path) -> Path:
    """The local instance's trusted_root.json (Sigstore's format) at `path`."""
    path.write_text(json.dumps(local_sigstore().trusted_root_json(), indent=1),
                    encoding="utf-8")
    return path


__all__ = ["SCHEDULED", "SUBMITTER", "Identity", "Knobs", "LocalSigstore", "local_sigstore",
           "make_signed_result", "replace", "result_names", "sign_beside",
           "write_trusted_root"]
