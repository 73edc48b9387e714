"""Conversation points: sessions of several turns, each turn sending the whole history.

A session's turn `t` sends the system prompt (when the workload has one), then every earlier
exchange of the session that succeeded (its user message and the text the endpoint streamed
back for it), then the turn's new user message (seeded words, epbench.runner.prompts). A failed
turn's exchange is left out of the later history, as a chat product shows an error and the
user types again; the session goes on. Before each turn after the first, the session waits
its planned think time after the previous answer ended.

    closed loop (concurrency c)   warm-up sessions first (at most c at once, to completion),
                                  then c workers share the measured sessions
    open loop (session rate)      each session starts at its planned offset whether or not
                                  earlier ones ended; a turn's `t_scheduled_ns` is the
                                  session's start (turn 0) or the previous answer's end plus
                                  the think time

Texts never reach the journal: each request line carries the session, the turn, the history
it sent (`history_messages`, `history_chars`), the new message's characters and the answer's
characters. The answers themselves go to `answers.jsonl` in the run folder (written before
the request line, through a Journal, so secrets are redacted) and are read back only by
`--resume`: a half-finished session continues with its next turn, the history rebuilt from
the plan's messages and the stored answers; that turn is sent at once (open loop: at its
session's start, shifted as every remaining session's is), since the pause was longer than its
think time. runner/DESIGN.md has the choice.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from epbench.core.errors import RunError
from epbench.core.journal_file import Journal
from epbench.core.journal_records import ConversationLine
from epbench.runner.agentic.assemble import assemble
from epbench.runner.client import ChatResponse
from epbench.runner.plan import PlannedRequest, PointPlan
from epbench.runner.progress import PointProgress
from epbench.runner.retry import SERVING_RETRYABLE, send_with_retries
from epbench.runner.run_folder import ANSWERS_FILE
from epbench.runner.runner import ServingRunner, make_record, request_body

_clock = time.perf_counter_ns
_LEAD_NS = 20_000_000  # the first session starts 20 ms out, so the loop can set up

Session = list[PlannedRequest]


def sessions_of(point: PointPlan) -> list[Session]:
    """The point's requests grouped by session, in plan order."""
    out: dict[int, Session] = {}
    for req in point.requests:
        out.setdefault(int(req.session or 0), []).append(req)
    return list(out.values())


def stored_answers(run_dir: Any) -> dict[str, str]:
    """request id -> the answer text `answers.jsonl` holds (the last one written wins)."""
    return {str(r["request_id"]): str(r.get("text", ""))
            for r in Journal.read(run_dir / ANSWERS_FILE) if "request_id" in r}


