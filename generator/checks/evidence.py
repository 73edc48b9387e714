"""Recompute, don't trust: every figure of a result is recomputed from its journal.

A result that pins a journal (`evidence`: sha256, lines, bytes) must have it beside it
(`<stem>.events.jsonl.gz`, or `events.jsonl` in a run folder). The journal's bytes must hash to
the pinned sha256; then every published figure is recomputed with the functions the runner
used (epbench.core.summary for points, Pareto, retries, burst and resumes;
epbench.core.agentic_summary for
the agentic section) and compared: counts and other integers exactly, other numbers to 1e-9
relative (a result none of whose points has a `cache` block was written before it, and is
compared without it). The first figure that differs is named with its pointer, the value in
the file and the recomputed one. A result whose requests all failed measured nothing and is
rejected. A request the journal calls ok must report usage its streamed bytes and max_tokens
allow (`evidence.usage`, epbench.core.usage_bounds).

Request lines may carry what the server said (`response_id`, `server_headers`): when they
do, those must be what the runner keeps (epcore/server_evidence.py: allow-listed names,
bounded printable values, nothing credential-shaped), else the journal is `evidence.journal`.

Results without `evidence` (written before journals were submitted, or imported) are not
errors: they are "no evidence, not ranked" (epbench.core.rankable).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from epbench.core import evidence
from epbench.core.agentic_plan import Load
from epbench.core.agentic_summary import summarize as summarize_agentic
from epbench.core.agentic_summary import summarize_load
from epbench.core.findings import Finding
from epbench.core.journal_lines import complete_records
from epbench.core.round_trips import round_trips
from epbench.core.runspec import RunSpec
from epbench.core.server_evidence import line_problem
from epbench.core.summary import all_failed, summarize_run
from epbench.core.trial_record import TrialRecord
from epbench.core.usage_bounds import Streamed, implausible
from epbench.generator.checks import verified
from epbench.generator.checks.base import Subject, check, on_result
from epbench.generator.checks.plausible.fastest_gap import check_fastest_gap
from epbench.generator.checks.workload import agentic_plan
from epbench.generator.checks.workload import plan as workload_plan
from epbench.generator.checks.workload.sha import WorkloadIndex

REL = 1e-9

MISSING = check(
    "evidence.missing", "reject",
    "a result that pins a journal has it beside it as <stem>.events.jsonl.gz",
    "submit with `epbench submit`, which writes the result and its journal side by side",
)
DAMAGED = check(
    "evidence.journal", "reject",
    "the journal is within its size cap, hashes to the pinned sha256 and is JSON lines",
    "submit the journal of the run that wrote this result (`epbench submit RUN_DIR`)",
)
RECOMPUTED = check(
    "evidence.recomputed", "reject",
    "every published figure equals the one recomputed from the journal",
    "do not edit results by hand: re-run, or re-submit the run's own result.json and journal",
)
ALL_FAILED = check(
    "evidence.all-failed", "reject",
    "at least one request of the run succeeded",
    "a run in which every request failed measured nothing: check the endpoint and re-run",
)

USAGE = check(
    "evidence.usage", "reject",
    "no request the journal calls ok reports usage that its streamed bytes, its max_tokens or "
    "arithmetic rule out",
    "the runner classes such a request usage_implausible: submit the journal as the run wrote it",
)

_SERVING_FIGURES = ("points", "pareto", "retries", "burst", "resumes", "round_trips")


def check_evidence(result: dict[str, Any], path: Path, file: str,
                   index: WorkloadIndex | None = None) -> list[Finding]:
    """Findings for a schema-valid result: its journal (streamed: lines of known shape, no
    more requests than the plan sends), the plan of the workload it claims
    (epbench.generator.checks.workload.plan for serving, agentic_plan for agentic results, with
    `index`), and each figure recomputed."""
    pinned = result.get("evidence")
    if pinned is None:
        return []
    journal = evidence.journal_path(path)
    if journal is None:
        return [MISSING.at(file, "/evidence",
                           f"the result pins a journal but {path.stem}{evidence.SUFFIX} "
                           "is not beside it")]
    remembered = verified.key(result)
    if verified.seen(remembered):  # recomputed before: only the journal's bytes are checked
        try:
            evidence.check_file(journal, pinned)
        except evidence.EvidenceError as exc:
            return [DAMAGED.at(file, "/evidence", f"{journal.name}: {exc}")]
        return []
    expected = workload_plan.expected_plan(result, index, file)
    if isinstance(expected, Finding):
        return [expected]
    planned = agentic_plan.expected_plan(result, index, file)
    if isinstance(planned, Finding):
        return [planned]
    try:
        records = evidence.load(journal, pinned,
                                max_requests=None if expected is None else expected.requests)
    except evidence.EvidenceError as exc:
        return [DAMAGED.at(file, "/evidence", f"{journal.name}: {exc}")]
    found = [] if expected is None else workload_plan.check_plan(result, expected, records, file)
    if planned is not None:
        found = found or agentic_plan.check_plan(result, planned, records, file)
    found = found or _recomputed(result, records, journal.name, file)
    if not found and (expected is not None or planned is not None):
        verified.remember(remembered)  # (a plan not compared is not vouched for)
    return found


def _recomputed(result: dict[str, Any], records: Sequence[Mapping[str, Any]], name: str,
                file: str) -> list[Finding]:
    for number, record in enumerate(records, 1):
        server_side = line_problem(record) if record.get("type", "request") == "request" else None
        if server_side is not None:
            return [DAMAGED.at(file, "/evidence", f"{name}: line {number}: {server_side}")]
    problem = all_failed(records)
    if problem is not None:
        return [ALL_FAILED.at(file, "", f"{problem}: the run measured nothing")]
    try:
        recomputed = recompute(result, records)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        return [DAMAGED.at(file, "/evidence",
                           f"{name}: a journal line is malformed ({type(exc).__name__})")]
    difference = first_difference(result, recomputed)
    if difference is None:
        return check_fastest_gap(result, records, file) or check_usage(result, records, file)
    pointer, published, again = difference
    return [RECOMPUTED.at(
        file, pointer,
        f"{pointer} is {_show(published)} in the file but {_show(again)} recomputed from "
        f"{name}",
    )]


def recompute(result: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The figures the journal gives, keyed like the result (only the keys it computes); lines
    too incomplete to summarize are skipped, as the runner skipped them."""
    records, _ = complete_records(records)
    header = next((r for r in records if r.get("type") == "run"), None)
    if header is None:
        raise ValueError("the journal has no run line")
    if "agentic" in header:
        spec = header["agentic"]
        trials: dict[tuple[int | None, str, int], TrialRecord] = {}
        for line in records:
            if line.get("type") == "trial":
                rec = TrialRecord.from_journal(line)
                trials[(rec.level, rec.task, rec.trial)] = rec
        tasks = [str(t) for t in spec["tasks"]]
        order = {task: i for i, task in enumerate(tasks)}
        ordered = sorted(trials.values(), key=lambda r: (order.get(r.task, len(order)), r.trial))
        card = (result.get("endpoint") or {}).get("pricing")
        if isinstance(spec.get("load"), Mapping):
            load = spec["load"]
            section = summarize_load(tasks, Load(
                concurrency=tuple(int(c) for c in load["concurrency"]),
                trials=tuple(int(n) for n in load["trials"]),
                decision_p90_ms=float(load["slo"]["decision_p90_ms"])), ordered, card)
        else:
            section = summarize_agentic(tasks, int(spec["trials"]), ordered, card)
        return {"agentic": section, "round_trips": round_trips(records)}
    legacy = any(isinstance(p, Mapping) and "ci95" in (p.get("itl_ms") or {})
                 for p in result.get("points") or [])  # written before ITL lost its interval
    out = summarize_run(RunSpec.from_json(header.get("spec")), records, itl_interval=legacy)
    published = [p for p in result.get("points") or [] if isinstance(p, Mapping)]
    if published and not any("cache" in p for p in published):
        # written before points carried `cache` (their journals did record cached tokens):
        # compared as written then, and shown as having no cache figures
        for point in out["points"]:
            point.pop("cache", None)
    return {key: out.get(key) for key in _SERVING_FIGURES}


