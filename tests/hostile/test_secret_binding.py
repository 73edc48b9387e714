"""Finding 5: an endpoint file chose which secret the scheduled benchmark sends, to which URL,
on which runner. A pull request edits an endpoint file to ask for another endpoint's secret,
to send it to its own host or over plain http, to run on a self-hosted runner, or to schedule
an endpoint no maintainer bound; `epbench matrix` (what benchmark.yml runs) must refuse each
with one line, and `epbench validate` must refuse the reserved key names `matrix` refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from attack import epbench

ENDPOINT = {
    "kind": "endpoint", "schema_version": 1, "id": "acme", "provider": "Acme",
    "model": {"name": "acme-8b"}, "api": "openai-chat",
    "base_url": "https://api.acme.example/v1", "api_key_env": "ACME_API_KEY",
    "division": "serviced", "region": "us-east-1",
    "pricing": {"input_usd_per_mtok": 0.1, "output_usd_per_mtok": 0.2,
                "effective_date": "2026-10-01", "source_url": "https://acme.example/pricing"},
    "schedule": {"enabled": True, "workloads": ["chat-short"],
                 "runners": [{"label": "ubuntu-24.04", "region": "us-east"}]},
}
ALLOWLIST = """\
runners: [ubuntu-24.04]
endpoints:
  acme: {secret: ACME_API_KEY, host: api.acme.example}
  other: {secret: OTHER_API_KEY, host: api.other.example}
"""


def project(tmp_path: Path, **changes: object) -> Path:
    root = tmp_path / "project"
    (root / "endpoints").mkdir(parents=True)
    (root / ".github").mkdir()
    (root / ".github" / "benchmark-allowlist.yaml").write_text(ALLOWLIST)
    (root / "endpoints" / "acme.yaml").write_text(yaml.safe_dump({**ENDPOINT, **changes}))
    return root


def test_the_bound_endpoint_is_scheduled_with_its_bound_secret(tmp_path: Path) -> None:
    done = epbench("matrix", cwd=project(tmp_path))
    assert done.returncode == 0, done.stderr
    (job,) = json.loads(done.stdout)["include"]
    assert (job["api_key_env"], job["runner"]) == ("ACME_API_KEY", "ubuntu-24.04")


@pytest.mark.parametrize(("changes", "pointer"), [
    ({"api_key_env": "OTHER_API_KEY"}, "/api_key_env"),           # another endpoint's secret
    ({"base_url": "https://collect.attacker.example/v1"}, "/base_url"),
    ({"base_url": "https://api.acme.example.attacker.example/v1"}, "/base_url"),
    ({"base_url": "https://api.acme.example@attacker.example/v1"}, "/base_url"),
    ({"base_url": "http://api.acme.example/v1"}, "/base_url"),    # the key in clear text
    ({"schedule": {"enabled": True, "workloads": ["chat-short"],
                   "runners": [{"label": "self-hosted-gpu", "region": "us-east"}]}},
     "/schedule/runners/0/label"),
    ({"id": "mallory"}, "/id"),                                    # bound by no maintainer
])
def test_an_endpoint_file_cannot_steer_a_secret_or_a_runner(
    tmp_path: Path, changes: dict[str, object], pointer: str,
) -> None:
    done = epbench("matrix", cwd=project(tmp_path, **changes))
    assert done.returncode == 1
    lines = (done.stdout + done.stderr).strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    assert f"acme.yaml:{pointer}:" in lines[0]
    assert "benchmark-allowlist.yaml" in lines[0]


def test_a_project_without_an_allow_list_schedules_nothing(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / ".github" / "benchmark-allowlist.yaml").unlink()
    done = epbench("matrix", cwd=root)
    assert done.returncode == 1 and "no allow-list" in done.stdout + done.stderr


@pytest.mark.parametrize("name", ["GITHUB_TOKEN", "PATH", "LD_PRELOAD", "GIT_SSH_COMMAND",
                                  "HTTPS_PROXY", "EPBENCH_PR_TOKEN"])
def test_validate_refuses_the_key_names_matrix_refuses(tmp_path: Path, name: str) -> None:
    root = project(tmp_path, api_key_env=name)
    done = epbench("validate", "endpoints/acme.yaml", cwd=root)
    assert done.returncode == 1
    assert "/api_key_env: reject: [endpoint.api-key-env]" in done.stdout
    assert "reserved" in done.stdout
    matrix = epbench("matrix", cwd=root)
    assert matrix.returncode == 1 and "reserved" in matrix.stdout + matrix.stderr