class ConversationRunner:
    """Runs the conversation points of a plan with a ServingRunner's context, workload,
    calibration and retry policy; `secrets` are redacted from the stored answers."""

    def __init__(self, serving: ServingRunner, secrets: tuple[str, ...] = ()) -> None:
        self.serving = serving
        self.secrets = secrets
        self.ctx = serving.ctx
        self.done = {r["request_id"]: r for r in self.ctx.resume_records if "request_id" in r}
        self.answers = stored_answers(self.ctx.run_dir) if self.done else {}

    async def run(self, points: list[PointPlan]) -> None:
        with Journal(self.ctx.run_dir / ANSWERS_FILE, self.secrets) as store:
            self.store = store
            for point in points:
                await self._point(point)

    async def _point(self, point: PointPlan) -> None:
        sessions = [s for s in sessions_of(point)
                    if any(r.request_id not in self.done for r in s)]
        if not sessions:
            return
        pending = sum(1 for s in sessions for r in s if r.request_id not in self.done)
        bar = PointProgress(f"{self.serving.workload.id} {point.id}", len(point.requests),
                            self.ctx.progress, done_before=len(point.requests) - pending)
        try:
            if point.concurrency is not None:
                warm = [s for s in sessions if s[0].warmup]
                measured = [s for s in sessions if not s[0].warmup]
                for batch in (warm, measured):
                    await _workers(batch, point.concurrency,
                                   lambda s: self._session(s, None, bar))
            else:
                await self._open_loop(sessions, bar)
        finally:
            bar.close()

    async def _open_loop(self, sessions: list[Session], bar: PointProgress) -> None:
        firsts = [next(r for r in s if r.request_id not in self.done) for s in sessions]
        shift = min(float(r.offset_s or 0.0) for r in firsts)
        t0 = _clock() + _LEAD_NS
        tasks = []
        try:
            for session, first in sorted(zip(sessions, firsts, strict=True),
                                         key=lambda pair: float(pair[1].offset_s or 0.0)):
                target = t0 + round((float(first.offset_s or 0.0) - shift) * 1e9)
                await _until(target)
                tasks.append(asyncio.create_task(self._session(session, target, bar)))
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()

    def _history(self, session: Session) -> tuple[list[dict[str, str]], list[PlannedRequest]]:
        """(the exchanges of the session's journaled turns that succeeded, the turns left)."""
        history: list[dict[str, str]] = []
        left = []
        for req in session:
            record = self.done.get(req.request_id)
            if record is None:
                left.append(req)
                continue
            if record.get("class") != "ok":
                continue
            if req.request_id not in self.answers:
                raise RunError(
                    f"{self.ctx.run_dir / ANSWERS_FILE}: no answer for {req.request_id}, a turn "
                    f"the journal has; the session cannot go on with the history it had"
                )
            history += [self._user(req), {"role": "assistant",
                                          "content": self.answers[req.request_id]}]
        return history, left

    def _user(self, req: PlannedRequest) -> dict[str, str]:
        body = request_body(self.serving.workload, self.ctx.endpoint, req,
                            self.serving.calibration)
        return dict(body["messages"][-1])

    async def _session(self, session: Session, t_start: int | None,
                       bar: PointProgress) -> None:
        history, left = self._history(session)
        t_done: int | None = None
        for req in left:
            # the session's start (open loop), else the previous answer's end + think time
            if t_done is None:
                target = t_start
            else:
                target = t_done + round(float(req.think_s or 0.0) * 1e9)
            if target is not None:
                await _until(target)
            body = request_body(self.serving.workload, self.ctx.endpoint, req,
                                self.serving.calibration)
            system, user = body["messages"][:-1], body["messages"][-1]
            body["messages"] = [*system, *history, user]
            res, attempts, retry_s, retry_tokens = await self._send(body, req.request_id)
            answer = assemble(res.chunks).content if res.ok else ""
            res.chunks = []
            if res.ok:
                self.store.append({"request_id": req.request_id, "text": answer})
            scheduled = target if t_start is not None else None
            record: ConversationLine = {
                **make_record(req, res, scheduled, attempts, retry_s, retry_tokens),
                "session": int(req.session or 0), "turn": int(req.turn or 0),
                "history_messages": len(history),
                "history_chars": sum(len(m["content"]) for m in history),
                "message_chars": len(user["content"]), "answer_chars": len(answer),
            }
            self.ctx.journal.append(record)
            self.serving.sent += 1
            bar.update(record)
            if res.ok:
                history += [user, {"role": "assistant", "content": answer}]
            t_done = res.t_done_ns

    async def _send(self, body: dict[str, Any],
                    request_id: str) -> tuple[ChatResponse, int, float, int]:
        sends: list[ChatResponse] = []
        retried = await send_with_retries(
            lambda: self.ctx.client.chat(body, keep_chunks=True, request_id=request_id),
            self.serving.retry, SERVING_RETRYABLE,
            lambda res, _attempt, _backoff: sends.append(res),
        )
        res, attempts = retried.answer, retried.attempts
        retry_tokens = sum(r.output_tokens or 0 for r in sends[:-1])
        retry_s = (res.t_send_ns - sends[0].t_send_ns) / 1e9 if attempts > 1 else 0.0
        return res, attempts, retry_s, retry_tokens


async def _until(target_ns: int) -> None:
    """Sleep until the clock reaches `target_ns`: the loop may wake a timer up to its clock
    resolution early, and a turn sent before its planned instant would show a negative
    schedule delay."""
    while (delay := target_ns - _clock()) > 0:
        await asyncio.sleep(delay / 1e9)


async def _workers(items: list[Session], count: int,
                   run: Callable[[Session], Awaitable[None]]) -> None:
    """`count` workers sharing the sessions in order, each starting its next when its last
    one ended."""
    iterator = iter(items)

    async def worker() -> None:
        for item in iterator:
            await run(item)

    await asyncio.gather(*(worker() for _ in range(min(count, len(items)))))
