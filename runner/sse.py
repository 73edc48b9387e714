"""Server-sent events, decoded incrementally from raw bytes (the client's hot path).

The decoder follows the WHATWG event-stream rules that matter for chat-completions streams:

- lines end in CRLF, LF or CR, and a CR at the very end of one read may be the first half of a
  CRLF split across two reads (it is held back until the next byte is known);
- a blank line ends an event; an event's `data:` lines are joined with "\\n";
- lines starting with ":" are comments (keep-alives) and are ignored, as are the other fields
  (`event:`, `id:`, `retry:`), which chat-completions streams do not rely on;
- an event may be split anywhere across reads, including inside a multi-byte UTF-8 character:
  bytes are split first and each finished event is decoded once, so no partial character is
  ever decoded.

Splitting works on bytes with `bytes.split`, which runs in C; the common case (whole events in
one read, LF line ends) costs one concatenation, one split and one decode per event.

Linear in the bytes read: an unfinished event's pieces are kept in a list and only the new
piece is searched for a blank line (plus the one byte where a blank line can straddle two
reads), so an endless event is never re-joined or re-scanned. One event may hold at most
`max_event_bytes`; past that `feed` raises `EventTooLarge`.
"""

from __future__ import annotations

_LF = b"\n"
_CR = b"\r"
_BLANK = b"\n\n"
DEFAULT_MAX_EVENT_BYTES = 4 * 1024 * 1024


class EventTooLarge(ValueError):
    """One SSE event grew past the decoder's cap."""


class SSEDecoder:
    """Feed raw bytes; get back the `data` payload of every event that finished.

    `close()` is called when the stream ends: an event whose lines all ended but whose closing
    blank line never came is still returned; a line cut off mid-way is dropped (it is what a
    connection dropped mid-stream leaves, and a half JSON object must not pass as an event).
    """

    __slots__ = ("_held_cr", "_parts", "_size", "_tail_lf", "max_event_bytes")

    def __init__(self, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> None:
        self._parts: list[bytes] = []  # the unfinished event, in pieces (never re-joined)
        self._size = 0
        self._held_cr = False
        self._tail_lf = False  # the unfinished event ends in LF: a leading LF completes it
        self.max_event_bytes = max_event_bytes

    def feed(self, data: bytes) -> list[str]:
        """The payloads of the events that `data` completes (maybe none)."""
        if self._held_cr:
            data = _CR + data
            self._held_cr = False
        if _CR in data:
            if data.endswith(_CR):
                data = data[:-1]
                self._held_cr = True
            data = data.replace(b"\r\n", _LF).replace(_CR, _LF)
        if not data:
            return []
        if _BLANK not in data and not (self._tail_lf and data[:1] == _LF):
            # A CR held back may have ended the blank line: the next feed or close decides.
            self._parts.append(data)
            self._size += len(data)
            self._tail_lf = data[-1:] == _LF
            if self._size > self.max_event_bytes:
                raise EventTooLarge(
                    f"one SSE event is over {self.max_event_bytes} bytes without a blank line"
                )
            return []
        if self._parts:
            self._parts.append(data)
            buf = b"".join(self._parts)  # one copy of a long event, not two
        else:
            buf = data
        blocks = buf.split(_BLANK)
        rest = blocks.pop()
        self._parts = [rest] if rest else []
        self._size = len(rest)
        self._tail_lf = rest[-1:] == _LF
        out: list[str] = []
        for block in blocks:
            if len(block) > self.max_event_bytes:
                raise EventTooLarge(f"one SSE event is over {self.max_event_bytes} bytes")
            payload = _event_data(block)
            if payload is not None:
                out.append(payload)
        return out

    @property
    def pending_bytes(self) -> int:
        """Bytes of the unfinished event held until its blank line comes."""
        return self._size

    def close(self) -> list[str]:
        """Payloads still pending when the stream ends (see the class docstring)."""
        buf = b"".join(self._parts)
        if self._held_cr:
            buf += _LF
            self._held_cr = False
        self._parts = []
        self._size = 0
        self._tail_lf = False
        out: list[str] = []
        blocks = buf.split(_BLANK)
        last = blocks.pop()
        for block in blocks:
            payload = _event_data(block)
            if payload is not None:
                out.append(payload)
        if last.endswith(_LF):
            payload = _event_data(last[:-1])
            if payload is not None:
                out.append(payload)
        return out


def _event_data(block: bytes) -> str | None:
    """The joined `data` of one event's lines, or None when it has no data line."""
    if block.startswith(b"data: ") and _LF not in block:
        # The common case: one `data: ...` line.
        return block[6:].decode("utf-8", "replace")
    parts: list[bytes] = []
    for line in block.split(_LF):
        if not line or line.startswith(b":"):
            continue
        name, colon, value = line.partition(b":")
        if name != b"data":
            continue
        if colon and value.startswith(b" "):
            value = value[1:]
        parts.append(value)
    if not parts:
        return None
    return b"\n".join(parts).decode("utf-8", "replace")