def first_difference(
    published: Mapping[str, Any], recomputed: Mapping[str, Any]
) -> tuple[str, Any, Any] | None:
    """(pointer, value in the file, recomputed value) of the first figure that differs."""
    for key, again in recomputed.items():
        if key in published and type(published[key]) is type(again) \
                and published[key] == again:
            continue  # the common case: equal to the last bit (the walk finds nothing)
        found = _walk(published.get(key), again, f"/{key}", key in published)
        if found is not None:
            return found
    return None


def _walk(a: Any, b: Any, pointer: str, present: bool = True) -> tuple[str, Any, Any] | None:
    if not present:
        return None if b in (None, [], {}) else (pointer, "absent", b)
    if isinstance(b, dict):
        if not isinstance(a, dict):
            return pointer, a, b
        for key in [*b, *(k for k in a if k not in b)]:  # the result's own order
            if key not in b:
                return f"{pointer}/{_escape(key)}", a[key], "absent"
            found = _walk(a.get(key), b[key], f"{pointer}/{_escape(key)}", key in a)
            if found is not None:
                return found
        return None
    if isinstance(b, list):
        if not isinstance(a, list):
            return pointer, a, b
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            found = _walk(x, y, f"{pointer}/{i}")
            if found is not None:
                return found
        if len(a) != len(b):
            i = min(len(a), len(b))
            return (f"{pointer}/{i}", a[i] if i < len(a) else "absent",
                    b[i] if i < len(b) else "absent")
        return None
    return None if same(a, b) else (pointer, a, b)


