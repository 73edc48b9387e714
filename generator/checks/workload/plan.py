"""The workload is the one claimed: the plan rebuilt from the workload file with the claimed
sha256 (epbench.core.workload_plan, the functions the runner planned with) and the result's seed and
`--quick` setting is compared with the journal.

    settings     seed, max_tokens, ignore_eos, temperature, top_p, retry equal the workload's
    run line     pattern, seed, SLOs, burst block and every point (id, index, concurrency or
                 rate, phase and span) equal the rebuilt plan's point of that index (all of
                 the plan, a shard, or merged shards: each point once, in the plan's order)
    requests     every request line is a planned request (id, point, seq, warm-up flag and
                 prompt length as planned), at most once; every point of the run line has
                 exactly its planned requests
    trace        the trace file the workload names has its sha256 and parses (its plan is
                 rebuilt from it); each request asked for its planned output length, and
                 within a session the requests were scheduled at the trace's spacing
    histories    conversations: each turn is its planned session and turn, and sent as history
                 exactly its session's earlier successful exchanges (message and answer
                 characters), keeping no more answer characters than it streamed bytes

The first difference is one `workload.plan` line. A result without a journal is not compared
(it is not ranked: epbench.core.rankable). A plan is rebuilt only up to MAX_PLANNED requests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from epbench.core.conversation_plan import conversation_points, planned_turns
from epbench.core.documents import DocumentError, parse_document
from epbench.core.errors import InputError
from epbench.core.findings import Finding
from epbench.core.runspec import RunSpec
from epbench.core.schema import check_schema
from epbench.core.summary import dedupe
from epbench.core.trace_plan import load_trace, project_root, trace_point
from epbench.core.workload_plan import PlannedPoint, plan_points, planned_requests, run_spec
from epbench.generator.checks.base import check
from epbench.generator.checks.workload.sha import WorkloadIndex

MAX_PLANNED = 2_000_000
"""Requests a rebuilt plan may hold (about 12 bytes each): ten times the largest shipped
sweep's thousand-fold."""

PLAN = check(
    "workload.plan", "reject",
    "the journal ran the plan of the workload the result names: its points, levels or rates, "
    "requests, prompt lengths and settings (agentic: its tasks, trials, settings and tools)",
    "submit the result and journal of a run of this workload as it is (`epbench run "
    "--workload workloads/<kind>/<id>.yaml`), unedited",
)


@dataclass
class Expected:
    """The workload's plan, as validation compares it."""

    workload: dict[str, Any]
    points: list[PlannedPoint]
    burst: dict[str, Any] | None

    @property
    def requests(self) -> int:
        return sum(p.count for p in self.points)


def expected_plan(result: Mapping[str, Any], index: WorkloadIndex | None,
                  file: str) -> Expected | Finding | None:
    """The plan of the result's workload (None when nothing can be compared: no project to
    look in, an agentic result, a workload the sha256 check already rejects). Plans are kept
    per (sha256, quick): a tree of 10,000 results of one workload rebuilds it once."""
    workload = result["workload"]
    if index is None or workload["kind"] != "serving":
        return None
    quick = bool((result.get("settings") or {}).get("quick", False))
    key = (workload["sha256"], quick)
    if key not in _PLANS:
        held = sum(p.requests for p in _PLANS.values() if isinstance(p, Expected))
        if len(_PLANS) >= 16 or held > MAX_PLANNED:  # a few MB at most
            _PLANS.clear()
        data = index.bytes_for(workload["id"], workload["kind"], workload["sha256"])
        if data is None:
            return None  # workload.unknown or workload.sha256 says why
        path = index.file_for(workload["id"], workload["kind"])
        root = project_root(path) if path is not None else None
        _PLANS[key] = _rebuild(data, str(workload["id"]), quick, root)
    found = _PLANS[key]
    if isinstance(found, tuple):
        pointer, message, *fix = found
        return PLAN.at(file, pointer, message, *fix)
    return found


_PLANS: dict[tuple[str, bool], Expected | tuple[str, ...]] = {}


