"""One trial of one task: the multi-turn tool-calling loop against the endpoint.

Request, assemble, classify, run the valid calls through the tools, send invalid ones back as
tool errors, and go on until a reply without calls ends the last user turn, or `max_steps`, or
`max_tool_errors`. Every request is journaled with its tag and cost; the trial ends as one
`TrialRecord`, which is also journaled (that line is what `--resume` skips on).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Mapping
from typing import Any, Protocol

from epbench.core.cost_ledger import CostLedger, tag_after
from epbench.core.journal_records import AgenticRequestLine
from epbench.core.trial_record import TrialRecord, traceback_summary
from epbench.runner.agentic.assemble import AssembledMessage, assemble
from epbench.runner.agentic.checks import Observed, ObservedCall, call_matches, evaluate
from epbench.runner.agentic.classify import ClassifiedCall, Classifier
from epbench.runner.agentic.model import Task, Workload
from epbench.runner.agentic.tools import ToolBox, ToolResult, error_content
from epbench.runner.retry import AGENTIC_RETRYABLE, send_with_retries

_clock = time.perf_counter_ns


class ChatClient(Protocol):
    async def chat(
        self, body: dict[str, Any], keep_chunks: bool = False, request_id: str | None = None
    ) -> Any: ...


class JournalLike(Protocol):
    def append(self, record: Mapping[str, Any]) -> None: ...


TOKEN_DETAIL = (("cached_input", "cache_read_tokens"), ("cache_write", "cache_write_tokens"),
                ("reasoning", "reasoning_tokens"))


def add_token_detail(into: dict[str, int], res: Any) -> None:
    """Add a response's cache and reasoning counts, where its usage reported them."""
    for key, attr in TOKEN_DETAIL:
        value = getattr(res, attr, None)
        if isinstance(value, int):
            into[key] = into.get(key, 0) + value


