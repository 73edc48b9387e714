"""Finding 3: API keys published through request headers. An endpoint file used to accept any
header value; the whole endpoint block was copied into plan.json and result.json and printed on
the run page; the scanner missed a lower-case hex key (Azure's shape). Now header values are
`${NAME}` references only, results keep header names only, a literal is refused, and a site
built from results whose endpoint sent headers holds no header value anywhere."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
import yaml
from attack import ROOT, TINY_WORKLOAD, epbench

from epbench.core.credentials import looks_like_secret
from epbench.generator.checks.secret import scan
from epbench.generator.validate import validate_paths

ORG_VALUE = "org-5f0c2a9e77d14b6c8e3a1f2d9b7c4e61"
AZURE_KEY = "9f3b2c7d4e5a61f08b9c2d3e4f5a6b7c"  # 32 lower-case hex digits


def project_with_headers(tmp_path: Path) -> Path:
    """A project with a fast emulator endpoint that sends `X-Org: ${ACME_ORG}` and a tiny
    workload."""
    project = tmp_path / "project"
    (project / "endpoints").mkdir(parents=True)
    (project / "workloads" / "serving").mkdir(parents=True)
    (project / "results").mkdir()
    doc = yaml.safe_load((ROOT / "endpoints" / "emulator.yaml").read_text())
    doc["id"] = "emulator-org"
    doc["request"] = {"headers": {"X-Org": "${ACME_ORG}"}}
    doc["emulator"].update(slots=8, ttft_ms=2, prefill_ms_per_1k_tokens=1, tpot_ms=1,
                           tpot_growth=0.0, jitter=0.0)
    (project / "endpoints" / "emulator-org.yaml").write_text(yaml.safe_dump(doc))
    (project / "workloads" / "serving" / "tiny.yaml").write_text(yaml.safe_dump(TINY_WORKLOAD))
    return project


def write(path: Path, doc: dict[str, object]) -> Path:
    path.write_text(json.dumps(doc, indent=1))
    return path


def every_byte_of(folder: Path) -> bytes:
    """All files under `folder`, gzip files also decompressed."""
    out = []
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            out.append(data)
            if data[:2] == b"\x1f\x8b":
                out.append(gzip.decompress(data))
    return b"\n".join(out)


def test_a_literal_header_value_or_a_hex_key_in_an_endpoint_file_is_refused(
    tmp_path: Path,
) -> None:
    project = project_with_headers(tmp_path)
    path = project / "endpoints" / "emulator-org.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["request"]["headers"]["api-key"] = AZURE_KEY
    doc["description"] = f"key {AZURE_KEY}"
    path.write_text(yaml.safe_dump(doc))
    findings = {(f.check, f.pointer) for f in validate_paths([path]).findings}
    assert ("schema.pattern", "/request/headers/api-key") in findings
    assert ("secret.suspected", "/request/headers/api-key") in findings
    assert ("secret.suspected", "/description") in findings
    assert all(AZURE_KEY not in f.line() for f in validate_paths([path]).findings)


def test_a_site_built_from_runs_that_sent_headers_shows_no_header_value(tmp_path: Path) -> None:
    project = project_with_headers(tmp_path)
    env = dict(os.environ, ACME_ORG=ORG_VALUE)
    ran = epbench("run", "--endpoint", "endpoints/emulator-org.yaml", "--workload",
                  "workloads/serving/tiny.yaml", "--out", "runs", "--no-progress",
                  cwd=project, env=env)
    assert ran.returncode == 0, ran.stderr[-3000:]
    (run_dir,) = (project / "runs").iterdir()
    assert ORG_VALUE.encode() not in every_byte_of(run_dir)
    result = json.loads((run_dir / "result.json").read_text())
    assert result["endpoint"]["request"] == {"header_names": ["X-Org"]}
    assert "${ACME_ORG}" not in (run_dir / "result.json").read_text()

    submitted = epbench("submit", str(run_dir), "--submitter", "eve", cwd=project)
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr

    # A hand-made result that still carries a header value (as older epbench wrote them).
    (good,) = (project / "results").rglob("*.json")
    forged = json.loads(good.read_text())
    forged["run_id"] = "f" * 16
    forged["endpoint"]["request"] = {"headers": {"X-Org": ORG_VALUE}}
    target = good.with_name(good.name[: -len("ffffffff.json")] + "ffffffff.json")
    write(target, forged)
    report = validate_paths([target])
    assert report.blocking
    assert "/endpoint/request/headers/X-Org" in {f.pointer for f in report.findings}
    forged["endpoint"]["request"] = {"headers": {"X-Org": "${ACME_ORG}"}}
    assert "secret.header-values" in {
        f.check for f in validate_paths([write(target, forged)]).findings}
    write(target, dict(forged, endpoint={**forged["endpoint"],
                                         "request": {"headers": {"X-Org": ORG_VALUE}}}))

    built = epbench("build", "--out", "_site", cwd=project)
    assert built.returncode == 0, built.stderr[-3000:]
    site = every_byte_of(project / "_site")
    assert good.stem.encode() in site or result["run_id"].encode() in site  # the run is there
    assert ORG_VALUE.encode() not in site
    assert b"${ACME_ORG}" not in site
    shutil.rmtree(project / "runs")


@pytest.mark.parametrize("secret", [
    AZURE_KEY,                                                    # Azure: 32 lower-case hex
    "9F3B2C7D4E5A61F08B9C2D3E4F5A6B7C11D2E3F4",                   # upper-case hex
    "q8Zt3vN1xL0pR7mK2wY9cB4dF6gH5jS3aE1uI0oP2lQ=",               # base64 with padding
    "dGhpcy1pcy1hLXNlY3JldC10b2tlbi0xMjM0NTY3ODkw",               # base64 of text
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4",  # a JWT
    "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx",                     # Anthropic
    "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",                    # Google
    "gsk_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6",                       # Groq
    "k3j9x2m8q7w1z5v4b6n0p3r8t2y7u1i9o4e6",                       # 36 random lower + digits
])
def test_the_scanner_knows_hex_base64_and_prefixed_keys(secret: str) -> None:
    assert looks_like_secret(secret)
    assert looks_like_secret(f"the key is {secret}, do not share")


@pytest.mark.parametrize("text", [
    "0" * 64,                                                     # no entropy
    "8d41c7e2-a9b3-45f6-8e1d-2c3b4a5f6e7d",                       # a UUID
    "serving-workload-chat-short-concurrency-sweep-version-two",  # words joined by dashes
    "https://api.acme.example/v1/chat/completions",
    "meta-llama/Llama-3.1-8B-Instruct",
    "ACME_API_KEY",
    "/work/wt/site2/tests/data/mlperf",                           # an absolute path
    "results/site2/acme-llm3/2026-11-30-chat-short-1a2b3c4d.json",  # a relative path
    "/home/Alice/Projects2026/mlperf-submission/results/closed",  # a mixed-case path
])
def test_the_scanner_leaves_ordinary_values_alone(text: str) -> None:
    assert not looks_like_secret(text)


def test_a_hex_digest_passes_only_where_a_digest_belongs() -> None:
    digest = hashlib.sha256(b"workload").hexdigest()
    assert scan({"workload": {"sha256": digest}, "harness": {"git_sha": digest[:40]}}, "f") == []
    assert [f.pointer for f in scan({"notes": digest}, "f")] == ["/notes"]