def same(a: Any, b: Any) -> bool:
    """Equal as figures: integers (counts) exactly, other numbers to 1e-9 relative."""
    if not (_number(a) and _number(b)):
        return type(a) is type(b) and bool(a == b)
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if not (math.isfinite(a) and math.isfinite(b)):
        return False
    return math.isclose(a, b, rel_tol=REL, abs_tol=1e-12)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _escape(key: str) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _show(value: Any) -> str:
    """Numbers in full (shortest round-trip form), so two close values never print alike."""
    if _number(value):
        return repr(value)
    return repr(value)[:80]


def check_usage(result: Mapping[str, Any], records: Sequence[Mapping[str, Any]],
                file: str) -> list[Finding]:
    """One finding for the first serving request line classed ok whose usage is implausible
    (the runner classes it `usage_implausible`, so a journal calling it ok was not written as
    the run ran). The bounds read the line's own counts and streamed bytes, the result's
    `settings.max_tokens` (the workload check holds it to the workload) and its API."""
    limit = (result.get("settings") or {}).get("max_tokens")
    if not isinstance(limit, int) or isinstance(limit, bool):
        limit = None
    api = (result.get("endpoint") or {}).get("api")
    for line in records:
        if line.get("type", "request") != "request" or "task" in line \
                or line.get("class") != "ok":
            continue
        problem = implausible(Streamed.from_line(line), limit, api if isinstance(api, str)
                              else None)
        if problem is not None:
            return [USAGE.at(file, "/evidence",
                             f"request {str(line.get('request_id'))[:80]!r} is ok in the journal "
                             f"but {problem}")]
    return []


@on_result(160, epbench_only=True)
def _on_result(s: Subject) -> list[Finding]:
    assert s.path is not None
    return check_evidence(s.doc, s.path, s.file, s.index)
