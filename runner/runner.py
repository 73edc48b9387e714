"""The serving runner: sends a plan's requests closed-loop or open-loop and journals each.

    closed loop (concurrency)  warm-up requests first (at most `c` at once, to completion),
                               then `c` workers share the measured requests: each sends its
                               next one as soon as its last one finished
    open loop (poisson, burst, one timeline per point (one for the whole burst): each request
               trace)          is started at t0 + its planned offset whether or not earlier
                               ones finished; `t_scheduled_ns` is that planned instant, so
                               schedule delay and latency from it are measured

`--resume` runs only the planned requests whose ids are not in the journal yet; open-loop
requests keep their planned spacing, shifted so the first one left starts at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from epbench.core.journal_records import RequestLine
from epbench.runner.calibrate import Calibration
from epbench.runner.client import ChatResponse
from epbench.runner.context import RunContext
from epbench.runner.plan import Plan, PlannedRequest, PointPlan
from epbench.runner.progress import PointProgress
from epbench.runner.prompts import messages
from epbench.runner.retry import SERVING_RETRYABLE, RetryPolicy, send_with_retries
from epbench.runner.trace_prompts import trace_prompt
from epbench.runner.workload import ServingWorkload

_clock = time.perf_counter_ns
_OPEN_LOOP_LEAD_NS = 20_000_000  # the first arrival is 20 ms out, so the loop can set up


def request_body(
    workload: ServingWorkload,
    endpoint: dict[str, Any],
    req: PlannedRequest,
    calibration: Calibration | None = None,
) -> dict[str, Any]:
    """The chat-shaped body for one planned request (the endpoint's API translates it), its
    length fitted to the endpoint when a calibration is given, else one word per requested
    token."""
    model = endpoint.get("model") or {}
    fit = calibration or Calibration()
    words = fit.words_for(req.input_tokens)
    prefix = None
    shared = workload.prompts.get("shared_prefix")
    if shared and req.prefix:  # the planned length counts the prefix's tokens too
        prefix_words = fit.words_within(int(shared["tokens"]))
        prefix = (req.prefix, prefix_words)
        words = max(1, words - prefix_words)
    if req.hash_ids is not None:  # a Mooncake trace: the trace's prefix blocks
        chat = trace_messages(workload.seed, req, words, fit, workload.prompts.get("system_prompt"))
    else:
        chat = messages(workload.seed, req.request_id, words,
                        workload.prompts.get("system_prompt"), prefix)
    body: dict[str, Any] = {
        "model": model.get("name", "default"),
        "messages": chat,
        "max_tokens": req.max_tokens or workload.max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    for key in ("temperature", "top_p"):
        if key in workload.sampling:
            body[key] = workload.sampling[key]
    if workload.prompts.get("ignore_eos"):
        body["ignore_eos"] = True
    return body


def trace_messages(seed: int, req: PlannedRequest, words: int, fit: Calibration,
                   system_prompt: str | None) -> list[dict[str, str]]:
    """The chat messages of a Mooncake trace request (epbench.runner.trace_prompts)."""
    per_word = fit.tokens_per_word if fit.source == "usage" else 1.0
    overhead = fit.overhead_tokens if fit.source == "usage" else 0.0
    text = trace_prompt(seed, req.request_id, req.hash_ids or (), words, per_word, overhead)
    out = [{"role": "system", "content": system_prompt}] if system_prompt else []
    return [*out, {"role": "user", "content": text}]


def make_record(
    req: PlannedRequest,
    res: ChatResponse,
    t_scheduled_ns: int | None,
    attempts: int,
    retry_s: float,
    retry_tokens: int,
) -> RequestLine:
    """One journal line (epbench.core.journal_records.RequestLine).

    `input_tokens` is the endpoint's own count (`input_source: usage`) or null; the planned
    length is `input_requested` and is never written where a measured count belongs; a trace
    request's planned output length is `output_requested`."""
    record: RequestLine = {
        "request_id": req.request_id,
        "point": req.point,
        "seq": req.seq,
        "warmup": req.warmup,
        "t_scheduled_ns": t_scheduled_ns,
        "t_send_ns": res.t_send_ns,
        "t_first_ns": res.t_first_ns,
        "t_first_answer_ns": res.t_first_answer_ns,
        "t_last_ns": res.t_last_ns,
        "t_done_ns": res.t_done_ns,
        "input_tokens": res.input_tokens,
        "input_source": res.input_source or "planned",
        "input_requested": req.input_tokens,
        "output_tokens": res.output_tokens,
        "token_source": res.token_source,
        "reasoning_tokens": res.reasoning_tokens,
        "cache_read_tokens": res.cache_read_tokens,
        "cache_write_tokens": res.cache_write_tokens,
        "status": res.status,
        "class": res.error_class or "ok",
        "error": res.error,
        "itl_us": res.itl_us,
        "attempts": attempts,
        "retry_s": round(retry_s, 6),
        "retry_tokens": retry_tokens,
        # --- the server's side (epcore/server_evidence.py): its id, allow-listed headers ---
        "response_id": res.response_id,
        "server_headers": res.server_headers,
        # --- end of the server's side ---
        # streamed evidence (epbench.core.journal_lines.STREAMED_FIELDS; epbench.core.usage_bounds)
        "content_bytes": res.content_bytes,
        "tool_calls": res.tool_calls,
        "sse_events": res.sse_events,
    }
    if req.max_tokens is not None:
        record["output_requested"] = req.max_tokens
    return record


class ServingRunner:
    """Runs the selected points of a plan against the context's client."""

    def __init__(
        self,
        ctx: RunContext,
        workload: ServingWorkload,
        plan: Plan,
        calibration: Calibration | None = None,
    ) -> None:
        self.ctx = ctx
        self.workload = workload
        self.plan = plan
        self.calibration = calibration
        self.retry = RetryPolicy().with_block(workload.retry)
        self.done_ids = {r["request_id"] for r in ctx.resume_records if "request_id" in r}
        self.sent = 0  # records go to the journal only: memory does not grow with requests

    async def run(self) -> int:
        """Send every pending request of the selected points (each journaled as it finishes);
        how many were sent."""
        points = self.plan.selected()
        if self.plan.pattern == "burst":
            await self._open_loop(points, "burst")
        else:
            for point in points:
                if point.concurrency is not None:
                    await self._closed_loop(point)
                else:
                    await self._open_loop([point], point.id)
        return self.sent

    async def _one(
        self, req: PlannedRequest, t_scheduled_ns: int | None, bar: PointProgress,
        body: dict[str, Any] | None = None,
    ) -> None:
        if body is None:
            body = request_body(self.workload, self.ctx.endpoint, req, self.calibration)
        sends: list[ChatResponse] = []
        retried = await send_with_retries(
            lambda: self.ctx.client.chat(body, request_id=req.request_id),
            self.retry,
            SERVING_RETRYABLE,
            lambda res, _attempt, _backoff: sends.append(res),
        )
        res, attempts = retried.answer, retried.attempts
        retry_tokens = sum(r.output_tokens or 0 for r in sends[:-1])
        retry_s = (res.t_send_ns - sends[0].t_send_ns) / 1e9 if attempts > 1 else 0.0
        record = make_record(req, res, t_scheduled_ns, attempts, retry_s, retry_tokens)
        self.ctx.journal.append(record)
        self.sent += 1
        bar.update(record)

    def _pending(self, point: PointPlan) -> list[PlannedRequest]:
        return [r for r in point.requests if r.request_id not in self.done_ids]

    async def _closed_loop(self, point: PointPlan) -> None:
        pending = self._pending(point)
        if not pending:
            return
        bar = PointProgress(f"{self.workload.id} {point.id}", len(point.requests),
                            self.ctx.progress, done_before=len(point.requests) - len(pending))
        try:
            warm = [r for r in pending if r.warmup]
            measured = [r for r in pending if not r.warmup]
            assert point.concurrency is not None
            for batch in (warm, measured):
                await _workers(batch, point.concurrency, lambda r: self._one(r, None, bar))
        finally:
            bar.close()

    async def _open_loop(self, points: list[PointPlan], label: str) -> None:
        pending = sorted(
            (r for p in points for r in self._pending(p)), key=lambda r: r.offset_s or 0.0
        )
        if not pending:
            return
        planned = sum(len(p.requests) for p in points)
        bar = PointProgress(f"{self.workload.id} {label}", planned, self.ctx.progress,
                            done_before=planned - len(pending))
        shift = pending[0].offset_s or 0.0
        t0 = _clock() + _OPEN_LOOP_LEAD_NS
        tasks = []
        try:
            for req in pending:
                target = t0 + round(((req.offset_s or 0.0) - shift) * 1e9)
                # Built before its instant: the lag a request shows is the loop's, not the
                # time its prompt took to write (a 4k-token prompt is ~0.5 ms of words).
                body = request_body(self.workload, self.ctx.endpoint, req, self.calibration)
                await _sleep_until(target)
                tasks.append(asyncio.create_task(self._one(req, target, bar, body)))
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            bar.close()


async def _sleep_until(target_ns: int) -> None:
    """Return at `target_ns` (perf_counter_ns) or after, never before. uvloop's timers count
    whole milliseconds and fire up to about one early; a timer that fired early is made up by
    yielding to the loop (events and all) until the instant. Waking early on purpose and
    yielding the rest would trade a busy CPU (1.5 ms a request: most of a core at 500
    requests/s) for the half millisecond a timer fires late."""
    delay = target_ns - _clock()
    if delay > 0:
        await asyncio.sleep(delay / 1e9)
    while _clock() < target_ns:
        await asyncio.sleep(0)


async def _workers(
    items: list[PlannedRequest], count: int, send: Callable[[PlannedRequest], Awaitable[None]]
) -> None:
    """`count` workers sharing `items` in order, each sending its next when its last is done."""
    iterator = iter(items)

    async def worker() -> None:
        for item in iterator:
            await send(item)

    await asyncio.gather(*(worker() for _ in range(min(count, len(items)))))
