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

A workload overrides any of them in its `bounds` block (schemas/*-workload.schema.json);
the endpoint file's `request.timeout_s` wins over the workload's `timeout_s`. The bounds are
API-neutral: they sit in the transport, the SSE decoder and the client, under whatever parses
an API's stream.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import httpx

IDLE_TIMEOUT_CAP_S = 60.0


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
