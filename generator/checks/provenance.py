"""Provenance at validation: each result's tier, and the identities only attested results use.

`tier_of(result, path, digest, project)` decides the tier (epbench.core.provenance):

- no `<stem>.sigstore.json` beside the result: self-reported, "no attestation bundle" (every
  result written before attestations existed loads this way);
- a bundle: epbench.generator.checks.attestation verifies it offline against the repository's policy
  (`.github/attestation-policy.yaml` in the project) over the sha256 of the result's bytes and
  of its journal; whatever fails there is self-reported with the one-line reason it gives.

`check_reserved(result, provenance, file)`: the project's own scheduled benchmark files its
results under the repository owner's id, `epbench`; that id (and `epbench-…`, `epbench.…`,
`epbench_…`, which read as the project's) belongs to results the scheduled run attested. A
result under it with any other tier is rejected, so no submitter can borrow the project's name.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

from epbench.core import evidence
from epbench.core.digests import sha256_file
from epbench.core.findings import Finding
from epbench.core.provenance import ATTESTED, BUNDLE_SUFFIX, Provenance, self_reported
from epbench.generator.checks.base import check

NO_BUNDLE = "no attestation bundle"
RESERVED = re.compile(r"epbench(?:[-._].*)?", re.DOTALL)
"""The scheduled benchmark's submitter id (the repository owner, `epbench`) and look-alikes."""

RESERVED_SUBMITTER = check(
    "provenance.reserved-submitter", "reject",
    "only results the project's scheduled benchmark attested use the submitter id `epbench`",
    "submit under your own id (`epbench submit --submitter YOUR-ID`, results/YOUR-ID/): "
    "`epbench` is the scheduled benchmark's, and its results carry a verified attestation",
)


def bundle_path(path: Path) -> Path:
    """Where a result's attestation bundle sits: `<stem>.sigstore.json` beside it."""
    return path.with_name(path.stem + BUNDLE_SUFFIX)


def tier_of(result: dict[str, Any], path: Path, digest: str, project: Path | None) -> Provenance:
    """The result's provenance; `digest` is the sha256 of the result's bytes as checked."""
    bundle = bundle_path(path)
    try:  # one lstat: a regular file, not a link (nearly always: no such file)
        regular = stat.S_ISREG(os.lstat(bundle).st_mode)
    except OSError:
        regular = False
    if not regular:
        return self_reported(NO_BUNDLE)
    from epbench.generator.checks.attestation import POLICY_PATH, load_policy, verify_result_bundle

    if project is None or not (project / POLICY_PATH).is_file():
        return self_reported(f"a bundle, but no {POLICY_PATH} to verify it against")
    subjects = {path.name: digest}
    journal = path.with_name(path.stem + evidence.SUFFIX)
    try:
        # the bundle signs the files as committed: the gzipped journal's own bytes (the
        # result's evidence pin is of its inflated lines, which the evidence check holds it to)
        if journal.is_file() and not journal.is_symlink():
            subjects[journal.name] = sha256_file(journal)
        data = bundle.read_bytes()
        policy = load_policy(project / POLICY_PATH)
    except Exception as exc:  # an unreadable bundle or a broken policy earns no tier
        return self_reported(f"the attestation could not be checked ({type(exc).__name__})")
    return verify_result_bundle(data, subjects, policy=policy)


def check_reserved(result: dict[str, Any], provenance: Provenance, file: str) -> list[Finding]:
    """A reserved submitter id on a result the scheduled benchmark did not attest: rejected."""
    name = (result.get("submitter") or {}).get("name")
    if not isinstance(name, str) or not RESERVED.fullmatch(name) or provenance.tier == ATTESTED:
        return []
    return [RESERVED_SUBMITTER.at(
        file, "/submitter/name",
        f"submitter {name!r} is reserved for the scheduled benchmark's attested results; this "
        f"result is {provenance.tier} ({provenance.reason})")]

