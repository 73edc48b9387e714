"""The workflows attest what they measure: benchmark.yml and the reusable epbench-run.yml sign
each new result and its journal with a GitHub artifact attestation and put the bundle beside
the result as `<stem>.sigstore.json`; the reusable workflow runs the epbench commit GitHub
resolved for its caller (from the job's OIDC token), never one an input names.

The steps' scripts are run here: scripts/attest_results.py in a real git checkout (and the
bundle it places verified end to end with the local Sigstore instance), and the reusable
workflow's first step against a stand-in OIDC token endpoint on loopback.
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from epbench.core.provenance import ATTESTED
from epbench.generator.checks.attestation import load_policy, verify_result_bundle
from tests import workflow_steps
from tests.conftest import ROOT
from tests.sigstore_fixture import POLICY_FILE, SCHEDULED, local_sigstore

SCRIPT = ROOT / "scripts" / "attest_results.py"
ATTEST = "actions/attest-build-provenance@977bb373ede98d70efdf65b84cb5f73e068dcc2a"


def names(steps: list[dict[str, Any]]) -> list[str]:
    return [str(s.get("name") or s.get("uses", "")) for s in steps]


def test_the_benchmark_attests_the_new_results_before_it_proposes_them() -> None:
    job = workflow_steps.load_workflow("benchmark.yml")["jobs"]["merge-and-propose"]
    order = names(job["steps"])
    assert order.index("epbench merge and epbench submit") \
        < order.index("List the new results and their journals") \
        < order.index("Attest the results and their journals") \
        < order.index("Commit the bundle beside each result") \
        < order.index("Open one pull request with the results")
    attest = next(s for s in job["steps"] if s.get("id") == "attest")
    assert attest["uses"] == ATTEST
    assert attest["with"] == {"subject-checksums": "${{ runner.temp }}/subjects.sha256"}
    place = next(s for s in job["steps"] if s.get("name") == "Commit the bundle beside each "
                                                               "result")
    assert place["env"]["BUNDLE"] == "${{ steps.attest.outputs.bundle-path }}"
    assert job["permissions"]["id-token"] == job["permissions"]["attestations"] == "write"
    propose = next(s for s in job["steps"] if s.get("name", "").startswith("Open one pull"))
    assert "git add -- results" in propose["run"]  # the bundles go into the pull request


def test_only_the_attesting_jobs_can_mint_an_oidc_token() -> None:
    holders = {(name, job_id)
               for name in ("benchmark.yml", "epbench-run.yml", "ci.yml", "submission.yml")
               for job_id, job in workflow_steps.load_workflow(name)["jobs"].items()
               if job["permissions"].get("id-token") == "write"}
    assert holders == {("benchmark.yml", "merge-and-propose"), ("epbench-run.yml", "run")}


def test_the_reusable_workflow_measures_and_attests_in_one_job_with_the_resolved_release(
) -> None:
    document = workflow_steps.load_workflow("epbench-run.yml")
    assert set(document["on"]) == {"workflow_call"}
    assert set(document["jobs"]) == {"run"}
    steps = document["jobs"]["run"]["steps"]
    order = names(steps)
    assert order[0] == "Find the epbench release this workflow is"
    assert order.index("epbench run") < order.index("epbench submit") \
        < order.index("Attest the result and its journal") \
        < order.index("Put the bundle beside the result") \
        < order.index("Upload the attested result")
    checkout = next(s for s in steps if s.get("name") == "Check out epbench at that commit")
    assert checkout["with"]["repository"] == "${{ steps.release.outputs.repository }}"
    assert checkout["with"]["ref"] == "${{ steps.release.outputs.sha }}"
    assert "inputs." not in json.dumps(checkout)
    attest = next(s for s in steps if s.get("id") == "attest")
    assert attest["uses"] == ATTEST
    submit = next(s for s in steps if s.get("name") == "epbench submit")
    assert submit["env"] == {"OWNER": "${{ github.repository_owner }}"}


class _Tokens(BaseHTTPRequestHandler):
    claims: ClassVar[dict[str, Any]] = {}
    seen: ClassVar[list[tuple[str, str | None]]] = []

    def do_GET(self) -> None:  # the http.server hook's name
        type(self).seen.append((self.path, self.headers.get("Authorization")))
        body = base64.urlsafe_b64encode(json.dumps(self.claims).encode()).rstrip(b"=")
        reply = json.dumps({"value": f"eyJhbGciOiJub25lIn0.{body.decode()}.sig"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def token_server() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _Tokens)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Tokens.seen = []
    yield f"http://127.0.0.1:{server.server_port}/token?api-version=2.0"
    server.shutdown()


def release_step(url: str, claims: dict[str, Any], tmp_path: Path,
                 ) -> tuple[subprocess.CompletedProcess[str], str]:
    _Tokens.claims = claims
    output = tmp_path / "output"
    output.write_text("")
    step = workflow_steps.step_named("epbench-run.yml", "run",
                                     "Find the epbench release this workflow is")
    env = {"ACTIONS_ID_TOKEN_REQUEST_URL": url, "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "runner-tok",
           "GITHUB_OUTPUT": str(output), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    return workflow_steps.run_step(step, env, tmp_path), output.read_text()


def test_the_release_step_reads_the_called_workflows_commit_from_the_oidc_token(
    token_server: str, tmp_path: Path,
) -> None:
    sha = "0123456789abcdef0123456789abcdef01234567"
    done, output = release_step(token_server, {
        "job_workflow_ref": "epbench/epbench/.github/workflows/epbench-run.yml@refs/tags/v1.4.0",
        "job_workflow_sha": sha, "repository": "acme-ai/llm-bench"}, tmp_path)
    assert done.returncode == 0, done.stderr
    assert output.splitlines() == ["repository=epbench/epbench", "ref=refs/tags/v1.4.0",
                                   f"sha={sha}"]
    assert _Tokens.seen == [("/token?api-version=2.0&audience=epbench-run", "Bearer runner-tok")]
    assert "runner-tok" not in done.stdout + done.stderr


@pytest.mark.parametrize("claims", [
    {"job_workflow_ref": "acme-ai/llm-bench/.github/workflows/other.yml@refs/heads/main",
     "job_workflow_sha": "0" * 40},
    {"job_workflow_ref": "epbench/epbench/.github/workflows/epbench-run.yml@refs/tags/v1",
     "job_workflow_sha": "main"},
    {"job_workflow_ref": "a/b/.github/workflows/epbench-run.yml@refs/tags/v1\nsha=evil",
     "job_workflow_sha": "0" * 40},
    {},
], ids=["another-workflow", "sha-not-a-commit", "newline-in-ref", "no-claims"])
def test_the_release_step_stops_on_a_token_that_names_no_epbench_run_commit(
    token_server: str, tmp_path: Path, claims: dict[str, Any],
) -> None:
    done, output = release_step(token_server, claims, tmp_path)
    assert done.returncode != 0
    assert "the OIDC token names no epbench-run.yml commit" in done.stderr
    assert output == ""


# --- scripts/attest_results.py ---

def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root,
                   check=True, capture_output=True)


def script(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=root, capture_output=True,
                          text=True, timeout=60, check=False)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A checkout with one committed result, then one new result and journal (as submit
    leaves them)."""
    root = tmp_path / "repo"
    old = root / "results" / "epbench" / "emulator"
    old.mkdir(parents=True)
    (old / "2026-11-01-chat-short-00000000.json").write_text("{}")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    new = root / "results" / "epbench" / "acme"
    new.mkdir(parents=True)
    (new / "2026-12-01-chat-short-ab12cd34.json").write_text('{"kind": "result"}')
    (new / "2026-12-01-chat-short-ab12cd34.events.jsonl.gz").write_bytes(b"\x1f\x8bjournal")
    return root


