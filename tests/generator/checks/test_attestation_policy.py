"""The attestation policy file: the shipped one loads and says what the design says, and a bad
one is one InputError line naming the file and the place."""

from __future__ import annotations

from pathlib import Path

import pytest

from epbench.core.errors import InputError
from epbench.core.provenance import ATTESTED, ATTESTED_BY_SUBMITTER
from epbench.generator.checks.attestation import POLICY_PATH, load_policy
from epbench.generator.checks.attestation.policy import matches
from tests.conftest import ROOT

GOOD = """\
schema_version: 1
issuer: https://token.actions.githubusercontent.com
signers:
  - tier: attested
    workflow: o/r/.github/workflows/benchmark.yml
    refs: [refs/heads/main]
    callers: [o/r]
    caller_refs: [refs/heads/main]
    triggers: [schedule]
    direct: true
"""


def test_the_shipped_policy_attests_the_scheduled_run_and_the_tagged_reusable_workflow() -> None:
    policy = load_policy(ROOT / POLICY_PATH)
    assert policy.issuer == "https://token.actions.githubusercontent.com"
    by_tier = {rule.tier: rule for rule in policy.signers}
    assert set(by_tier) == {ATTESTED, ATTESTED_BY_SUBMITTER}
    scheduled = by_tier[ATTESTED]
    assert scheduled.workflow == "epbench/epbench/.github/workflows/benchmark.yml"
    assert (scheduled.refs, scheduled.callers, scheduled.direct) == (
        ("refs/heads/main",), ("epbench/epbench",), True)
    reusable = by_tier[ATTESTED_BY_SUBMITTER]
    assert reusable.workflow == "epbench/epbench/.github/workflows/epbench-run.yml"
    assert reusable.refs == ("refs/tags/v*",) and not reusable.direct
    assert (ROOT / ".github" / "workflows" / "epbench-run.yml").is_file()


def test_the_policy_sits_where_only_maintainers_may_change_it() -> None:
    owners = (ROOT / ".github" / "CODEOWNERS").read_text(encoding="utf-8")
    assert "/.github/ @epbench/maintainers" in owners
    assert POLICY_PATH.startswith(".github/")


@pytest.mark.parametrize(("pattern", "value", "expected"), [
    ("refs/tags/v*", "refs/tags/v1.4.0", True),
    ("refs/tags/v*", "refs/tags/v1/evil", False),
    ("refs/tags/v*", "refs/tags/x1", False),
    ("refs/heads/**", "refs/heads/feature/x", True),
    ("refs/heads/main", "refs/heads/mainline", False),
    ("*/*", "acme/bench", True),
    ("*/*", "acme/bench/extra", False),
    ("o/r.yml", "o/rxyml", False),
])
def test_patterns_match_whole_strings_one_segment_per_star(pattern: str, value: str,
                                                          expected: bool) -> None:
    assert matches(pattern, value) is expected


@pytest.mark.parametrize(("edit", "message"), [
    (lambda t: "- just a list\n", "expected exactly the keys schema_version, issuer, signers"),
    (lambda t: t.replace("schema_version: 1", "schema_version: 2"), "/schema_version: must be 1"),
    (lambda t: t.replace("issuer: https://", "issuer: http://"), "/issuer: must be an https://"),
    (lambda t: t.replace("tier: attested", "tier: trusted"), "/signers/0/tier: must be"),
    (lambda t: t.replace("o/r/.github/workflows/benchmark.yml", "o/*/.github/workflows/b.yml"),
     "/signers/0/workflow: must be owner/repo/.github/workflows/<file>.yml"),
    (lambda t: t.replace("refs: [refs/heads/main]", "refs: [refs/**]"),
     "/signers/0: a pattern admits pull-request refs"),
    (lambda t: t.replace("triggers: [schedule]", "triggers: [pull_request_target]"),
     "/signers/0/triggers: pull-request events may not sign"),
    (lambda t: t.replace("callers: [o/r]", "callers: []"), "/signers/0/callers: must be a "),
    (lambda t: t.replace("direct: true", "direct: yes please"), "/signers/0/direct: must be"),
    (lambda t: t + "    extra: 1\n", "/signers/0: expected exactly the keys"),
    (lambda t: t.replace("schema_version: 1\n", "schema_version: 1\nschema_version: 1\n"),
     "duplicate key"),
])
def test_a_bad_policy_is_one_input_error_line_naming_the_file_and_place(
    tmp_path: Path, edit: object, message: str,
) -> None:
    path = tmp_path / "attestation-policy.yaml"
    path.write_text(edit(GOOD), encoding="utf-8")  # type: ignore[operator]
    with pytest.raises(InputError) as raised:
        load_policy(path)
    text = str(raised.value)
    assert text.startswith(str(path)) and message in text and "\n" not in text, text


def test_the_minimal_policy_loads(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(GOOD, encoding="utf-8")
    assert load_policy(path).signers[0].workflow == "o/r/.github/workflows/benchmark.yml"
