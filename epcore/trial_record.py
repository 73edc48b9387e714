"""One agentic trial as the journal keeps it (`{"type": "trial", ...}`), and call classes.

The runner writes a `TrialRecord` when a trial ends; `epbench.core.agentic_summary` turns the
records into the result's `agentic` section, in the runner and again in `epbench validate`,
which reads them back from the journal with `from_journal`.
"""

from __future__ import annotations

import traceback
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

CLASSES: tuple[str, ...] = (
    "ok",
    "invalid_json",
    "unknown_tool",
    "schema_mismatch",
    "missing_id",
    "duplicate_id",
    "stream_truncated",
)
"""Every tool call is exactly one of these (epbench.runner.agentic.classify decides which)."""


@dataclass
class TrialRecord:
    """What one trial did and cost; `result` is one of the schema's outcome results."""

    task: str
    trial: int
    result: str
    failed_checks: list[str] = field(default_factory=list)
    steps: int = 0
    requests: int = 0
    wall_ms: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    # cached_input / cache_write / reasoning, summed over the requests whose usage reported them
    token_detail: dict[str, int] = field(default_factory=dict)
    usd: float | None = 0.0
    calls: dict[str, int] = field(default_factory=lambda: {c: 0 for c in CLASSES})
    correct_calls: int = 0
    costs: dict[str, dict[str, Any]] = field(default_factory=dict)
    decision_ms: list[float] = field(default_factory=list)
    first_tool_delta_ms: list[float] = field(default_factory=list)
    tool_ms: list[float] = field(default_factory=list)
    overhead_ms: float | None = None
    reference_tokens: int | None = None
    harness_fault: str | None = None
    harness_traceback: str | None = None
    level: int | None = None  # the load level (concurrent agents) it was played at, if any
    errors: dict[str, int] = field(default_factory=dict)  # failed requests by error class
    # per tool call, how much longer its wait took than its seeded latency: the harness's own
    # lag (a busy client delays every step too, and the endpoint would be blamed)
    tool_lag_ms: list[float] = field(default_factory=list)

    def journal_line(self) -> dict[str, Any]:
        line = {"type": "trial", **asdict(self)}
        if self.level is None:
            del line["level"]  # a workload without load levels journals what it always did
        if not self.errors:
            del line["errors"]
        if not self.tool_lag_ms:
            del line["tool_lag_ms"]
        return line

    @classmethod
    def from_journal(cls, line: Mapping[str, Any]) -> TrialRecord:
        data = {k: v for k, v in line.items() if k in cls.__dataclass_fields__}
        return cls(**data)

    def outcome(self) -> dict[str, Any]:
        """The trial's entry in `agentic.tasks[].outcomes` (result.schema.json)."""
        return {
            "trial": self.trial,
            "result": self.result,
            "failed_checks": self.failed_checks[:100],
            "steps": self.steps,
            "requests": self.requests,
            "wall_ms": round(self.wall_ms, 3),
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "usd": self.usd,
        }


def traceback_summary(exc: BaseException, frames: int = 4) -> str:
    """The innermost frames of an exception, one `file:line function` each (no source lines,
    no locals: nothing from the conversation reaches the result)."""
    stack = traceback.extract_tb(exc.__traceback__)[-frames:]
    lines = [f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno} {f.name}" for f in stack]
    return "; ".join([*lines, type(exc).__name__])[:2000]
