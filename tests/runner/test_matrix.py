"""`epbench matrix`: which scheduled benchmark jobs the workflow fans out to."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest
from click.testing import CliRunner

from epbench.cli import main
from epbench.core.errors import InputError
from epbench.runner.matrix import build_matrix
from tests.conftest import ROOT

ENDPOINT = """\
kind: endpoint
schema_version: 1
id: {id}
provider: Acme
model: {{name: acme-8b}}
api: openai-chat
base_url: https://api.acme.example/v1
api_key_env: {key}
division: serviced
region: us-east-1
pricing:
  input_usd_per_mtok: 0.1
  output_usd_per_mtok: 0.2
  effective_date: "2026-10-01"
  source_url: https://acme.example/pricing
schedule:
  enabled: {enabled}
  workloads: [chat-short, weather-single-call]
  runners:
    - {{label: bench-us-east, region: us-east}}
    - {{label: bench-eu-west, region: eu-west}}
"""


def write_endpoint(folder: Path, name: str = "acme", *, enabled: bool = True,
                   key: str = "ACME_API_KEY") -> Path:
    """An endpoint file, and its binding in the allow-list beside the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.yaml"
    path.write_text(
        ENDPOINT.format(id=name, key=key, enabled="true" if enabled else "false"),
        encoding="utf-8",
    )
    allow = folder.parent / ".github" / "benchmark-allowlist.yaml"
    allow.parent.mkdir(exist_ok=True)
    if not allow.exists():
        allow.write_text("runners: [bench-us-east, bench-eu-west]\nendpoints:\n",
                         encoding="utf-8")
    secret = "null" if key == "null" else key
    with allow.open("a", encoding="utf-8") as handle:
        handle.write(f"  {name}: {{secret: {secret}, host: api.acme.example}}\n")
    return path


@pytest.fixture
def endpoints(tmp_path: Path) -> Path:
    """An endpoints folder inside a project (the allow-list sits in the project's .github/)."""
    folder = tmp_path / "endpoints"
    folder.mkdir()
    return folder


def include(matrix_json: str) -> list[dict[str, str]]:
    data = json.loads(matrix_json)
    assert list(data) == ["include"]
    return data["include"]


def test_shipped_endpoints_schedule_nothing_so_the_include_list_is_empty(repo_root: Path) -> None:
    matrix = build_matrix(repo_root / "endpoints", None, None, None, 1)
    assert matrix.empty
    assert matrix.to_json() == '{"include":[]}'


def test_an_enabled_endpoint_gives_every_workload_on_every_runner(endpoints: Path) -> None:
    write_endpoint(endpoints)
    jobs = include(build_matrix(endpoints, None, None, None, 1).to_json())
    assert [(j["workload"], j["runner"], j["region"]) for j in jobs] == [
        ("chat-short", "bench-us-east", "us-east"),
        ("chat-short", "bench-eu-west", "eu-west"),
        ("weather-single-call", "bench-us-east", "us-east"),
        ("weather-single-call", "bench-eu-west", "eu-west"),
    ]
    assert {j["endpoint"] for j in jobs} == {"acme"}
    assert {j["shard"] for j in jobs} == {"1/1"}
    assert {j["api_key_env"] for j in jobs} == {"ACME_API_KEY"}
    assert jobs[0]["slug"] == "acme--chat-short--bench-us-east--us-east--1of1"


def test_shards_multiply_the_jobs_and_number_them_one_based(endpoints: Path) -> None:
    write_endpoint(endpoints)
    jobs = include(build_matrix(endpoints, None, "chat-short", "eu-west", 3).to_json())
    assert [j["shard"] for j in jobs] == ["1/3", "2/3", "3/3"]
    assert len({j["slug"] for j in jobs}) == 3


def test_disabled_endpoints_are_left_out_and_filters_narrow_the_rest(endpoints: Path) -> None:
    write_endpoint(endpoints, "acme")
    write_endpoint(endpoints, "other", enabled=False)
    write_endpoint(endpoints, "third", key="null")
    assert len(include(build_matrix(endpoints, None, None, None, 2).to_json())) == 2 * 2 * 2 * 2
    only = include(build_matrix(endpoints, "third", None, "us-east", 1).to_json())
    assert [(j["endpoint"], j["workload"], j["api_key_env"]) for j in only] == [
        ("third", "chat-short", ""),
        ("third", "weather-single-call", ""),
    ]
    assert build_matrix(endpoints, "other", None, None, 1).empty
    assert build_matrix(endpoints, None, None, "ap-south", 1).empty


def test_a_bad_endpoint_file_is_one_line_naming_the_file_and_field(endpoints: Path) -> None:
    path = write_endpoint(endpoints)
    path.write_text(path.read_text().replace("division: serviced", "division: cloudy"))
    with pytest.raises(InputError) as caught:
        build_matrix(endpoints, None, None, None, 1)
    message = str(caught.value)
    assert "\n" not in message
    assert "acme.yaml:/division" in message


def test_a_key_variable_that_would_shadow_the_runner_environment_is_refused(
    endpoints: Path,
) -> None:
    write_endpoint(endpoints, key="GITHUB_TOKEN")
    with pytest.raises(InputError, match="reserved environment variable"):
        build_matrix(endpoints, None, None, None, 1)