def claimed_workload(data: bytes, workload_id: str,
                     kind: str) -> dict[str, Any] | tuple[str, str]:
    """The workload document with the claimed sha256, or (pointer, message) when it cannot be
    read or is not a valid `kind` ("serving" or "agentic") workload."""
    try:
        doc = parse_document(data, f"{workload_id}.yaml")
    except DocumentError as exc:
        return "/workload/sha256", f"the workload with this sha256 cannot be read " \
                                   f"({exc.problem.message})"
    schema = f"{kind}-workload"
    if not isinstance(doc, dict) or doc.get("kind") != schema or check_schema(
            doc, schema, workload_id):
        return "/workload/sha256", f"the workload with this sha256 is not a valid {kind} workload"
    return doc


def _rebuild(data: bytes, workload_id: str, quick: bool,
             root: Path | None = None) -> Expected | tuple[str, ...]:
    doc = claimed_workload(data, workload_id, "serving")
    if isinstance(doc, tuple):
        return doc
    load = doc["load"]
    quick_block = doc.get("quick") or {}
    if load["pattern"] == "trace":
        return _rebuild_trace(doc, workload_id, quick, root)
    if load["pattern"] == "conversation":
        count = planned_turns(load, quick_block if quick else {})
    else:
        count = planned_requests(load["pattern"], load, quick_block, quick)
    if count > MAX_PLANNED:
        return ("/workload", f"the workload plans {count:.0f} requests; validation rebuilds "
                f"plans of up to {MAX_PLANNED}", "split the workload into smaller ones")
    if load["pattern"] == "conversation":
        points, burst = conversation_points(int(doc["seed"]), load, doc["prompts"]["input_tokens"],
                                            quick_block if quick else {}), None
    else:
        points, burst = plan_points(load["pattern"], int(doc["seed"]), load,
                                    doc["prompts"]["input_tokens"], quick_block, quick,
                                    doc["prompts"].get("shared_prefix"))
    return Expected(doc, points, burst)


def _rebuild_trace(doc: dict[str, Any], workload_id: str, quick: bool,
                   root: Path | None) -> Expected | tuple[str, ...]:
    """A trace workload's plan, from the trace file it names (its sha256 checked: the trace
    is untrusted data like the workload, parsed by the runner's parser)."""
    load = doc["load"]
    try:
        trace = load_trace(load["trace"], root, f"workload {workload_id}")
        point = trace_point(load, trace, int(doc["prompts"]["max_tokens"]),
                            doc.get("quick") or {}, quick, f"workload {workload_id}")
    except InputError as exc:
        return ("/workload/sha256", f"the workload's trace cannot be replayed: {exc}",
                "keep the trace file the workload names, unedited, under workloads/traces/")
    if point.count > MAX_PLANNED:
        return ("/workload", f"the workload plans {point.count} requests; validation rebuilds "
                f"plans of up to {MAX_PLANNED}", "replay a smaller window of the trace")
    return Expected(doc, [point], None)


def check_plan(result: Mapping[str, Any], expected: Expected,
               records: Sequence[Mapping[str, Any]],
               file: str) -> list[Finding]:
    """The first difference between the rebuilt plan and the result's settings and journal."""
    problem = _settings(result.get("settings") or {}, expected.workload)
    if problem is None:
        header = next((r for r in records if r.get("type") == "run"), None)
        if header is None or "spec" not in header:
            problem = "/evidence", "the journal has no serving run line"
        else:
            try:
                spec = RunSpec.from_json(header["spec"])
            except ValueError as exc:
                problem = "/evidence", f"the journal's run line: {exc}"
            else:
                problem = _spec(spec, expected) or _requests(spec, expected, records)
    if problem is None:
        return []
    pointer, message = problem
    return [PLAN.at(file, pointer, f"{message}, unlike the plan of workload "
                    f"{result['workload']['id']!r} with this sha256"[:600])]


_SETTINGS = ("max_tokens", "ignore_eos", "temperature", "top_p", "retry")


