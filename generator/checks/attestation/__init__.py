"""Attested runs: a result's Sigstore bundle (`<stem>.sigstore.json`) verified offline against
the repository's attestation policy, giving the result its provenance tier.

    policy = load_policy(".github/attestation-policy.yaml")
    provenance = verify_result_bundle(bundle_bytes, {"<stem>.json": sha256_hex,
                                                     "<stem>.events.jsonl.gz": sha256_hex},
                                      policy=policy)            # trust: public-good root

`policy.py` reads the policy and judges a certificate's signer identity; `verify.py` has the
library verify the bundle and checks what it signs. See docs/provenance.md.
"""

from epbench.generator.checks.attestation.policy import (
    AttestationPolicy,
    Claims,
    Refused,
    Signer,
    SignerRule,
    load_policy,
)
from epbench.generator.checks.attestation.verify import (
    check_bundle,
    public_good_trust,
    verify_result_bundle,
)

POLICY_PATH = ".github/attestation-policy.yaml"
"""Where a checkout keeps its policy (relative to the repository root)."""

__all__ = ["POLICY_PATH", "AttestationPolicy", "Claims", "Refused", "Signer", "SignerRule",
           "check_bundle", "load_policy", "public_good_trust", "verify_result_bundle"]
