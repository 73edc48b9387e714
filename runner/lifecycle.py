"""One run's lifecycle, the same for every workload kind; a kind (serving: runner/serving_run.py,
agentic: runner/agentic/run.py) supplies only its plan, its run line, its work and its result.

    1. plan      a new run: a run id, an empty runs/<run-id>/, the kind's plan written to
                 plan.json; `--resume DIR`: the plan read back (run_folder.read_plan_doc, the
                 one reader) and the journal's complete records
    2. journal   events.jsonl opened with the endpoint's secrets (none reaches a line)
    3. context   the run's one HTTP client (runner/context.py), with the plan's quick and seed
    4. run line  the kind's run line (a serving spec; an agentic plan after the capability
                 probe), written here and nowhere else, unless the resumed journal holds one
    5. session   a session line with the preflight's round trips
    6. work      the kind's async body; Ctrl-C prints how to finish the run, and re-raises
    7. result    the kind's result body from the journal, the journal's evidence, written
                 atomically to result.json (`write_result_document`, also `epbench merge`'s)
"""

from __future__ import annotations

import secrets
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from epbench.core import evidence
from epbench.core.journal_file import Journal
from epbench.core.journal_records import RunLine, has_run_line
from epbench.runner.bounds import Bounds
from epbench.runner.context import RunContext, open_context
from epbench.runner.endpoint import Endpoint
from epbench.runner.header import result_document
from epbench.runner.loop import run_async
from epbench.runner.run_folder import (
    JOURNAL_FILE,
    PLAN_FILE,
    RESULT_FILE,
    new_run_dir,
    read_journal,
    read_plan_doc,
    say,
    write_json_atomic,
)


class RunPlan(Protocol):
    """What the lifecycle needs of a kind's plan (runner.plan.Plan, agentic.run.AgenticRunPlan)."""

    @property
    def run_id(self) -> str: ...
    @property
    def meta(self) -> dict[str, Any]: ...  # the result's header (runner.header.result_header)
    @property
    def quick(self) -> bool: ...
    @property
    def seed(self) -> int: ...
    def to_json(self) -> dict[str, Any]: ...


P = TypeVar("P", bound=RunPlan)
T = TypeVar("T")


class RunKind(ABC, Generic[P, T]):
    """What one workload kind supplies to `run_lifecycle`: `T` is what its work returns."""

    @abstractmethod
    def new_plan(self, run_id: str) -> P:
        """The plan of a new run (with the result's header in `meta`)."""

    @abstractmethod
    def read_plan(self, doc: dict[str, Any]) -> P:
        """The plan of a resumed run, from its plan.json."""

    @abstractmethod
    def connections(self, plan: P) -> int:
        """How many connections the run's client keeps open at most."""

    @abstractmethod
    async def start(self, ctx: RunContext, plan: P) -> RunLine:
        """What the run does before its session starts (agentic: the capability probe), and
        the journal's run line (epbench.core.journal_records.run_line)."""

    @abstractmethod
    async def work(self, ctx: RunContext, plan: P) -> T:
        """Send the run's requests, journaling each."""

    @abstractmethod
    def result_body(
        self, run_dir: Path, plan: P, outcome: T, records: list[dict[str, Any]]
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The result's body computed from the journal's records, and settings to add."""


def run_lifecycle(
    kind: RunKind[P, T],
    ep: Endpoint,
    base_url: str,
    *,
    out: Path | None,
    resume: Path | None,
    progress: bool | str,
    bounds: Bounds,
    rtt_ms: list[float] | None,
) -> Path:
    """Run (or resume) one workload of `kind` against `base_url`; the result.json written."""
    records: list[dict[str, Any]] = []
    if resume is not None:
        run_dir = resume
        plan = kind.read_plan(read_plan_doc(run_dir))
        records = read_journal(run_dir)
    else:
        run_id = secrets.token_hex(8)
        run_dir = new_run_dir(out, run_id)
        plan = kind.new_plan(run_id)
        write_json_atomic(run_dir / PLAN_FILE, plan.to_json())

    async def go(journal: Journal) -> T:
        async with open_context(
            ep, base_url, plan.run_id, run_dir, journal, records,
            quick=plan.quick, seed=plan.seed, progress=progress,
            bounds=bounds, connections=kind.connections(plan),
        ) as ctx:
            line = await kind.start(ctx, plan)
            if not has_run_line(records):
                journal.append(line)
            journal.start_session(rtt_ms)
            return await kind.work(ctx, plan)

    try:
        with Journal(run_dir / JOURNAL_FILE, ep.secrets) as journal:
            outcome = run_async(go(journal))
    except KeyboardInterrupt:
        say(f"finish this run with: epbench run --resume {run_dir}")
        raise
    body, extra = kind.result_body(run_dir, plan, outcome, read_journal(run_dir))
    return write_result_document(run_dir, plan.run_id, plan.meta, body, extra)


def write_result_document(
    run_dir: Path,
    run_id: str,
    meta: dict[str, Any],
    body: dict[str, Any],
    extra_settings: dict[str, Any] | None = None,
) -> Path:
    """runs/<run-id>/result.json from the plan's header and a body computed from the journal,
    with the journal's evidence (epbench.core.evidence.describe), written atomically."""
    body = {**body, "evidence": evidence.describe((run_dir / JOURNAL_FILE).read_bytes())}
    path = run_dir / RESULT_FILE
    write_json_atomic(path, result_document(run_id, meta, body, extra_settings))
    return path
