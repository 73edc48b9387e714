"""Which journal lines are complete enough to summarize: one rule for the runner (summary and
resume) and for `epbench validate` (recomputation), so both read the same lines."""

from __future__ import annotations

from typing import Any

# What a serving request line must hold to be summarized, and a trial line to be resumed.
REQUEST_FIELDS: dict[str, type | tuple[type, ...]] = {
    "request_id": str, "point": str, "seq": int, "class": str, "t_send_ns": int, "t_done_ns": int,
}
TRIAL_FIELDS: dict[str, type | tuple[type, ...]] = {"task": str, "trial": int, "result": str}
# What the server said (its answer's id, allow-listed headers): optional on request lines, as
# journals written before them have neither; their shape is epcore.server_evidence.line_problem.
SERVER_FIELDS: dict[str, type | tuple[type, ...]] = {
    "response_id": (str, type(None)), "server_headers": (dict, type(None)),
}

# --- streamed-evidence fields (issue 21: usage held to what was streamed) -------------------
# Written on every request line since; what epcore.usage_bounds holds `usage` to. A line
# written before them lacks them (and is held to the bounds that need no bytes); a line that
# has one must have it as a count, else it is incomplete like a line missing a field above.
#   content_bytes  UTF-8 bytes of text, reasoning and tool-call names and arguments received
#   tool_calls     tool calls seen in the answer
#   sse_events     SSE events read (every `data:` payload, [DONE] included; 0 for JSON)
STREAMED_FIELDS: dict[str, type | tuple[type, ...]] = {
    "content_bytes": int, "tool_calls": int, "sse_events": int,
}
# --- end of streamed-evidence fields ----------------------------------------------------------


def complete_records(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
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


def _counts_or_absent(record: dict[str, Any]) -> bool:
    """Every streamed-evidence field the line has is a non-negative integer."""
    for key in STREAMED_FIELDS:
        value = record.get(key)
        if key in record and not (
            isinstance(value, int) and not isinstance(value, bool) and value >= 0
        ):
            return False
    return True
