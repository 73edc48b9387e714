"""The GitHub Actions matrix for scheduled benchmarks (`epbench matrix`).

One matrix job per (endpoint, workload, runner, shard) for every endpoint file under
`endpoints/` whose `schedule.enabled` is true: the endpoint's scheduled workloads × its runners
(one runner label per client region, so runners in several regions measure cross-region
latency) × `shards` slices of each run (`epbench run --shard I/N`, joined by `epbench merge`).

Only what the maintainers' allow-list binds is scheduled (`epbench.core.secret_binding`): each
scheduled endpoint's secret and base URL host, and every runner label. Anything else stops the
whole matrix with one line, so a pull request that edits an endpoint file cannot steer a
secret to another host or a job to another machine.

The output is what `strategy.matrix` takes: `{"include": [...]}`. An empty `include` means
nothing is scheduled; the workflow skips its run job on that (an empty matrix is an error
in Actions).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from epbench.core.documents import load_document
from epbench.core.errors import InputError
from epbench.core.findings import problems_text
from epbench.core.paths import workload_ids
from epbench.core.schema import check_schema
from epbench.core.secret_binding import (
    ALLOWLIST,
    Allowlist,
    binding_problems,
    load_allowlist,
    reserved_env,
)

MAX_SHARDS = 64
# GitHub caps a matrix at 256 jobs per workflow run.
MAX_JOBS = 256
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class MatrixJob:
    """One matrix entry: run `workload` against `endpoint` on runner `runner` (shard I/N)."""

    endpoint: str
    workload: str
    runner: str
    region: str
    shard: str
    api_key_env: str
    # A name that is safe for artifact and file names and unique within the matrix.
    slug: str


@dataclass(frozen=True)
class Matrix:
    """The jobs of one scheduled benchmark run, in a stable order."""

    jobs: tuple[MatrixJob, ...]

    def to_json(self) -> str:
        """`{"include": [...]}` on one line, for `strategy.matrix: ${{ fromJSON(...) }}`."""
        return json.dumps({"include": [asdict(job) for job in self.jobs]}, separators=(",", ":"))

    @property
    def empty(self) -> bool:
        return not self.jobs


def _slug(*parts: str) -> str:
    return "--".join(_UNSAFE.sub("_", part) for part in parts)


def _scheduled(path: Path) -> dict[str, Any] | None:
    """The endpoint document if its schedule is enabled; InputError if the file is invalid."""
    document = load_document(path)
    findings = check_schema(document, "endpoint", str(path))
    if findings:
        raise InputError(problems_text(findings))
    schedule = document.get("schedule") or {}
    if not schedule.get("enabled"):
        return None
    return dict(document)


def _key_env(document: dict[str, Any], path: Path) -> str:
    name = document.get("api_key_env") or ""
    if name and reserved_env(name):
        raise InputError(
            f"{path}:/api_key_env: {name!r} is a reserved environment variable name -- "
            "name the key's own variable, e.g. ACME_API_KEY"
        )
    return str(name)


def build_matrix(
    endpoints_dir: Path,
    endpoint: str | None = None,
    workload: str | None = None,
    region: str | None = None,
    shards: int = 1,
    allowlist: Path | None = None,
) -> Matrix:
    """The matrix for the scheduled endpoints under `endpoints_dir`, optionally narrowed.

    `endpoint`, `workload` and `region` keep only the jobs with that endpoint id, workload id
    or client region (a manual run of one slice). `shards` splits each run into that many
    jobs. `allowlist` defaults to `.github/benchmark-allowlist.yaml` beside `endpoints_dir`.
    Raises InputError (one line) for a bad endpoint file, an endpoint or runner the allow-list
    does not bind, a bad shard count or matrix size.
    """
    if not 1 <= shards <= MAX_SHARDS:
        raise InputError(f"--shards must be between 1 and {MAX_SHARDS}, not {shards}")
    if not endpoints_dir.is_dir():
        raise InputError(f"{endpoints_dir}: no such folder -- pass --endpoints DIR")
    allow: Allowlist | None = None
    jobs: list[MatrixJob] = []
    seen: dict[str, Path] = {}
    slugs: set[str] = set()
    for path in sorted([*endpoints_dir.glob("*.yaml"), *endpoints_dir.glob("*.yml")]):
        document = _scheduled(path)
        if document is None:
            continue
        endpoint_id = str(document["id"])
        if endpoint_id in seen:
            raise InputError(
                f"{path}:/id: endpoint id {endpoint_id!r} is also used by {seen[endpoint_id]} "
                "-- give each endpoint file its own id"
            )
        seen[endpoint_id] = path
        if endpoint is not None and endpoint_id != endpoint:
            continue
        key_env = _key_env(document, path)
        if allow is None:
            allow = load_allowlist(allowlist or endpoints_dir.parent / ALLOWLIST)
        problems = binding_problems(document, allow)
        if problems:
            pointer, what = problems[0]
            raise InputError(f"{path}:{pointer}: {what} (.github/benchmark-allowlist.yaml, "
                             "edited by maintainers only)")
        schedule = document["schedule"]
        known = workload_ids(endpoints_dir.resolve().parent)
        for i, workload_id in enumerate(schedule.get("workloads", [])):
            if workload_id not in known:
                raise InputError(
                    f"{path}:/schedule/workloads/{i}: no workload has id {workload_id!r} "
                    f"-- schedule one of: {', '.join(sorted(known))}"
                )
            if workload is not None and workload_id != workload:
                continue
            for runner in schedule.get("runners", []):
                if region is not None and runner["region"] != region:
                    continue
                for index in range(1, shards + 1):
                    shard = f"{index}/{shards}"
                    jobs.append(
                        MatrixJob(
                            endpoint=endpoint_id,
                            workload=str(workload_id),
                            runner=str(runner["label"]),
                            region=str(runner["region"]),
                            shard=shard,
                            api_key_env=key_env,
                            slug=_slug(endpoint_id, str(workload_id), str(runner["label"]),
                                       str(runner["region"]), f"{index}of{shards}"),
                        )
                    )
                    if jobs[-1].slug in slugs:
                        raise InputError(
                            f"{path}:/schedule/runners: runner {runner['label']!r} in region "
                            f"{runner['region']!r} is listed twice -- list each runner once"
                        )
                    slugs.add(jobs[-1].slug)
    if len(jobs) > MAX_JOBS:
        raise InputError(
            f"{endpoints_dir}: the schedule makes {len(jobs)} matrix jobs, over GitHub's "
            f"{MAX_JOBS} -- narrow it with --endpoint/--workload/--region or fewer --shards"
        )
    return Matrix(tuple(jobs))