def _settings(settings: Mapping[str, Any], doc: Mapping[str, Any]) -> tuple[str, str] | None:
    want = {
        "seed": doc["seed"],
        "max_tokens": doc["prompts"]["max_tokens"],
        "ignore_eos": bool(doc["prompts"].get("ignore_eos", False)),
        "temperature": (doc.get("sampling") or {}).get("temperature"),
        "top_p": (doc.get("sampling") or {}).get("top_p"),
        "retry": doc.get("retry") or None,
    }
    for key, value in want.items():
        if key in _SETTINGS and key not in settings and (value is None or value is False):
            continue  # a setting the workload leaves out may be left out
        if settings.get(key) != value:
            return f"/settings/{key}", f"settings.{key} is {settings.get(key)!r}, not {value!r}"
    return None


def _spec(spec: RunSpec, expected: Expected) -> tuple[str, str] | None:
    doc = expected.workload
    if spec.pattern != doc["load"]["pattern"]:
        return "/evidence", f"the journal ran a {spec.pattern} load, not {doc['load']['pattern']}"
    if spec.seed != doc["seed"]:
        return "/evidence", f"the journal ran with seed {spec.seed}, not {doc['seed']}"
    slo = {str(k): float(v) for k, v in (doc.get("slo") or {}).items()}
    if spec.slo != slo:
        return "/evidence", f"the journal's SLOs are {spec.slo}, not {slo}"
    planned = {p.index: p for p in expected.points}
    indexes = [p.index for p in spec.points]
    if not _in_plan(indexes, len(expected.points)):
        return "/points", (f"the journal ran points {[p.id for p in spec.points][:10]}, not "
                           f"points of the plan's {[p.id for p in expected.points][:10]}")
    for i, point in enumerate(spec.points):
        want = planned[point.index].spec()
        if point != want:
            return f"/points/{i}", f"the journal's point {point.id!r} is {_point(point)}, " \
                                   f"the plan's is {_point(want)}"
    if spec.burst != expected.burst:
        return "/burst", f"the journal's burst is {spec.burst}, not {expected.burst}"
    if spec.pattern == "burst":
        want_offsets = run_spec(spec.pattern, spec.seed, [planned[i] for i in indexes], slo,
                                expected.burst).offsets
        if spec.offsets != want_offsets:
            return "/burst", "the journal's planned arrival offsets are not the plan's"
    return None


def _requests(spec: RunSpec, expected: Expected,
              records: Sequence[Mapping[str, Any]]) -> tuple[str, str] | None:
    by_id = {p.id: p for p in expected.points}
    position = {p.id: i for i, p in enumerate(spec.points)}
    lines = [r for r in records if r.get("type", "request") == "request"]
    counts = dict.fromkeys(position, 0)
    for record in lines:
        pid = record.get("point")
        if pid not in position:
            return "/evidence", f"request {str(record.get('request_id'))[:60]!r} belongs to " \
                                f"no point of the run"
        counts[pid] += 1
    for pid, count in counts.items():
        if count != by_id[pid].count:
            return f"/points/{position[pid]}", f"point {pid!r} journals {count} requests, " \
                                               f"the plan sends {by_id[pid].count}"
    seen: dict[str, set[int]] = {pid: set() for pid in position}
    for record in lines:
        pid, seq = str(record["point"]), record.get("seq")
        point = by_id[pid]
        where = f"/points/{position[pid]}"
        if not isinstance(seq, int) or not 0 <= seq < point.count \
                or record.get("request_id") != point.request_id(seq):
            return where, (f"request {str(record.get('request_id'))[:60]!r} (seq {seq}) is not "
                           f"one of the {point.count} requests planned for {pid}")
        if seq in seen[pid]:
            return where, f"request {point.request_id(seq)!r} is journaled twice"
        seen[pid].add(seq)
        if bool(record.get("warmup", False)) != (seq < point.warmup):
            return where, f"request {point.request_id(seq)!r} has warm-up " \
                          f"{bool(record.get('warmup'))}, the plan says {seq < point.warmup}"
        length = record.get("input_requested")
        if length != point.lengths[seq]:
            return where, (f"request {point.request_id(seq)!r} asked for {length} input tokens, "
                           f"the plan {point.lengths[seq]}")
        if point.outputs is not None and record.get("output_requested") != point.outputs[seq]:
            return where, (f"request {point.request_id(seq)!r} asked for "
                           f"{record.get('output_requested')} output tokens, the plan "
                           f"{point.outputs[seq]}")
        turns = point.conversation
        if turns is not None and (record.get("session"), record.get("turn")) != (
                turns.session[seq], turns.turn[seq]):
            return where, (f"request {point.request_id(seq)!r} is session "
                           f"{record.get('session')!r} turn {record.get('turn')!r}, the plan's "
                           f"session {turns.session[seq]} turn {turns.turn[seq]}")
    if spec.pattern == "trace":
        return _trace_times(records, by_id, position)
    return _histories(lines, position)


