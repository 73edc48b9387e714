"""Provenance: where a result was measured, as far as epbench can prove it.

Every result belongs to one tier, decided by the validator and carried by every row, run page
and download:

    attested               the project's own scheduled benchmark workflow measured it and
                           signed the result and its journal (a Sigstore bundle beside them,
                           `<stem>.sigstore.json`), verified against the repository's policy
    attested-by-submitter  epbench's reusable workflow, at a release tag, measured it in the
                           submitter's own repository and signed it the same way
    self-reported          no valid attestation: the submitter's word, shown with that reason
                           and ranked only when the reader includes it

`Provenance.reason` says, in one line for people, why a result is self-reported (or names the
signer for an attested one).
"""

from __future__ import annotations

from dataclasses import dataclass

ATTESTED = "attested"
ATTESTED_BY_SUBMITTER = "attested-by-submitter"
SELF_REPORTED = "self-reported"
TIERS = (ATTESTED, ATTESTED_BY_SUBMITTER, SELF_REPORTED)
"""Strongest first: the order boards sort and filter by."""

BUNDLE_SUFFIX = ".sigstore.json"
"""A result `<stem>.json`'s attestation bundle is `<stem>.sigstore.json` beside it."""


@dataclass(frozen=True)
class Provenance:
    """One result's tier, who signed it (the workflow identity, for attested tiers), and why."""

    tier: str
    reason: str
    signer: str | None = None

    def __post_init__(self) -> None:
        if self.tier not in TIERS:
            raise ValueError(f"unknown provenance tier {self.tier!r}")

    @property
    def attested(self) -> bool:
        return self.tier != SELF_REPORTED


def self_reported(reason: str) -> Provenance:
    """A result with no valid attestation, and the one-line reason."""
    return Provenance(SELF_REPORTED, reason)