class TrialRun:
    """Runs one trial; `await run()` returns its record."""

    def __init__(
        self,
        *,
        workload: Workload,
        task: Task,
        trial: int,
        client: ChatClient,
        journal: JournalLike,
        card: dict[str, Any] | None,
        model: str,
        run_seed: int,
        level: int | None = None,
    ) -> None:
        workload = workload.for_task(task)
        self.level = level
        self.wl, self.task, self.trial = workload, task, trial
        self.params = {t.name: t.parameters for t in workload.tools}
        self.client, self.journal, self.model = client, journal, model
        self.ledger = CostLedger(card)
        self.box = ToolBox(workload, run_seed=run_seed, task=task.id, trial=trial)
        numbers = itertools.count(1)
        self.classifier = Classifier(workload.tools, lambda: f"call_eb{trial}x{next(numbers)}")
        self.rec = TrialRecord(task=task.id, trial=trial, result="failed", level=level)
        self.observed = Observed()
        self.model_ns = 0
        self.tool_ns = 0
        self.backoff_s = 0.0
        self.productive_tokens: list[int] = []

    # -- the loop ---------------------------------------------------------------------------

    async def run(self) -> TrialRecord:
        start = _clock()
        try:
            self.rec.result = await self._loop()
        except Exception as exc:  # a bug in the harness: a failed trial, listed, never hidden
            self.rec.result = "harness_fault"
            self.rec.harness_fault = f"{type(exc).__name__}: {exc}"[:1000]
            self.rec.harness_traceback = traceback_summary(exc)
        wall_ns = _clock() - start
        rec = self.rec
        rec.wall_ms = wall_ns / 1e6
        rec.overhead_ms = max(
            0.0, (wall_ns - self.model_ns - self.tool_ns) / 1e6 - self.backoff_s * 1000
        )
        rec.costs = self.ledger.to_dict()
        rec.usd = self.ledger.total_usd()
        r = len(self.task.reference)
        rec.reference_tokens = sum(self.productive_tokens[:r]) if self.productive_tokens else None
        self.journal.append(rec.journal_line())
        return rec

    async def _loop(self) -> str:
        wl, task = self.wl, self.task
        messages: list[dict[str, Any]] = []
        if wl.system_prompt:
            messages.append({"role": "system", "content": wl.system_prompt})
        messages += [dict(m) for m in task.history]
        messages.append({"role": "user", "content": task.conversation[0]})
        turn, tool_errors, tag = 0, 0, "productive"
        while True:
            if self.rec.steps >= wl.limits.max_steps:
                return self._finish(
                    "max_steps", [f"max_steps: stopped after {self.rec.steps} steps"]
                )
            self.rec.steps += 1
            got = await self._send(self._body(messages), tag)
            if got is None:
                return self._finish("endpoint_error", [self._endpoint_error])
            msg, classified = got
            if not msg.calls:
                self.observed.replies.append(msg.content)
                messages.append({"role": "assistant", "content": msg.content})
                turn += 1
                if turn < len(task.conversation):
                    messages.append({"role": "user", "content": task.conversation[turn]})
                    tag = "productive"
                    continue
                return self._finish("success", [])
            invalid, faults = await self._answer_calls(messages, msg, classified)
            tool_errors += invalid + faults
            tag = tag_after(invalid, faults)
            if tool_errors > wl.limits.max_tool_errors:
                return self._finish(
                    "max_tool_errors", [f"max_tool_errors: {tool_errors} tool errors"]
                )

    def _finish(self, result: str, reasons: list[str]) -> str:
        self.observed.state = self.box.state
        failed = evaluate(self.task.checks, self.observed, self.params)
        self.rec.failed_checks = reasons + failed
        if result == "success":
            return "failed" if failed else "success"
        return result

    def _body(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        s = self.wl.settings
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "tools": [t.openai_spec() for t in self.wl.tools],
            "stream": s.stream,
        }
        if not self.wl.tools:  # a task that offers no tools: an empty list is refused by some
            del body["tools"]
        for key in ("temperature", "max_tokens", "tool_choice", "parallel_tool_calls"):
            value = s.tool_choice_at(self.rec.steps) if key == "tool_choice" else getattr(s, key)
            if value is not None and (self.wl.tools or key in {"temperature", "max_tokens"}):
                body[key] = value
        return json.loads(json.dumps(body))  # a snapshot: later turns must not change a sent body

    # -- one request, with transport retries -------------------------------------------------

    _endpoint_error = ""

    async def _send(
        self, body: dict[str, Any], tag: str
    ) -> tuple[AssembledMessage, list[ClassifiedCall]] | None:
        """One request, with transport retries (epbench.runner.retry, AGENTIC_RETRYABLE); None when
        the endpoint failed it for good."""
        last: list[tuple[AssembledMessage, list[ClassifiedCall]]] = []

        def account(res: Any, attempt: int, backoff: float) -> None:
            last[:] = [self._account(res, tag if attempt == 1 else "transport", attempt - 1,
                                     backoff)]

        # each attempt carries its journal line's id, so the server's own log joins the journal
        attempts = itertools.count()
        retried = await send_with_retries(
            lambda: self.client.chat(body, keep_chunks=True,
                                     request_id=self._request_id(next(attempts))),
            self.wl.limits.retry,
            AGENTIC_RETRYABLE,
            account,
        )
        self.backoff_s += retried.backoff_s
        res = retried.answer
        if res.error_class is not None:
            self._endpoint_error = f"endpoint: {res.error_class}: {(res.error or '')[:200]}"
            return None
        msg, classified = last[0]
        if msg.calls and msg.first_tool_ns is not None and msg.last_tool_ns is not None:
            self.rec.first_tool_delta_ms.append((msg.first_tool_ns - res.t_send_ns) / 1e6)
            self.rec.decision_ms.append((msg.last_tool_ns - res.t_send_ns) / 1e6)
        return msg, classified

    def _account(
        self, res: Any, tag: str, attempt: int, backoff: float
    ) -> tuple[AssembledMessage, list[ClassifiedCall]]:
        """Count, price and journal one attempt; its assembled message and classified calls."""
        elapsed_s = max(0, res.t_done_ns - res.t_send_ns) / 1e9
        self.model_ns += max(0, res.t_done_ns - res.t_send_ns)
        msg = assemble(res.chunks) if res.chunks else AssembledMessage()
        failed = res.error_class is not None
        if failed:
            classified: list[ClassifiedCall] = []
            self.rec.calls["stream_truncated"] += len(msg.calls)
            self.rec.errors[res.error_class] = self.rec.errors.get(res.error_class, 0) + 1
        else:
            classified = self.classifier.classify(
                msg.calls, cut=False, length=self._at_limit(msg, res)
            )
            for c in classified:
                self.rec.calls[c.cls] += 1
        tokens_in, tokens_out = int(res.input_tokens or 0), int(res.output_tokens or 0)
        usd = self.ledger.add(
            tag, tokens_in, tokens_out, elapsed_s + backoff,
            cached_input_tokens=int(getattr(res, "cache_read_tokens", None) or 0),
            cache_write_tokens=int(getattr(res, "cache_write_tokens", None) or 0),
            reasoning_tokens=int(getattr(res, "reasoning_tokens", None) or 0),
        )
        self.rec.requests += 1
        self.rec.input_tokens += tokens_in
        self.rec.output_tokens += tokens_out
        add_token_detail(self.rec.token_detail, res)
        if tag == "productive" and not failed:
            self.productive_tokens.append(tokens_in + tokens_out)
        self._journal_request(res, msg, classified, tag, attempt, backoff, usd, failed)
        return msg, classified

    def _at_limit(self, msg: AssembledMessage, res: Any) -> bool:
        """Stopped by max_tokens: said so, or (servers that report `tool_calls` for a forced
        call cut short, as llama-cpp-python does) as many tokens as the limit allows. Counted
        chunks qualify too: every counted chunk carries at least one token."""
        if msg.finish_reason == "length":
            return True
        limit = self.wl.settings.max_tokens
        return limit is not None and (res.output_tokens or 0) >= limit

    def _request_id(self, attempt: int) -> str:
        """The id of this step's attempt (0-based): in the journal line and the request header."""
        level = "" if self.level is None else f"L{self.level}-"
        return f"{level}{self.task.id}-t{self.trial}-s{self.rec.steps}-a{attempt}"

    def _journal_request(
        self,
        res: Any,
        msg: AssembledMessage,
        classified: list[ClassifiedCall],
        tag: str,
        attempt: int,
        backoff: float,
        usd: float | None,
        failed: bool,
    ) -> None:
        counts: dict[str, int] = {}
        for c in classified:
            counts[c.cls] = counts.get(c.cls, 0) + 1
        if failed and msg.calls:
            counts["stream_truncated"] = len(msg.calls)
        line: AgenticRequestLine = {
            "type": "request",
            "request_id": self._request_id(attempt),
            "task": self.task.id,
            "trial": self.trial,
            "step": self.rec.steps,
            "attempt": attempt,
            "tag": tag,
            "t_send_ns": res.t_send_ns,
            "t_first_ns": res.t_first_ns,
            "t_first_answer_ns": getattr(res, "t_first_answer_ns", None),
            "t_last_ns": res.t_last_ns,
            "t_done_ns": res.t_done_ns,
            "t_first_tool_ns": msg.first_tool_ns,
            "t_last_tool_ns": msg.last_tool_ns,
            "input_tokens": res.input_tokens,
            "input_source": getattr(res, "input_source", None) or "none",
            "output_tokens": res.output_tokens,
            "token_source": res.token_source,
            "reasoning_tokens": getattr(res, "reasoning_tokens", None),
            "cache_read_tokens": getattr(res, "cache_read_tokens", None),
            "cache_write_tokens": getattr(res, "cache_write_tokens", None),
            # streamed evidence (epbench.core.journal_lines.STREAMED_FIELDS)
            "content_bytes": getattr(res, "content_bytes", 0),
            "tool_calls": getattr(res, "tool_calls", 0),
            "sse_events": getattr(res, "sse_events", 0),
            "status": res.status,
            "class": res.error_class or "ok",
            "error": res.error,
            "backoff_s": round(backoff, 6),
            "usd": usd,
            "calls": counts,
            "quirks": sorted(msg.quirks),
            "finish_reason": msg.finish_reason,
            # the server's side (epcore/server_evidence.py), as on serving lines
            "response_id": getattr(res, "response_id", None),
            "server_headers": getattr(res, "server_headers", None) or {},
        }
        if self.level is not None:
            line["level"] = self.level
        self.journal.append(line)

    # -- tools -------------------------------------------------------------------------------

    async def _answer_calls(
        self,
        messages: list[dict[str, Any]],
        msg: AssembledMessage,
        classified: list[ClassifiedCall],
    ) -> tuple[int, int]:
        """Append the assistant turn and one tool message per call; (invalid calls, faults)."""
        messages.append(
            {
                "role": "assistant",
                "content": msg.content or "",  # not null: llama-cpp-python rejects a null content
                "tool_calls": [
                    {
                        "id": c.call_id,
                        "type": "function",
                        "function": {
                            "name": c.name,
                            "arguments": c.arguments_text if c.arguments is not None else "{}",
                        },
                    }
                    for c in classified
                ],
            }
        )
        results: dict[int, ToolResult] = {}
        for i, call in enumerate(classified):
            observed = ObservedCall(call.name, call.arguments, call.cls)
            self.observed.calls.append(observed)
            if call.executable and call.arguments is not None:
                result = self.box.call(call.name, call.arguments)
                observed.faulted = result.fault is not None
                results[i] = result
                if (
                    any(
                        call_matches(
                            e,
                            call.name,
                            call.arguments,
                            self.task.checks.match,
                            self.params.get(call.name),
                        )
                        for e in self.task.checks.calls
                    )
                    and call.cls == "ok"
                ):
                    self.rec.correct_calls += 1
        await self._wait_tools([r.latency_s for r in results.values()])
        invalid = faults = 0
        for i, call in enumerate(classified):
            if i in results:
                content = results[i].content
                faults += results[i].fault is not None
            else:
                invalid += 1
                shown = call.arguments_text[:200]
                content = error_content(
                    "invalid_call",
                    f"{call.problem}. Received arguments: {shown!r}. "
                    "Call the tool again, correctly.",
                )
            messages.append({"role": "tool", "tool_call_id": call.call_id, "content": content})
        return invalid, faults

    async def _wait_tools(self, latencies: list[float]) -> None:
        """The calls of one step run at once: each takes its seeded latency."""
        if not latencies:
            return
        start = _clock()

        async def one(seconds: float) -> float:
            await asyncio.sleep(seconds)
            return (_clock() - start) / 1e6

        measured = await asyncio.gather(*(one(s) for s in latencies))
        self.rec.tool_ms.extend(measured)
        if self.level is not None:
            pairs = zip(measured, latencies, strict=True)
            self.rec.tool_lag_ms.extend(round(max(0.0, ms - s * 1e3), 6) for ms, s in pairs)
        self.tool_ns += _clock() - start
