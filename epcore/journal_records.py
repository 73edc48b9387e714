"""The journal's records: one type per line kind, the source of truth for what a line holds.

    RunLine          first line: `spec` (serving, epbench.core.runspec) or `agentic`
                     (epbench.core.agentic_plan); written by `run_line` only
    SessionLine      each process that sends (the run, every --resume); `session_line`
    ShardLine        before each shard's lines in a merged journal (`epbench merge`)
    TrialLine        one finished agentic trial: epbench.core.trial_record.TrialRecord's fields
    RequestLine      one finished serving request (no `type`): epbench.runner.runner.make_record
    ConversationLine one finished conversation turn: a RequestLine with its session, turn and
                     history counts (epbench.runner.conversation)
    AgenticRequestLine  one finished agentic request (`"type": "request"`, with task and trial)

The types are TypedDicts, not dataclasses: a record is the plain dict the writer serializes,
so the runner's hot path (a request line per finished request) builds one dict literal and
pays nothing for the type. What validation requires of each kind is
epbench.core.journal_lines (its field lists name fields of these types: tests pin that).

The file names live here too: SUFFIX beside a result (`<stem>.events.jsonl.gz`), RUN_JOURNAL
in a run folder (`events.jsonl`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal, NotRequired, TypedDict

SUFFIX = ".events.jsonl.gz"
"""A published journal, beside its result: `<stem>` + SUFFIX."""
RUN_JOURNAL = "events.jsonl"
"""A run folder's journal."""


class RunLine(TypedDict):
    type: Literal["run"]
    spec: NotRequired[dict[str, Any]]  # serving: epbench.core.runspec.RunSpec.to_json()
    agentic: NotRequired[dict[str, Any]]  # agentic: epbench.core.agentic_plan run_line()


class SessionLine(TypedDict):
    type: Literal["session"]
    t_ns: int  # time.perf_counter_ns() when the process starts sending
    at: str  # its wall clock, UTC, to the hundredth of a second
    rtt_ms: NotRequired[list[float]]  # the preflight's round trips (epbench.core.round_trips)


class ShardLine(TypedDict):
    type: Literal["shard"]


class TrialLine(TypedDict, total=False):
    """`{"type": "trial", **asdict(TrialRecord)}`: TrialRecord's fields are the trial's."""

    type: Literal["trial"]
    task: str
    trial: int
    result: str


RequestLine = TypedDict("RequestLine", {  # functional form: `class` is a Python keyword
    "request_id": str,
    "point": str,
    "seq": int,
    "warmup": bool,
    "t_scheduled_ns": int | None,
    "t_send_ns": int,
    "t_first_ns": int | None,
    "t_first_answer_ns": int | None,
    "t_last_ns": int | None,
    "t_done_ns": int,
    "input_tokens": int | None,
    "input_source": str,
    "input_requested": int,
    "output_requested": NotRequired[int],  # trace replays: the trace's output length, capped
    "output_tokens": int | None,
    "token_source": str | None,
    "reasoning_tokens": int | None,
    "cache_read_tokens": int | None,
    "cache_write_tokens": int | None,
    "status": int | None,
    "class": str,  # `ok` or an error class (epbench.core.metrics.errors)
    "error": str | None,
    "itl_us": list[int],
    "attempts": int,
    "retry_s": float,
    "retry_tokens": int,
    "response_id": str | None,  # the server's side (epbench.core.server_evidence)
    "server_headers": dict[str, str] | None,
    "content_bytes": int,  # streamed evidence (journal_lines.STREAMED_FIELDS)
    "tool_calls": int,
    "sse_events": int,
})
"""One finished serving request (docs/DESIGN.md "Journal line")."""


class ConversationLine(RequestLine):
    """One finished conversation turn (epbench.runner.conversation): a request line, with its
    session and turn, the history sent before the new message (messages and characters, the
    system prompt not counted), the new message's and the kept answer's characters. Texts stay
    out of the journal."""

    session: int
    turn: int
    history_messages: int
    history_chars: int
    message_chars: int
    answer_chars: int


AgenticRequestLine = TypedDict("AgenticRequestLine", {
    "type": Literal["request"],
    "request_id": str,  # [L<level>-]<task>-t<trial>-s<step>-a<attempt>
    "task": str,
    "trial": int,
    "step": int,
    "attempt": int,
    "tag": str,  # productive, repair, recovery, transport
    "t_send_ns": int,
    "t_first_ns": int | None,
    "t_first_answer_ns": int | None,
    "t_last_ns": int | None,
    "t_done_ns": int,
    "t_first_tool_ns": int | None,
    "t_last_tool_ns": int | None,
    "input_tokens": int | None,
    "input_source": str,
    "output_tokens": int | None,
    "token_source": str | None,
    "reasoning_tokens": int | None,
    "cache_read_tokens": int | None,
    "cache_write_tokens": int | None,
    "content_bytes": int,
    "tool_calls": int,
    "sse_events": int,
    "status": int | None,
    "class": str,
    "error": str | None,
    "backoff_s": float,
    "usd": float | None,
    "calls": dict[str, int],  # tool calls per class (epbench.core.trial_record.CLASSES)
    "quirks": list[str],
    "finish_reason": str | None,
    "response_id": str | None,
    "server_headers": dict[str, str],
    "level": NotRequired[int],  # the load level (concurrent agents), with `load:` levels only
})
"""One finished agentic request (epbench.runner.agentic.trial); what validation requires of it
is journal_lines.AGENTIC_REQUEST_FIELDS."""


JournalLine = (RunLine | SessionLine | ShardLine | TrialLine | RequestLine | ConversationLine
               | AgenticRequestLine)


def run_line(*, spec: dict[str, Any] | None = None,
             agentic: dict[str, Any] | None = None) -> RunLine:
    """The journal's first line: a serving run's spec, or an agentic run's plan (exactly one)."""
    if (spec is None) == (agentic is None):
        raise ValueError("a run line holds a serving spec or an agentic plan, exactly one")
    if spec is not None:
        return {"type": "run", "spec": spec}
    assert agentic is not None
    return {"type": "run", "agentic": agentic}


def has_run_line(records: Any) -> bool:
    """Whether these journal records already begin with (hold) a run line."""
    return any(r.get("type") == "run" for r in records or ())


def session_line(t_ns: int, rtt_ms: list[float] | None = None) -> SessionLine:
    """A session line for a process starting to send at monotonic instant `t_ns`, now."""
    line: SessionLine = {
        "type": "session",
        "t_ns": t_ns,
        "at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z",
    }
    if rtt_ms:
        line["rtt_ms"] = [round(v, 4) for v in rtt_ms]
    return line


SHARD_LINE: ShardLine = {"type": "shard"}
