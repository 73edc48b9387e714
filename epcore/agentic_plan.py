"""What an agentic workload plans: the one implementation the runner runs from
(epbench.runner.agentic.executor writes it as the journal's run line) and `epbench validate`
rebuilds from the workload file with the claimed sha256 to compare with that line.

    tasks        every task of the file, in its order, each run `trials` times (`quick_trials`
                 under --quick)
    settings     what every request of every trial asks for: stream (off when the endpoint's
                 declared `streamed_tool_calls: non-streamed` fallback was used), temperature,
                 max_tokens, tool_choice, tool_choice_by_step, parallel_tool_calls
    limits       max_steps, max_tool_errors and the retry block of each trial
    load         with `load:` levels, each level's concurrent agents and trials per task
                 (max(trials, ceil(level / tasks)): every agent has a whole trial), and the
                 SLO that capacity is measured at; without, one level at `concurrency`
    per task     the names of the tools it is offered (its own, else the workload's) and a
                 sha256 of what defines it (the task, those tools, the system prompt and the
                 initial state), so a journal of other tasks under the same ids is told apart

Defaults are the runner's (a workload that leaves a setting out runs with these).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

DEFAULT_MAX_STEPS = 12
DEFAULT_MAX_TOOL_ERRORS = 4

FEATURE = "streamed_tool_calls"
"""The capability an endpoint may refuse (epbench.runner.agentic.capability)."""
NON_STREAMED = "non-streamed"
"""Its one declared fallback: the workload's requests are sent unstreamed."""


@dataclass(frozen=True)
class Settings:
    """What an agentic request asks for (the workload's `settings`, with the defaults)."""

    stream: bool = True
    temperature: float | None = 0.0
    max_tokens: int | None = None
    tool_choice: str | dict[str, Any] | None = "auto"
    parallel_tool_calls: bool | None = None
    # the tool choice of steps 1..n (then `tool_choice`): forced where the task needs a call
    tool_choice_by_step: tuple[str | dict[str, Any], ...] = ()

    def tool_choice_at(self, step: int) -> str | dict[str, Any] | None:
        """The tool choice sent on `step` (1-based)."""
        if 1 <= step <= len(self.tool_choice_by_step):
            return self.tool_choice_by_step[step - 1]
        return self.tool_choice

    def to_json(self) -> dict[str, Any]:
        return {"stream": self.stream, "temperature": self.temperature,
                "max_tokens": self.max_tokens, "tool_choice": self.tool_choice,
                "tool_choice_by_step": list(self.tool_choice_by_step),
                "parallel_tool_calls": self.parallel_tool_calls}


def settings_of(doc: Mapping[str, Any]) -> Settings:
    """The request settings of a schema-checked agentic workload document."""
    block = doc.get("settings") or {}
    return Settings(
        stream=bool(block.get("stream", True)),
        temperature=block.get("temperature", 0.0),
        max_tokens=block.get("max_tokens"),
        tool_choice=block.get("tool_choice", "auto"),
        parallel_tool_calls=block.get("parallel_tool_calls"),
        tool_choice_by_step=tuple(block.get("tool_choice_by_step") or ()),
    )


def unstreamed(used: Iterable[Mapping[str, Any]]) -> bool:
    """Whether the fallbacks a run used include sending tool requests unstreamed."""
    return any(u.get("feature") == FEATURE and u.get("fallback") == NON_STREAMED for u in used)


def with_fallbacks(settings: Settings, used: Iterable[Mapping[str, Any]]) -> Settings:
    """The settings as the run sends them after the fallbacks it used."""
    return replace(settings, stream=False) if unstreamed(used) else settings


