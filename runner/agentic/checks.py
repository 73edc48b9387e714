"""Whether a trial did what its task asks.

`evaluate` turns what a trial did (its calls, replies and final state) into the list of checks
that failed; an empty list is a success. `validate_workload_semantics` (the entry point
`epbench validate` calls) lives here by contract and is implemented in `semantics.py`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from epbench.runner.agentic import pointer
from epbench.runner.agentic.matching import accepts, call_matches, describe, equal
from epbench.runner.agentic.model import Checks, ExpectedCall

__all__ = ["Observed", "ObservedCall", "accepts", "call_matches", "describe", "evaluate"]


@dataclass
class ObservedCall:
    name: str
    arguments: dict[str, Any] | None
    cls: str = "ok"
    faulted: bool = False  # the tool ran and an injected fault answered

    @property
    def effective(self) -> bool:
        """A valid call that the tool answered without a fault: what the checks look at."""
        return (
            self.cls in {"ok", "missing_id", "duplicate_id"}
            and not self.faulted
            and self.arguments is not None
        )


@dataclass
class Observed:
    """What one trial did."""

    calls: list[ObservedCall] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    state: Any = None


Params = Mapping[str, dict[str, Any]]  # tool name -> its parameters (JSON Schema)


def _matches(checks: Checks, params: Params, exp: ExpectedCall, call: ObservedCall) -> bool:
    return call_matches(
        exp, call.name, call.arguments or {}, checks.match, params.get(call.name)
    )


def _matching(checks: Checks, params: Params, calls: list[ObservedCall]) -> dict[int, int]:
    """A maximum matching expected index -> call index (augmenting paths; sizes are small)."""
    expected = checks.calls
    edges = [[j for j, c in enumerate(calls) if _matches(checks, params, e, c)] for e in expected]
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(expected)):
        augment(i, set())
    return {i: j for j, i in owner.items()}


def _partial(checks: Checks, params: Params, calls: list[ObservedCall]) -> dict[int, int]:
    """Greedy in-order subsequence matching (optimal for a subsequence test)."""
    out: dict[int, int] = {}
    j = 0
    for i, exp in enumerate(checks.calls):
        while j < len(calls) and not _matches(checks, params, exp, calls[j]):
            j += 1
        if j == len(calls):
            break
        out[i] = j
        j += 1
    return out


def evaluate(checks: Checks, observed: Observed, params: Params | None = None) -> list[str]:
    """The checks that failed, each as one readable line; empty means the trial passed.

    `params` (tool name -> parameters) is what `match.numbers: strict`/`bfcl` reads declared types
    from."""
    params = params or {}
    failed: list[str] = []
    calls = [c for c in observed.calls if c.effective]
    if checks.order == "partial":
        matched = _partial(checks, params, calls)
    elif checks.order == "strict":
        matched = {
            i: i
            for i, e in enumerate(checks.calls)
            if i < len(calls) and _matches(checks, params, e, calls[i])
        }
        if len(calls) != len(checks.calls):
            failed.append(
                f"order strict: {len(calls)} valid calls made, {len(checks.calls)} expected"
            )
    else:
        matched = _matching(checks, params, calls)
    for i, exp in enumerate(checks.calls):
        if i not in matched:
            word = "in order " if checks.order in {"partial", "strict"} else ""
            failed.append(f"calls[{i}]: expected {word}{describe(exp)}, not made")
    if not checks.extra_calls:
        used = set(matched.values())
        for call in observed.calls:
            if not call.effective and not call.faulted:
                failed.append(f"extra_calls: invalid call {call.name or '(no name)'} ({call.cls})")
        for j, call in enumerate(calls):
            if j not in used:
                shown = json.dumps(call.arguments, ensure_ascii=False)
                failed.append(f"extra_calls: unexpected call {call.name}({shown})")
    for name in checks.forbidden:
        if any(c.name == name for c in observed.calls):
            failed.append(f"forbidden: {name} was called")
    for check in checks.state:
        try:
            value = pointer.resolve(observed.state, check.path)
        except pointer.PointerError:
            failed.append(f"state {check.path}: missing, expected {json.dumps(check.equals)}")
            continue
        if not equal(value, check.equals):
            failed.append(
                f"state {check.path}: {json.dumps(value, ensure_ascii=False)[:100]}, "
                f"expected {json.dumps(check.equals, ensure_ascii=False)}"
            )
    reply = observed.replies[-1] if observed.replies else ""
    folded = reply.casefold()
    for options in checks.reply_contains:
        if not any(option.casefold() in folded for option in options):
            shown = " or ".join(json.dumps(o, ensure_ascii=False) for o in options)
            failed.append(f"reply_contains: {shown} not in the final reply")
    return failed

