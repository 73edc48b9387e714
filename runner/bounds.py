"""Bounds on everything an endpoint sends: time, header bytes, event bytes, body bytes.

An endpoint is untrusted: it may stream forever, trickle one byte a second, send endless
headers or a 2 GB body. Every request is held to these bounds, and each violation ends it
at once in one error class (epcore/metrics/errors.py):

    bound               default          class when exceeded
    timeout_s           the workload's   deadline   the whole request, send to last byte
    idle_timeout_s      min(60, timeout) timeout    silence between two reads
    max_header_bytes    64 KiB           too_large  status line plus headers
    max_event_bytes     4 MiB            too_large  one SSE event (no blank line yet)
    max_json_bytes      32 MiB           too_large  one non-streamed JSON body
    max_response_bytes  256 MiB          too_large  one whole response body
    max_message_bytes   16 MiB           too_large  the events an agentic run keeps to
                                                    assemble its message
    in-flight budget    512 MiB          too_large  what all responses of one client hold
                        (INFLIGHT_BYTES)            at once (see `ByteBudget`)

A workload overrides any of them in its `bounds` block (schemas/*-workload.schema.json);
the endpoint file's `request.timeout_s` wins over the workload's `timeout_s` (the in-flight
budget is the client's, not a workload's: it bounds the process, whatever the workload asks).
The bounds are
API-neutral: they sit in the transport, the SSE decoder and the client, under whatever parses
an API's stream.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import httpx

IDLE_TIMEOUT_CAP_S = 60.0
INFLIGHT_BYTES = 512 * 1024 * 1024


class TooLarge(httpx.TransportError):
    """The endpoint sent more than a bound allows (class `too_large`)."""


class ProtocolViolation(httpx.RemoteProtocolError):
    """The bytes are not an HTTP response (class `protocol`)."""


@dataclass(frozen=True)
class Bounds:
    """The limits one request is held to (see the module docstring for the defaults)."""

    timeout_s: float = 120.0
    idle_timeout_s: float | None = None  # None: min(IDLE_TIMEOUT_CAP_S, timeout_s)
    max_header_bytes: int = 64 * 1024
    max_event_bytes: int = 4 * 1024 * 1024
    max_json_bytes: int = 32 * 1024 * 1024
    max_response_bytes: int = 256 * 1024 * 1024
    max_message_bytes: int = 16 * 1024 * 1024

    @property
    def idle_s(self) -> float:
        """The idle timeout in force: the set one, else min(60 s, timeout_s)."""
        if self.idle_timeout_s is not None:
            return min(self.idle_timeout_s, self.timeout_s)
        return min(IDLE_TIMEOUT_CAP_S, self.timeout_s)

    def with_block(self, block: dict[str, Any] | None) -> Bounds:
        """These bounds with the fields a workload's `bounds` block sets."""
        block = block or {}
        fields = {k: block[k] for k in self.__dataclass_fields__ if k in block}
        return replace(self, **fields)

    def to_json(self) -> dict[str, Any]:
        """The bounds in force, as the result's `settings.bounds` records them."""
        return {
            "timeout_s": self.timeout_s,
            "idle_timeout_s": self.idle_s,
            "max_header_bytes": self.max_header_bytes,
            "max_event_bytes": self.max_event_bytes,
            "max_json_bytes": self.max_json_bytes,
            "max_response_bytes": self.max_response_bytes,
            "max_message_bytes": self.max_message_bytes,
        }


class ByteBudget:
    """The bytes all responses in flight may hold at once, shared by one client.

    The per-request caps bound one response; 64 responses each under them could still hold
    64 times as much (64 unfinished 4 MiB events, 64 JSON bodies of 32 MiB). Each response
    takes a `Share` and resizes it to what it holds between reads: the unfinished SSE event,
    the payloads waiting to be parsed, the events kept for an agentic message, a JSON body
    being read. A share that would take the budget past its total fails that response as
    `too_large`, and its bytes go back when the response ends. One event loop thread owns
    the client, so no lock is needed.
    """

    __slots__ = ("held", "total")

    def __init__(self, total: int = INFLIGHT_BYTES) -> None:
        self.total = total
        self.held = 0

    def share(self) -> Share:
        return Share(self)


class Share:
    """One response's part of a `ByteBudget`."""

    __slots__ = ("budget", "held")

    def __init__(self, budget: ByteBudget) -> None:
        self.budget = budget
        self.held = 0

    def hold(self, size: int) -> None:
        """Hold `size` bytes from now on (more or fewer than before); TooLarge when the
        budget cannot cover the growth."""
        budget = self.budget
        grow = size - self.held
        if grow > 0 and budget.held + grow > budget.total:
            raise TooLarge(
                f"the responses in flight would hold over {budget.total} bytes, the client's "
                f"memory budget (this one {size} bytes)"
            )
        budget.held += grow
        self.held = size

    def release(self) -> None:
        """Give every held byte back (the response ended)."""
        self.budget.held -= self.held
        self.held = 0