@dataclass(frozen=True)
class AgenticPlan:
    """Everything an agentic run of one workload plans, before a request is sent."""

    tasks: tuple[str, ...]
    trials: int
    seed: int
    concurrency: int  # trials in flight at once
    settings: Settings
    limits: dict[str, Any]  # max_steps, max_tool_errors, retry (the workload's block or None)
    tools: tuple[tuple[str, ...], ...]  # per task, the names of the tools it is offered
    task_sha256: tuple[str, ...]  # per task
    load: Load | None = None  # the workload's load levels, if it declares them

    @property
    def max_steps(self) -> int:
        return int(self.limits["max_steps"])

    def trials_at(self, level: int | None) -> int:
        """Trials per task played at `level` (None: a workload without load levels)."""
        if level is None or self.load is None:
            return self.trials
        return self.load.trials[self.load.concurrency.index(level)]

    def run_line(self) -> dict[str, Any]:
        """The `agentic` block of the journal's run line."""
        return {"tasks": list(self.tasks), "trials": self.trials, "seed": self.seed,
                "concurrency": self.concurrency, "settings": self.settings.to_json(),
                "limits": dict(self.limits), "tools": [list(t) for t in self.tools],
                "task_sha256": list(self.task_sha256),
                **({"load": self.load.to_json()} if self.load is not None else {})}


@dataclass(frozen=True)
class Load:
    """Load levels: `concurrency[i]` agents at once play `trials[i]` trials of every task."""

    concurrency: tuple[int, ...]
    trials: tuple[int, ...]
    decision_p90_ms: float  # the SLO on each level's step decision p90

    def to_json(self) -> dict[str, Any]:
        return {"concurrency": list(self.concurrency), "trials": list(self.trials),
                "slo": {"decision_p90_ms": self.decision_p90_ms}}


def load_of(doc: Mapping[str, Any], trials: int) -> Load | None:
    """The load levels of a schema-checked agentic workload (None without `load`)."""
    block = doc.get("load")
    if not isinstance(block, Mapping):
        return None
    tasks = max(1, len(doc.get("tasks") or []))
    levels = tuple(int(c) for c in block["concurrency"])
    return Load(concurrency=levels,
                trials=tuple(max(trials, -(-level // tasks)) for level in levels),
                decision_p90_ms=float(block["slo"]["decision_p90_ms"]))


def plan_agentic(doc: Mapping[str, Any], quick: bool,
                 fallbacks: Iterable[Mapping[str, Any]] = ()) -> AgenticPlan:
    """The plan of a schema-checked agentic workload document, with --quick or not, after the
    declared fallbacks the run used."""
    trials = int(doc.get("trials", 1))
    if quick:
        trials = int(doc.get("quick_trials", trials))
    limits = doc.get("limits") or {}
    shared = doc.get("tools") or []
    tools: list[tuple[str, ...]] = []
    digests: list[str] = []
    for task in doc.get("tasks") or []:
        offered = task.get("tools", shared)
        tools.append(tuple(str(t["name"]) for t in offered))
        digests.append(task_sha256(task, offered, doc))
    seed = doc.get("seed", 0)
    return AgenticPlan(
        tasks=tuple(str(t["id"]) for t in doc.get("tasks") or []),
        trials=trials,
        seed=seed if isinstance(seed, int) else 0,
        concurrency=max(1, int((doc.get("settings") or {}).get("concurrency", 1))),
        settings=with_fallbacks(settings_of(doc), fallbacks),
        limits={"max_steps": int(limits.get("max_steps", DEFAULT_MAX_STEPS)),
                "max_tool_errors": int(limits.get("max_tool_errors", DEFAULT_MAX_TOOL_ERRORS)),
                "retry": limits.get("retry")},
        tools=tuple(tools),
        task_sha256=tuple(digests),
        load=load_of(doc, trials),
    )


def task_sha256(task: Mapping[str, Any], tools: Any, doc: Mapping[str, Any]) -> str:
    """A sha256 of what one task's trials run: the task, its tools, the system prompt and
    the initial state (canonical JSON: sorted keys, no spaces)."""
    defined = {"task": task, "tools": tools, "system_prompt": doc.get("system_prompt"),
               "state": doc.get("state")}
    text = json.dumps(defined, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      default=str)
    return hashlib.sha256(text.encode("ascii")).hexdigest()
