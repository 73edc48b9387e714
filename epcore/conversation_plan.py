"""What a conversation workload plans: sessions of several turns, drawn from the seed.

    load:
      pattern: conversation
      concurrency: [4]          sessions at once (closed loop: when a session ends, the next
                                one starts), one point per level; or
      session_rates_rps: [0.5]  sessions start open loop at exponential gaps of mean 1/r
      sessions_per_point: 16    measured sessions per point (closed loop: at least the level)
      warmup_sessions: 1        sessions run to completion before the measured ones
      turns: {distribution...}  turns per session (rounded, 1 to MAX_TURNS)
      think_time_s: {...}       seconds between an answer and the next user message
      session_context_tokens:   optional: a context of each session's own (a document, the
                                user's profile), this many more tokens in its first message

Each point's requests are the turns of its sessions, session by session: request `seq` of
point `p` is `p-<seq:05d>` as in every pattern, and the point's `conversation` holds, per
request, its session index, turn index and think time (0 before a session's first turn). The
new user message's length is drawn from `prompts.input_tokens` for every turn (the first
turn's plus the session's context, when there is one: its planned length is the two). What
the model
answered is not planned: it is what the endpoint streamed back, sent as the history of the
next turn (epbench.runner.conversation).

Draws: per point, one generator seeded by (seed, "conversation", point) draws, session by
session, the turn count, the context length (when the load has one), then per turn its
message length and (after the first) its think time; open loop, the session starts from a
generator seeded by (seed, "schedule", point).
"""

from __future__ import annotations

import random
from array import array
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from epbench.core.workload_plan import PlannedPoint, draw_length, draw_value, rate_id

MAX_TURNS = 64


@dataclass
class Turns:
    """Per request of a conversation point: its session, its turn, the think time before it."""

    session: array = field(default_factory=lambda: array("i"))
    turn: array = field(default_factory=lambda: array("i"))
    think_s: array = field(default_factory=lambda: array("d"))


def _counts(load: Mapping[str, Any], quick: Mapping[str, Any]) -> tuple[int, int]:
    """(measured sessions per point, warm-up sessions per point)."""
    n = int(quick.get("sessions_per_point", load["sessions_per_point"]))
    warm = int(quick.get("warmup_sessions", load.get("warmup_sessions", 0)))
    return n, warm


def _levels(load: Mapping[str, Any]) -> list[tuple[str, int | None, float | None]]:
    """(point id, sessions at once, session rate) per point."""
    if "concurrency" in load:
        return [(f"c{int(c)}", int(c), None) for c in load["concurrency"]]
    return [(rate_id(float(r)), None, float(r)) for r in load["session_rates_rps"]]


def _turn_bound(dist: Mapping[str, Any]) -> int:
    high = dist.get("max", dist.get("value", MAX_TURNS))
    return max(1, min(MAX_TURNS, round(float(high))))


def planned_turns(load: Mapping[str, Any], quick: Mapping[str, Any]) -> float:
    """The most requests the plan can hold (sessions x the turn bound), without drawing it."""
    n, warm = _counts(load, quick)
    bound = _turn_bound(load["turns"])
    return float(sum((warm + max(n, c or 0)) * bound for _, c, _ in _levels(load)))


def conversation_points(seed: int, load: Mapping[str, Any], lengths: Mapping[str, Any],
                        quick: Mapping[str, Any]) -> list[PlannedPoint]:
    """Every point of a conversation plan (warm-up sessions first in each)."""
    n, warm = _counts(load, quick)
    points = []
    for index, (pid, level, rate) in enumerate(_levels(load)):
        sessions = warm + (max(n, level) if level is not None else n)
        rng = random.Random(f"{seed}:conversation:{pid}")
        turns = Turns()
        drawn = array("i")
        warm_requests = 0
        for session in range(sessions):
            count = max(1, min(MAX_TURNS, draw_length(load["turns"], rng)))
            context = 0
            if "session_context_tokens" in load:
                context = draw_length(load["session_context_tokens"], rng)
            for turn in range(count):
                turns.session.append(session)
                turns.turn.append(turn)
                drawn.append(draw_length(lengths, rng) + (context if turn == 0 else 0))
                think = 0.0 if turn == 0 else max(0.0, draw_value(load["think_time_s"], rng))
                turns.think_s.append(round(think, 6))
            if session < warm:
                warm_requests += count
        offsets = None
        if rate is not None:
            schedule = random.Random(f"{seed}:schedule:{pid}")
            starts = []
            t = 0.0
            for _ in range(sessions):
                starts.append(round(t, 9))
                t += schedule.expovariate(rate)
            offsets = array("d", (starts[s] for s in turns.session))
        point = PlannedPoint(pid, index, warm_requests, drawn, offsets, concurrency=level,
                             rate=rate)
        point.conversation = turns
        points.append(point)
    return points
