"""A conversation point's figures per turn and per session, from its journal records alone.

Request lines of a conversation carry `session` and `turn` (epbench.runner.conversation);
only measured (not warm-up) lines count.

    turns[t]     turn index t: requests issued and completed, TTFT and input tokens (the
                 endpoint's usage: history plus the new message) over completed requests, and
                 the history sent (characters of earlier messages and answers)
    later_turns  TTFT over every completed turn after the first, pooled
    ttft_p50_later_over_first  p50 of later turns / p50 of turn 0 (below 1: the later turns,
                 with the same new input and a longer history, start sooner; a prefix cache
                 at work); null when either is missing
    sessions     count, completed (every turn ok), turns completed per session, and session
                 duration (first send to last completion, think times included) over the
                 sessions that ran in one process: a session cut by a kill and finished by
                 `--resume` is counted in `resumed` and left out of the durations

Bootstrap seeds derive from the point's seed base, so a merged or re-validated result has the
same intervals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from epbench.core.metrics import latency
from epbench.core.metrics.errors import OK
from epbench.core.metrics.percentiles import summarize

_DIGITS = 6


def is_conversation(records: Sequence[Mapping[str, Any]]) -> bool:
    return any(_index(r.get("turn")) is not None for r in records)


def _index(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 \
        else None


def conversation_block(records: Sequence[Mapping[str, Any]], seed: int) -> dict[str, Any]:
    """The point's `conversation` object (result.schema.json#/$defs/conversation)."""
    measured = [r for r in records if not r.get("warmup")
                and _index(r.get("turn")) is not None and _index(r.get("session")) is not None]
    by_turn: dict[int, list[Mapping[str, Any]]] = {}
    by_session: dict[int, list[Mapping[str, Any]]] = {}
    for record in measured:
        by_turn.setdefault(int(record["turn"]), []).append(record)
        by_session.setdefault(int(record["session"]), []).append(record)
    turns: list[dict[str, Any]] = []
    for turn in sorted(by_turn):
        group = by_turn[turn]
        ok = [r for r in group if r["class"] == OK]
        inputs = [float(r["input_tokens"]) for r in ok if _usage_input(r)]
        history = [float(r["history_chars"]) for r in ok
                   if _index(r.get("history_chars")) is not None]
        turns.append({
            "turn": turn,
            "requests": len(group),
            "completed": len(ok),
            "ttft_ms": summarize(_ttfts(ok), seed=seed + 20 + 2 * min(turn, 1000)),
            "input_tokens": summarize(inputs, seed=None),
            "history_chars": summarize(history, seed=None),
        })
    later = [r for t, group in by_turn.items() if t > 0 for r in group if r["class"] == OK]
    later_ttft = summarize(_ttfts(later), seed=seed + 19)
    first = next((t["ttft_ms"]["p50"] for t in turns if t["turn"] == 0), None)
    ratio = None
    if first and later_ttft["p50"] is not None:
        ratio = round(later_ttft["p50"] / first, _DIGITS)
    durations: list[float] = []
    resumed = completed = 0
    done_turns: list[float] = []
    for group in by_session.values():
        ok_turns = sum(1 for r in group if r["class"] == OK)
        done_turns.append(float(ok_turns))
        completed += ok_turns == len(group)
        if len({r.get("_session", 0) for r in group}) > 1:
            resumed += 1
            continue
        start = min(int(r["t_send_ns"]) for r in group)
        end = max(int(r["t_done_ns"]) for r in group)
        durations.append((end - start) / 1e9)
    return {
        "turns": turns,
        "later_turns": {"ttft_ms": later_ttft},
        "ttft_p50_later_over_first": ratio,
        "sessions": {
            "count": len(by_session),
            "completed": completed,
            "resumed": resumed,
            "turns_completed": summarize(done_turns, seed=None),
            "duration_s": summarize(durations, seed=seed + 18),
        },
    }


def _ttfts(records: Sequence[Mapping[str, Any]]) -> list[float]:
    return [v for v in (latency.ttft_ms(r) for r in records) if v is not None]


def _usage_input(record: Mapping[str, Any]) -> bool:
    return record.get("input_source", "usage") == "usage" and isinstance(
        record.get("input_tokens"), int)
