"""epbench.generator.checks.provenance: each result's tier at validation, and the reserved submitter
id; epbench.generator.confirmation: a self-reported row held against attested runs (item 9)."""

from __future__ import annotations

import hashlib
import json
import sys
import types
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from epbench.core.provenance import ATTESTED, ATTESTED_BY_SUBMITTER, Provenance, self_reported
from epbench.generator.checks.provenance import check_reserved, tier_of
from epbench.generator.confirmation import confirmations, runs_agree

DIGEST = "a" * 64
JOURNAL = "b" * 64


def result(name: str = "mallory") -> dict[str, Any]:
    return {"submitter": {"name": name}, "evidence": {"sha256": JOURNAL, "lines": 1, "bytes": 1}}


def test_a_result_without_a_bundle_beside_it_is_self_reported(tmp_path: Path) -> None:
    path = tmp_path / "2026-11-20-chat-short-a1b2c3d4.json"
    path.write_text("{}")
    assert tier_of(result(), path, DIGEST, tmp_path) == self_reported("no attestation bundle")


@pytest.fixture
def fake_attestation(monkeypatch: pytest.MonkeyPatch) -> list[tuple[bytes, dict[str, str]]]:
    """epbench.generator.checks.attestation as its interface: the calls it gets, an attested
    answer."""
    calls: list[tuple[bytes, dict[str, str]]] = []
    module = types.ModuleType("epbench.generator.checks.attestation")

    def verify_result_bundle(bundle: bytes, subjects: dict[str, str], *,
                             policy: Any) -> Provenance:
        assert policy == "the policy"
        calls.append((bundle, subjects))
        return Provenance(ATTESTED, "signed by epbench/epbench/.github/workflows/benchmark.yml",
                          "epbench/epbench/.github/workflows/benchmark.yml")

    module.POLICY_PATH = ".github/attestation-policy.yaml"  # type: ignore[attr-defined]
    module.load_policy = lambda path: "the policy"  # type: ignore[attr-defined]
    module.verify_result_bundle = verify_result_bundle  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "epbench.generator.checks.attestation", module)
    return calls


def test_a_bundle_is_verified_over_the_result_and_its_journal_digests(
    tmp_path: Path, fake_attestation: list[tuple[bytes, dict[str, str]]],
) -> None:
    path = tmp_path / "results" / "epbench" / "e" / "2026-11-20-chat-short-a1b2c3d4.json"
    path.parent.mkdir(parents=True)
    path.write_text("{}")
    path.with_name(path.stem + ".sigstore.json").write_bytes(b'{"bundle": 1}')
    # the bundle signs the committed files: the gzipped journal's own bytes, not the
    # evidence pin (which is of the inflated lines)
    path.with_name(path.stem + ".events.jsonl.gz").write_bytes(b"the gzip bytes")
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "attestation-policy.yaml").write_text("policy")
    tier = tier_of(result("epbench"), path, DIGEST, tmp_path)
    assert tier.tier == ATTESTED
    assert fake_attestation == [(b'{"bundle": 1}', {
        "2026-11-20-chat-short-a1b2c3d4.json": DIGEST,
        "2026-11-20-chat-short-a1b2c3d4.events.jsonl.gz":
            hashlib.sha256(b"the gzip bytes").hexdigest()})]
    assert check_reserved(result("epbench"), tier, "f.json") == []


def test_a_bundle_without_a_policy_in_the_project_earns_no_tier(
    tmp_path: Path, fake_attestation: list[tuple[bytes, dict[str, str]]],
) -> None:
    path = tmp_path / "r.json"
    path.write_text("{}")
    (tmp_path / "r.sigstore.json").write_text("{}")
    tier = tier_of(result(), path, DIGEST, tmp_path)
    assert tier.tier == "self-reported" and ".github/attestation-policy.yaml" in tier.reason
    assert fake_attestation == []


@pytest.mark.parametrize("name", ["epbench", "epbench-bot", "epbench.scheduled"])
def test_the_scheduled_benchmarks_id_on_a_result_it_did_not_attest_is_rejected(
    name: str,
) -> None:
    for tier in (self_reported("no attestation bundle"),
                 Provenance(ATTESTED_BY_SUBMITTER, "signed by a provider's workflow")):
        (finding,) = check_reserved(result(name), tier, "f.json")
        assert (finding.check, finding.severity, finding.pointer) == (
            "provenance.reserved-submitter", "reject", "/submitter/name")
        assert tier.tier in finding.message and finding.fix


def test_other_ids_are_anyones() -> None:
    for name in ("mallory", "epbenchx", "my-epbench"):
        assert check_reserved(result(name), self_reported("no attestation bundle"), "f") == []


# --- item 9: confirmed by an independent run ------------------------------------------------

def point(run: str, pid: str, tps: float, ttft: float, low: float | None = None,
          high: float | None = None) -> dict[str, Any]:
    return {"run_id": run, "point": pid, "system_tps": tps, "ttft_ms_p90": ttft,
            "ttft_ms_p90_ci_low": low, "ttft_ms_p90_ci_high": high}


def run(run_id: str, tier: str, day: str, endpoint: str = "acme") -> dict[str, Any]:
    return {"run_id": run_id, "tier": tier, "date": day, "endpoint_id": endpoint,
            "workload_id": "chat-short"}


def test_two_runs_agree_within_ten_percent_or_the_interval_at_every_common_point() -> None:
    mine = {"c1": point("s", "c1", 100.0, 200.0, 150.0, 260.0), "c8": point("s", "c8", 500, 400)}
    assert runs_agree(mine, {"c1": point("a", "c1", 109.0, 250.0)}) is True  # ttft in interval
    assert runs_agree(mine, {"c1": point("a", "c1", 100.0, 270.0)}) is False  # 26% out of it
    assert runs_agree(mine, {"c1": point("a", "c1", 80.0, 200.0)}) is False  # 25% lower tps
    assert runs_agree(mine, {"c64": point("a", "c64", 1.0, 1.0)}) is None  # nothing in common


def test_a_self_reported_row_names_the_attested_run_that_confirms_or_contradicts_it() -> None:
    runs = pd.DataFrame([run("self1", "self-reported", "2026-11-20"),
                         run("att-near", ATTESTED, "2026-11-25"),
                         run("att-far", ATTESTED, "2026-12-20"),
                         run("self2", "self-reported", "2026-11-20", "other"),
                         run("self3", "self-reported", "2026-11-26")])
    points = pd.DataFrame([point("self1", "c1", 100.0, 200.0),
                           point("att-near", "c1", 95.0, 190.0),
                           point("att-far", "c1", 100.0, 200.0),  # agrees, but 30 days off
                           point("self2", "c1", 100.0, 200.0),
                           point("self3", "c1", 300.0, 200.0)])
    out = confirmations(runs, points).set_index("run_id")
    assert (out.at["self1", "confirmation"], out.at["self1", "confirmed_by"]) == (
        "confirmed", "att-near")
    assert out.at["self2", "confirmation"] is None  # no attested run of its endpoint
    assert (out.at["self3", "confirmation"], out.at["self3", "confirmed_by"]) == (
        "disagrees", "att-near")
    assert out.at["att-near", "confirmation"] is None  # attested rows need no confirming
    assert json.dumps(out["confirmation"].tolist())  # plain values for the downloads
