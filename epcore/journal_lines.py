"""The journal's line kinds and what each must hold: one registry for the runner (summary and
resume) and for `epbench validate` (which accepts only lines of a known kind and shape). What
a line of each kind holds is typed in epbench.core.journal_records (RunLine, SessionLine,
ShardLine, TrialLine, RequestLine, AgenticRequestLine); the field lists here are the part of
those types validation requires (tests/core/test_journal_records.py pins that they agree).

    run      first line: `spec` (serving, epbench.core.runspec) or `agentic` (core.agentic_plan)
    session  each process that sends (the run, every --resume)
    shard    before each shard's lines in a merged journal (`epbench merge`)
    trial    one finished agentic trial (TRIAL_FIELDS)
    request  one finished request (no `type`): serving lines hold REQUEST_FIELDS, agentic
             ones AGENTIC_REQUEST_FIELDS

A kind or a required field added here is what validation accepts and requires; a line of
another kind, a line missing a field its kind requires, a duplicate key or nesting deeper
than MAX_DEPTH is refused (`line_problem`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

_Line = TypeVar("_Line", bound=Mapping[str, Any])

# What a serving request line must hold to be summarized, and a trial line to be resumed.
REQUEST_FIELDS: dict[str, type | tuple[type, ...]] = {
    "request_id": str, "point": str, "seq": int, "class": str, "t_send_ns": int, "t_done_ns": int,
}
TRIAL_FIELDS: dict[str, type | tuple[type, ...]] = {"task": str, "trial": int, "result": str}
# What the server said (its answer's id, allow-listed headers): optional on request lines, as
# journals written before them have neither; their shape is
# epbench.core.server_evidence.line_problem.
SERVER_FIELDS: dict[str, type | tuple[type, ...]] = {
    "response_id": (str, type(None)), "server_headers": (dict, type(None)),
}

# --- streamed-evidence fields (issue 21: usage held to what was streamed) -------------------
# Written on every request line since; what epbench.core.usage_bounds holds `usage` to. A line
# written before them lacks them (and is held to the bounds that need no bytes); a line that
# has one must have it as a count, else it is incomplete like a line missing a field above.
#   content_bytes  UTF-8 bytes of text, reasoning and tool-call names and arguments received
#   tool_calls     tool calls seen in the answer
#   sse_events     SSE events read (every `data:` payload, [DONE] included; 0 for JSON)
STREAMED_FIELDS: dict[str, type | tuple[type, ...]] = {
    "content_bytes": int, "tool_calls": int, "sse_events": int,
}
# --- end of streamed-evidence fields ----------------------------------------------------------
AGENTIC_REQUEST_FIELDS: dict[str, type | tuple[type, ...]] = {"task": str, "trial": int}

LINE_KINDS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "run": {},
    "session": {},
    "shard": {},
    "trial": TRIAL_FIELDS,
    "request": REQUEST_FIELDS,
}
"""Each known line kind and the fields (with their types) a line of it must hold."""

MAX_DEPTH = 8
"""How deeply a line's containers may nest: a run line's spec is 4 deep (line, spec, points,
a point)."""


def kind_of(record: dict[str, Any]) -> Any:
    return record.get("type", "request")


def required_fields(record: dict[str, Any]) -> dict[str, type | tuple[type, ...]] | None:
    """The fields a line of this kind must hold; None for a kind the journal does not have."""
    kind = kind_of(record)
    if not isinstance(kind, str) or kind not in LINE_KINDS:
        return None
    if kind == "request" and "task" in record:
        return AGENTIC_REQUEST_FIELDS
    return LINE_KINDS[kind]


def line_problem(record: Any) -> str | None:
    """What is wrong with the shape of one parsed journal line (None: a known kind, holding
    every field its kind requires, with the right types)."""
    if not isinstance(record, dict):
        return "is not an object"
    needed = required_fields(record)
    if needed is None:
        return f"has type {str(kind_of(record))[:40]!r}, not a kind of journal line"
    for name, wanted in needed.items():
        value = record.get(name)
        if not isinstance(value, wanted) or (isinstance(value, bool) and wanted is not bool):
            what = "lacks" if name not in record else "has a malformed"
            return f"({kind_of(record)}) {what} field {name!r}"
    if kind_of(record) == "run" and not isinstance(record.get("spec", record.get("agentic")),
                                                   dict):
        return "(run) holds neither a spec nor an agentic block"
    return None


def complete_records(records: Sequence[_Line]) -> tuple[list[_Line], int]:
    """(the records that hold every field their kind needs, how many did not).

    A line can parse and still lack fields (written by another tool, or edited): such lines
    are skipped and counted, never allowed to crash a summary or a resume."""
    kept = []
    for record in records:
        kind = record.get("type", "request")
        if kind == "trial":
            needed = TRIAL_FIELDS
        elif kind == "request" and "task" not in record:
            needed = REQUEST_FIELDS
        else:
            kept.append(record)  # agentic request lines: evidence, not read back
            continue
        if all(isinstance(record.get(k), t) for k, t in needed.items()) and (
            needed is not REQUEST_FIELDS or _counts_or_absent(record)
        ):
            kept.append(record)
    return kept, len(records) - len(kept)


def _counts_or_absent(record: Mapping[str, Any]) -> bool:
    """Every streamed-evidence field the line has is a non-negative integer."""
    for key in STREAMED_FIELDS:
        value = record.get(key)
        if key in record and not (
            isinstance(value, int) and not isinstance(value, bool) and value >= 0
        ):
            return False
    return True