TRACE_SLACK_NS = 1_000
"""How far a trace request's scheduled instant may sit from the trace's spacing (rounding)."""


def _trace_times(records: Sequence[Mapping[str, Any]], by_id: Mapping[str, PlannedPoint],
                 position: Mapping[str, int]) -> tuple[str, str] | None:
    """Within each session, every request was scheduled at the trace's (scaled) spacing: its
    `t_scheduled_ns` minus its planned offset is one constant (a resume shifts it). Sessions
    are numbered as the summarizer numbers them (`summary.dedupe`)."""
    shifts: dict[tuple[str, int], tuple[int, int]] = {}
    for record in dedupe(records):
        session = int(record["_session"])
        point = by_id[str(record["point"])]
        scheduled = record.get("t_scheduled_ns")
        where = f"/points/{position[point.id]}"
        if type(scheduled) is not int or point.offsets is None:
            return where, f"request {str(record['request_id'])[:60]!r} has no scheduled time"
        shift = scheduled - round(point.offsets[int(record["seq"])] * 1e9)
        low, high = shifts.get((point.id, session), (shift, shift))
        low, high = min(low, shift), max(high, shift)
        if high - low > TRACE_SLACK_NS:
            return where, (f"request {str(record['request_id'])[:60]!r} was scheduled "
                           f"{(high - low) / 1e6:.3f} ms off the trace's spacing")
        shifts[point.id, session] = (low, high)
    return None


# --- conversations: each turn sent the history its session's earlier turns made -------------
_HISTORY_FIELDS = ("history_messages", "history_chars", "message_chars", "answer_chars")


def _histories(lines: Sequence[Mapping[str, Any]],
               position: Mapping[str, int]) -> tuple[str, str] | None:
    """The first conversation turn whose history is not its session's earlier exchanges that
    succeeded (their messages' and answers' characters), or whose answer has more characters
    than the bytes streamed."""
    sessions: dict[tuple[str, Any], list[Mapping[str, Any]]] = {}
    for record in lines:
        if "turn" in record:
            sessions.setdefault((str(record["point"]), record.get("session")), []).append(record)
    for (pid, _), group in sessions.items():
        chars = messages = 0
        for record in sorted(group, key=lambda r: r["seq"]):
            rid = str(record.get("request_id"))[:60]
            where = f"/points/{position[pid]}"
            values = [record.get(k) for k in _HISTORY_FIELDS]
            counts = [v for v in values if isinstance(v, int) and not isinstance(v, bool)
                      and v >= 0]
            if len(counts) != len(values):
                return where, f"conversation turn {rid!r} lacks its history counts"
            sent_messages, sent_chars, message, answer = counts
            if (sent_messages, sent_chars) != (messages, chars):
                return where, (f"conversation turn {rid!r} sent a history of {sent_messages} "
                               f"messages and {sent_chars} characters; its session's earlier "
                               f"turns that succeeded make {messages} and {chars}")
            if answer > int(record.get("content_bytes", answer) or 0):
                return where, f"conversation turn {rid!r} keeps an answer of {answer} " \
                              f"characters, more than the bytes it streamed"
            if record.get("class") == "ok":
                chars += message + answer
                messages += 2
    return None
# --- end of conversations ---------------------------------------------------------------------


def _in_plan(indexes: list[int], total: int) -> bool:
    """Points of the plan, each once, in its order: the whole plan, a shard, or shards merged
    (`epbench merge` of some of a run's shards)."""
    return bool(indexes) and indexes == sorted(set(indexes)) and indexes[0] >= 0 \
        and indexes[-1] < total


def _point(point: Any) -> str:
    fields = ("concurrency", "rate", "phase", "start_s", "end_s", "index")
    return ", ".join(f"{f} {getattr(point, f)!r}" for f in fields
                     if getattr(point, f) is not None)