def test_shard_counts_outside_one_to_sixty_four_are_refused(endpoints: Path) -> None:
    with pytest.raises(InputError, match="--shards"):
        build_matrix(endpoints, None, None, None, 0)
    with pytest.raises(InputError, match="--shards"):
        build_matrix(endpoints, None, None, None, 65)


def test_a_matrix_over_githubs_256_jobs_is_refused(endpoints: Path) -> None:
    write_endpoint(endpoints)
    # 2 workloads x 2 runners x 64 shards = 256 jobs: allowed; one more endpoint doubles it.
    assert len(build_matrix(endpoints, None, None, None, 64).jobs) == 256
    write_endpoint(endpoints, "second")
    with pytest.raises(InputError, match="512 matrix jobs"):
        build_matrix(endpoints, None, None, None, 64)


def test_the_cli_prints_the_matrix_and_errors_as_one_line(endpoints: Path) -> None:
    write_endpoint(endpoints)
    runner = CliRunner()
    ok = runner.invoke(main, ["matrix", "--endpoints", str(endpoints), "--region", "us-east"])
    assert ok.exit_code == 0, ok.output
    assert [j["runner"] for j in include(ok.output)] == ["bench-us-east", "bench-us-east"]
    bad = runner.invoke(main, ["matrix", "--endpoints", str(endpoints / "missing")])
    assert bad.exit_code == 1
    assert "no such folder" in bad.output


# --- scripts/collect_runs.py: what benchmark.yml's last job does with the matrix's shards ---

def load_collector() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "collect_runs", ROOT / "scripts" / "collect_runs.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["collect_runs"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def write_shard(root: Path, index: int, count: int, *, region: str = "us-east",
                endpoint: str = "acme") -> Path:
    folder = root / f"shard-{endpoint}-{region}-{index}of{count}"
    run = folder / "runs" / f"run{index}"
    run.mkdir(parents=True)
    (run / "events.jsonl").write_text("{}\n", encoding="utf-8")
    job = {"endpoint": endpoint, "workload": "chat-short", "runner": f"bench-{region}",
           "region": region, "shard": f"{index}/{count}", "api_key_env": "ACME_API_KEY"}
    (folder / "job.json").write_text(json.dumps(job), encoding="utf-8")
    return run


def test_the_collector_merges_complete_groups_and_reports_incomplete_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    collector = load_collector()
    calls: list[tuple[str, ...]] = []

    def fake_epbench(*args: str) -> tuple[int, str]:
        calls.append(args)
        if args[0] == "submit":
            return 0, f"ok: 1 files checked\nsubmitted: {tmp_path}/results/x/{args[1][-8:]}.json"
        return 0, args[-1]

    monkeypatch.setattr(collector, "epbench", fake_epbench)
    shards = tmp_path / "shards"
    first = write_shard(shards, 1, 2)
    second = write_shard(shards, 2, 2)
    write_shard(shards, 1, 3, region="eu-west")  # 2/3 and 3/3 never arrived
    write_shard(shards, 1, 1, endpoint="solo")
    (shards / "shard-junk").mkdir()
    (shards / "shard-junk" / "job.json").write_text('{"endpoint": "../../etc"}')

    outcomes = collector.collect(shards, "my-org", tmp_path / "work")

    merged = tmp_path / "work" / "acme--chat-short--bench-us-east--us-east"
    assert calls == [
        ("merge", str(first), str(second), "--out", str(merged)),
        ("submit", str(merged), "--submitter", "my-org"),
        ("submit", str(shards / "shard-solo-us-east-1of1" / "runs" / "run1"),
         "--submitter", "my-org"),
    ]
    by_title = {o.title: o for o in outcomes}
    assert by_title["acme / chat-short from eu-west (bench-eu-west)"].problems == [
        "incomplete: shards [1] of 3; not submitted"
    ]
    assert by_title["acme / chat-short from us-east (bench-us-east)"].problems == []
    assert "must be strings" in by_title["artifact shard-junk"].problems[0]
    body = collector.summary(outcomes, "my-org")
    assert body.count(": ok") == 2 and body.count(": problem") == 2


def test_the_collector_makes_a_submitter_id_from_an_owner_name() -> None:
    collector = load_collector()
    assert collector.submitter_id("My-Org") == "my-org"
    assert collector.submitter_id(" Acme Labs ") == "acme-labs"
    with pytest.raises(ValueError):
        collector.submitter_id("---")


def test_a_scheduled_workload_id_that_does_not_exist_is_refused_by_matrix_and_validate(
    tmp_path: Path,
) -> None:
    from epbench.generator.validate import validate_paths

    folder = tmp_path / "endpoints"
    folder.mkdir()
    path = write_endpoint(folder)
    path.write_text(
        path.read_text(encoding="utf-8").replace("weather-single-call", "no-such-workload"),
        encoding="utf-8",
    )
    with pytest.raises(InputError, match=r"acme.yaml:/schedule/workloads/1: no workload"):
        build_matrix(folder, None, None, None, 1)
    report = validate_paths([path])
    found = [f for f in report.findings if f.check == "endpoint.schedule-workload"]
    assert report.blocking and [f.pointer for f in found] == ["/schedule/workloads/1"]