def test_subjects_lists_each_new_result_and_its_journal_with_its_sha256(checkout: Path) -> None:
    done = script(checkout, "subjects", "--checksums", "sums.txt")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "any=true\n"
    stem = "results/epbench/acme/2026-12-01-chat-short-ab12cd34"
    expected = [f"{hashlib.sha256((checkout / p).read_bytes()).hexdigest()}  {p}"
                for p in (f"{stem}.json", f"{stem}.events.jsonl.gz")]
    assert (checkout / "sums.txt").read_text().splitlines() == expected


def test_subjects_refuses_a_result_without_its_journal(checkout: Path) -> None:
    next((checkout / "results" / "epbench" / "acme").glob("*.gz")).unlink()
    done = script(checkout, "subjects", "--checksums", "sums.txt")
    assert done.returncode == 1 and "no journal beside it" in done.stderr


def test_subjects_says_none_when_nothing_is_new(checkout: Path) -> None:
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", "all in")
    done = script(checkout, "subjects", "--checksums", "sums.txt")
    assert (done.returncode, done.stdout) == (0, "any=false\n")
    assert (checkout / "sums.txt").read_text() == ""


def test_the_placed_bundle_verifies_as_the_attested_tier(checkout: Path, tmp_path: Path) -> None:
    assert script(checkout, "subjects", "--checksums", "sums.txt").returncode == 0
    lines = (checkout / "sums.txt").read_text().splitlines()
    # what actions/attest-build-provenance signs: each checksums line as a subject
    signed = {name: (checkout / name).read_bytes() for name in (ln.split("  ")[1]
                                                                for ln in lines)}
    bundle = tmp_path / "attestation.json"
    bundle.write_bytes(local_sigstore().sign(signed, SCHEDULED))
    done = script(checkout, "place", str(bundle), "--checksums", "sums.txt", "--out",
                  str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    result = checkout / "results/epbench/acme/2026-12-01-chat-short-ab12cd34.json"
    journal = result.with_name(result.stem + ".events.jsonl.gz")
    placed = result.with_name(result.stem + ".sigstore.json")
    assert placed.read_bytes() == bundle.read_bytes()
    for path in (result, journal, placed):
        copy = tmp_path / "out" / path.relative_to(checkout)
        assert copy.read_bytes() == path.read_bytes()
    provenance = verify_result_bundle(
        placed.read_bytes(),
        {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in (result, journal)},
        policy=load_policy(POLICY_FILE), trust=local_sigstore().trust())
    assert provenance.tier == ATTESTED, provenance.reason


def test_a_result_signed_beside_itself_verifies_from_a_trusted_root_file(
    checkout: Path, tmp_path: Path,
) -> None:
    from sigstore.models import TrustedRoot

    from tests.sigstore_fixture import sign_beside, write_trusted_root
    result = checkout / "results/epbench/acme/2026-12-01-chat-short-ab12cd34.json"
    journal = result.with_name(result.stem + ".events.jsonl.gz")
    bundle = sign_beside(result, relative_to=checkout)
    trust = TrustedRoot.from_file(str(write_trusted_root(tmp_path / "trusted_root.json")))
    given = {p.relative_to(checkout).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in (result, journal)}
    provenance = verify_result_bundle(bundle.read_bytes(), given,
                                      policy=load_policy(POLICY_FILE), trust=trust)
    assert provenance.tier == ATTESTED, provenance.reason


@pytest.mark.parametrize("name", ["../../etc/passwd", "results/../../etc/passwd",
                                  "results/a/.hidden.json", "/results/a.json"])
def test_place_refuses_a_checksums_line_outside_results(checkout: Path, tmp_path: Path,
                                                        name: str) -> None:
    (checkout / "sums.txt").write_text(f"{'0' * 64}  {name}\n")
    bundle = tmp_path / "b.json"
    bundle.write_text("{}")
    done = script(checkout, "place", str(bundle), "--checksums", "sums.txt")
    assert done.returncode == 1 and "not a `sha256  results/...` line" in done.stderr
