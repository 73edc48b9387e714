"""Attested runs: a result's Sigstore bundle earns a tier only when the right workflow signed
exactly these bytes, and every other bundle is self-reported with one line saying why.

The bundles come from a local Sigstore instance of our own (tests/sigstore_fixture.py: a CA
with an intermediate, a CT log key, a transparency log with real inclusion proofs and signed
checkpoints), verified offline by the `sigstore` library against that local trust root, and
judged against the repository's own .github/attestation-policy.yaml.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from epbench.core.provenance import ATTESTED, ATTESTED_BY_SUBMITTER, SELF_REPORTED, Provenance
from epbench.generator.checks.attestation import (
    check_bundle,
    public_good_trust,
    verify_result_bundle,
)
from tests.sigstore_fixture import (
    PROJECT,
    SCHEDULED,
    SUBMITTER,
    Identity,
    Knobs,
    make_signed_result,
    result_names,
)

STEM = "2026-11-30-chat-short-ab12cd34"
RESULT = json.dumps({"kind": "result", "run_id": "ab12cd34-run"}).encode()
JOURNAL = b"\x1f\x8b" + b"journal lines" * 40


def subjects(result: bytes = RESULT, journal: bytes = JOURNAL) -> dict[str, str]:
    name, journal_name = result_names(STEM)
    return {name: hashlib.sha256(result).hexdigest(),
            journal_name: hashlib.sha256(journal).hexdigest()}


def verdict(identity: Identity = SCHEDULED, knobs: Knobs | None = None,
            result: bytes = RESULT, journal: bytes = JOURNAL) -> Provenance:
    """Sign the honest result and journal as `identity`; verify what is there now."""
    bundle, trust, policy = make_signed_result(RESULT, JOURNAL, identity, stem=STEM,
                                               knobs=knobs)
    return verify_result_bundle(bundle, subjects(result, journal), policy=policy, trust=trust)


def refused(provenance: Provenance) -> str:
    assert provenance.tier == SELF_REPORTED and provenance.signer is None, provenance
    assert "\n" not in provenance.reason and 0 < len(provenance.reason) <= 300, provenance
    return provenance.reason


def test_the_scheduled_benchmark_on_main_is_attested_and_named() -> None:
    provenance = verdict(SCHEDULED)
    assert provenance.tier == ATTESTED
    assert provenance.signer == f"{PROJECT}/.github/workflows/benchmark.yml@refs/heads/main"
    assert provenance.reason == f"signed by {provenance.signer}"


def test_the_reusable_workflow_at_a_release_tag_in_a_providers_repository_is_attested_by_it(
) -> None:
    provenance = verdict(SUBMITTER)
    assert provenance.tier == ATTESTED_BY_SUBMITTER
    assert provenance.signer == (f"{PROJECT}/.github/workflows/epbench-run.yml@refs/tags/v1.4.0"
                                 " in acme-ai/llm-bench")
    assert provenance.reason == f"signed by {provenance.signer}"


def test_the_accepted_signer_carries_the_certificates_claims() -> None:
    bundle, trust, policy = make_signed_result(RESULT, JOURNAL, SUBMITTER, stem=STEM)
    signer = check_bundle(bundle, subjects(), policy=policy, trust=trust)
    assert (signer.tier, signer.claims.repository, signer.claims.ref, signer.claims.trigger,
            signer.claims.runner) == (ATTESTED_BY_SUBMITTER, "acme-ai/llm-bench",
                                      "refs/heads/main", "workflow_dispatch", "github-hosted")
    assert signer.claims.config == "acme-ai/llm-bench/.github/workflows/benchmark.yml@" \
        "refs/heads/main"


def test_a_changed_byte_of_the_result_is_refused() -> None:
    changed = RESULT.replace(b"ab12", b"ab13")
    reason = refused(verdict(result=changed))
    assert reason.startswith(f"{STEM}.json has changed since it was signed (sha256 ")


def test_a_changed_byte_of_the_journal_is_refused() -> None:
    changed = JOURNAL[:-1] + b"X"
    reason = refused(verdict(journal=changed))
    assert reason.startswith(f"{STEM}.events.jsonl.gz has changed since it was signed")


def test_a_bundle_that_does_not_name_the_journal_is_refused() -> None:
    bundle, trust, policy = make_signed_result(RESULT, JOURNAL, stem="another-run")
    reason = refused(verify_result_bundle(bundle, subjects(), policy=policy, trust=trust))
    assert reason == f"the attestation does not cover {STEM}.events.jsonl.gz"


def test_a_path_from_the_repository_root_binds_the_folder_as_well() -> None:
    bundle, trust, policy = make_signed_result(RESULT, JOURNAL, stem="results/epbench/e/" + STEM)
    digest = hashlib.sha256(RESULT).hexdigest()
    journal = hashlib.sha256(JOURNAL).hexdigest()
    here = {f"results/epbench/e/{STEM}.json": digest,
            f"results/epbench/e/{STEM}.events.jsonl.gz": journal}
    assert verify_result_bundle(bundle, here, policy=policy, trust=trust).tier == ATTESTED
    moved = {f"results/mallory/e/{STEM}.json": digest,
             f"results/mallory/e/{STEM}.events.jsonl.gz": journal}
    reason = refused(verify_result_bundle(bundle, moved, policy=policy, trust=trust))
    assert reason == f"the attestation does not cover results/mallory/e/{STEM}.events.jsonl.gz"
    assert verify_result_bundle(bundle, subjects(), policy=policy, trust=trust).attested


def test_another_workflow_path_of_the_project_is_refused() -> None:
    reason = refused(verdict(replace(SCHEDULED,
                                     workflow=f"{PROJECT}/.github/workflows/ci.yml")))
    assert reason == (f"signed by {PROJECT}/.github/workflows/ci.yml@refs/heads/main: a workflow "
                      "the attestation policy does not allow to sign")


@pytest.mark.parametrize("identity", [
    replace(SCHEDULED, workflow="mallory/epbench/.github/workflows/benchmark.yml",
            repository="mallory/epbench"),
    replace(SUBMITTER, workflow="mallory/epbench/.github/workflows/epbench-run.yml"),
], ids=["scheduled-in-a-fork", "reusable-from-a-fork"])
def test_a_fork_of_the_project_is_refused(identity: Identity) -> None:
    reason = refused(verdict(identity))
    assert "a workflow of mallory/epbench, not of epbench/epbench (a fork or a copy)" in reason


@pytest.mark.parametrize("identity", [
    replace(SCHEDULED, ref="refs/pull/7/merge", workflow_ref="refs/pull/7/merge",
            trigger="pull_request"),
    replace(SUBMITTER, ref="refs/pull/3/merge", trigger="pull_request"),
], ids=["scheduled", "reusable"])
def test_a_pull_request_ref_is_refused(identity: Identity) -> None:
    reason = refused(verdict(identity))
    assert "for a pull request (refs/pull/" in reason and reason.endswith("): refused")


def test_a_pull_request_target_event_on_main_is_refused() -> None:
    reason = refused(verdict(replace(SCHEDULED, trigger="pull_request_target")))
    assert reason.endswith("on a pull_request_target event, which may not sign")


def test_the_scheduled_workflow_on_another_branch_is_refused() -> None:
    reason = refused(verdict(replace(SCHEDULED, workflow_ref="refs/heads/try",
                                     ref="refs/heads/try", trigger="workflow_dispatch")))
    assert reason == (f"signed by {PROJECT}/.github/workflows/benchmark.yml at refs/heads/try, "
                      "not at a ref the policy allows (refs/heads/main)")


def test_the_reusable_workflow_at_a_branch_rather_than_a_release_tag_is_refused() -> None:
    reason = refused(verdict(replace(SUBMITTER, workflow_ref="refs/heads/main")))
    assert "at refs/heads/main, not at a ref the policy allows (refs/tags/v*)" in reason


def test_the_scheduled_workflow_called_from_another_workflow_is_refused() -> None:
    called = replace(SCHEDULED, caller_workflow=f"{PROJECT}/.github/workflows/wrapper.yml")
    assert refused(verdict(called)).endswith("@refs/heads/main, not run directly")


def test_the_reusable_workflow_called_from_outside_the_callers_repository_is_refused() -> None:
    reason = refused(verdict(replace(SUBMITTER,
                                     caller_workflow="mallory/x/.github/workflows/a.yml")))
    assert reason.endswith("from a workflow outside acme-ai/llm-bench")


def test_a_certificate_from_another_oidc_issuer_is_refused() -> None:
    reason = refused(verdict(replace(SCHEDULED, issuer="https://accounts.google.com")))
    assert reason == ("the certificate was issued for https://accounts.google.com, not GitHub "
                      "Actions' OIDC issuer")


@pytest.mark.parametrize("knobs", [
    Knobs(valid_for=timedelta(minutes=10), integrated_after=timedelta(minutes=20)),
    Knobs(integrated_after=-timedelta(minutes=1)),
], ids=["after-expiry", "before-issue"])
def test_a_signing_time_outside_the_certificates_validity_is_refused(knobs: Knobs) -> None:
    reason = refused(verdict(knobs=knobs))
    assert reason.startswith("signed at ") and ", outside the signing certificate's validity (" \
        in reason


def test_a_certificate_from_an_untrusted_ca_is_refused() -> None:
    reason = refused(verdict(knobs=Knobs(untrusted_ca=True)))
    assert reason.startswith("the signing certificate does not chain to a trusted Sigstore CA "
                             "at the signing time (")


def test_a_certificate_without_an_sct_is_refused() -> None:
    reason = refused(verdict(knobs=Knobs(no_sct=True)))
    assert reason.startswith("the signing certificate has no valid SCT from a trusted CT log")


def test_a_bundle_without_a_log_entry_is_refused() -> None:
    reason = refused(verdict(knobs=Knobs(no_log_entry=True)))
    assert reason.startswith("the attestation bundle is malformed: ")
    assert "log entry" in reason


@pytest.mark.parametrize("knobs", [Knobs(bad_proof=True), Knobs(foreign_log=True)],
                         ids=["wrong-inclusion-proof", "checkpoint-and-set-of-another-log"])
def test_an_invalid_log_entry_is_refused(knobs: Knobs) -> None:
    reason = refused(verdict(knobs=knobs))
    assert reason.startswith("the transparency log entry does not verify (")


def test_a_signature_over_other_bytes_is_refused() -> None:
    reason = refused(verdict(knobs=Knobs(signature_over=b"DSSEv1 something else")))
    assert reason.startswith("the envelope's signature does not verify with the signing "
                             "certificate")


@pytest.mark.parametrize(("statement", "expected"), [
    ({"_type": "https://in-toto.io/Statement/v1", "predicateType": "https://example.org/x",
      "subject": []}, "the attested statement is not SLSA build provenance v1"),
    ({"_type": "something/else"}, "the attested payload is not an in-toto Statement v1"),
    ({"_type": "https://in-toto.io/Statement/v1",
      "predicateType": "https://slsa.dev/provenance/v1", "subject": [{"name": "x.json"}]},
     "an attested subject is not a name with digests"),
], ids=["other-predicate", "not-in-toto", "subject-without-digest"])
def test_a_signed_statement_of_another_kind_is_refused(statement: dict[str, Any],
                                                       expected: str) -> None:
    assert refused(verdict(knobs=Knobs(statement=statement))) == expected


def test_the_public_good_root_the_library_ships_loads_offline_and_refuses_a_local_ca() -> None:
    bundle, _trust, policy = make_signed_result(RESULT, JOURNAL, stem=STEM)
    trust = public_good_trust()
    assert trust.get_fulcio_certs()  # the shipped trusted_root.json, read without network
    reason = refused(verify_result_bundle(bundle, subjects(), policy=policy, trust=None))
    assert reason.startswith("the signing certificate does not chain to a trusted Sigstore CA")


HOSTILE = [
    b"", b"null", b"[]", b"{}", b"\xff\xfe{", b"[" * 5000 + b"]" * 5000,
    b'{"mediaType": "a", "mediaType": "b"}',
    b'{"mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json"}',
    b'{"mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json", "verificationMaterial": '
    b'{"certificate": {"rawBytes": "AAAA"}, "tlogEntries": []}, "dsseEnvelope": {}}',
    b" " * (5 * 1024 * 1024),
]


@pytest.mark.parametrize("data", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_bundle_bytes_are_self_reported_with_one_line(data: bytes) -> None:
    _bundle, trust, policy = make_signed_result(RESULT, JOURNAL, stem=STEM)
    refused(verify_result_bundle(data, subjects(), policy=policy, trust=trust))


def test_a_bundle_cut_short_or_with_a_field_swapped_never_raises() -> None:
    bundle, trust, policy = make_signed_result(RESULT, JOURNAL, stem=STEM)
    cuts = [bundle[:n] for n in range(0, len(bundle), max(1, len(bundle) // 150))]
    document = json.loads(bundle)
    swapped = []
    for path in (("verificationMaterial", "certificate"), ("dsseEnvelope", "payload"),
                 ("verificationMaterial", "tlogEntries"), ("dsseEnvelope", "signatures")):
        for value in (None, 7, "AAAA", [], {}, [{}], "x" * 1000):
            copy = json.loads(bundle)
            copy[path[0]][path[1]] = value
            swapped.append(json.dumps(copy).encode())
    for data in cuts + swapped:
        refused(verify_result_bundle(data, subjects(), policy=policy, trust=trust))
    assert document["mediaType"].startswith("application/vnd.dev.sigstore.bundle")


def test_seeded_byte_flips_never_raise_and_never_earn_a_tier_for_other_bytes() -> None:
    bundle, trust, policy = make_signed_result(RESULT, JOURNAL, stem=STEM)
    rng = random.Random(21)
    attested = 0
    for _ in range(150):
        data = bytearray(bundle)
        at = rng.randrange(len(data))
        data[at] = rng.choice([c for c in b'"{}[],:0Aa/+= \\\x00' if c != data[at]])
        provenance = verify_result_bundle(bytes(data), subjects(), policy=policy, trust=trust)
        if provenance.attested:  # only a flip the parsed bundle does not see (JSON spacing)
            attested += 1
            assert json.loads(bytes(data)) == json.loads(bundle)
        else:
            refused(provenance)
    assert attested < 30
