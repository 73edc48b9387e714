"""A loopback endpoint that lies in its streams, one lie per URL prefix (`/<case>/v1/...`).

Issue 21's endpoint attacks, each next to the honest stream it imitates; the request id
header's number picks which of a run's requests get the lie (`every`), so a run keeps honest
requests, validates, and shows what became of the lying ones:

    split-payload       chat: values split across SSE events (`{"type":"ping","x":[0` then
                        `0]}`) sent at once, the real tokens after an honest delay, and one last
                        payload holding enough values to even the count: joined into one JSON
                        array, the real tokens took the early events' arrival times
    usage-lie           Messages: two text deltas, then `usage.output_tokens` 1,000,000 (or -5
                        on every other lying request)
    held-open           Messages: an honest stream, then the connection stays open after
                        message_stop (no end of the chunked body) for HOLD_S
    held-open-responses Responses: the same after response.completed
    text-before-start   Messages: a text delta before message_start, then an honest stream

Every connection serves requests until the client closes it (keep-alive); `GET /v1/models`
is a 404 (the preflight accepts that) and the preflight's own probe gets a plain answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import threading
from collections.abc import Iterator
from typing import Any

DELAY_S = 0.3  # the honest time to first token
GAP_S = 0.005
TOKENS = 8
HOLD_S = 60.0
HEAD = (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
        b"transfer-encoding: chunked\r\n\r\n")
Writer = asyncio.StreamWriter


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def _event(payload: Any, name: str | None = None) -> bytes:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    head = f"event: {name}\n" if name else ""
    return _chunk(f"{head}data: {text}\n\n".encode())


def _chat(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def _typed(kind: str, **fields: Any) -> bytes:
    return _event({"type": kind, **fields}, kind)


def _start(output_tokens: int = 1) -> bytes:
    return _typed("message_start", message={
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
        "usage": {"input_tokens": 10, "output_tokens": output_tokens}})


def _text(text: str) -> bytes:
    return _typed("content_block_delta", index=0, delta={"type": "text_delta", "text": text})


async def _messages(w: Writer, output_tokens: int, texts: int, before: bytes = b"") -> None:
    """A Messages stream: `texts` text deltas, then usage `output_tokens`."""
    w.write(HEAD + before + _start())
    await w.drain()
    await asyncio.sleep(DELAY_S)
    w.write(_typed("content_block_start", index=0, content_block={"type": "text", "text": ""}))
    for _ in range(texts):
        w.write(_text("tok "))
        await w.drain()
        await asyncio.sleep(GAP_S)
    w.write(_typed("content_block_stop", index=0)
            + _typed("message_delta", delta={"stop_reason": "max_tokens"},
                     usage={"output_tokens": output_tokens})
            + _typed("message_stop"))
    await w.drain()


async def _chat_stream(w: Writer, split: int) -> None:
    """A chat stream; with `split` > 0, that many split values first and the count evened."""
    w.write(HEAD + _event(_chat({"role": "assistant"})))
    for _ in range(split):
        w.write(_event('{"type":"ping","x":[0') + _event("0]}"))
    await w.drain()
    await asyncio.sleep(DELAY_S)
    for _ in range(TOKENS):
        w.write(_event(_chat({"content": "tok "})))
        await w.drain()
        await asyncio.sleep(GAP_S)
    usage = json.dumps({"choices": [], "usage": {"prompt_tokens": 10,
                                                 "completion_tokens": TOKENS}})
    tail = ",".join(['{"choices":[]}'] * split + [usage])
    w.write(_event(_chat({}, "length")) + _event(tail) + _event("[DONE]"))
    await w.drain()


async def _responses(w: Writer) -> None:
    w.write(HEAD + _typed("response.created", response={"id": "resp_1", "status": "in_progress"}))
    await w.drain()
    await asyncio.sleep(DELAY_S)
    for _ in range(TOKENS):
        w.write(_typed("response.output_text.delta", output_index=0, delta="tok "))
        await w.drain()
        await asyncio.sleep(GAP_S)
    w.write(_typed("response.completed", response={
        "id": "resp_1", "status": "completed",
        "usage": {"input_tokens": 10, "output_tokens": TOKENS}}))
    await w.drain()


async def _answer(case: str, number: int, w: Writer) -> bool:
    """Write one answer; False when the connection is to be held (no end of body)."""
    lying = number % 2 == 1
    if case == "split-payload":
        await _chat_stream(w, split=TOKENS + 2 if lying else 0)
    elif case == "usage-lie":
        if lying:
            await _messages(w, 1_000_000 if number % 4 == 1 else -5, texts=2)
        else:
            await _messages(w, TOKENS, texts=TOKENS)
    elif case == "held-open":
        await _messages(w, TOKENS, texts=TOKENS)
        return False
    elif case == "held-open-responses":
        await _responses(w)
        return False
    elif case == "text-before-start":
        await _messages(w, TOKENS, texts=TOKENS, before=_text("early "))
    return True


PREFLIGHT = {
    "openai": {"choices": [{"index": 0, "message": {"role": "assistant", "content": "OK"},
                            "finish_reason": "length"}],
               "usage": {"prompt_tokens": 3, "completion_tokens": 1}},
    "anthropic": {"type": "message", "role": "assistant", "content": [{"type": "text",
                  "text": "OK"}], "stop_reason": "max_tokens",
                  "usage": {"input_tokens": 3, "output_tokens": 1}},
}


async def _handle(reader: asyncio.StreamReader, writer: Writer) -> None:
    try:
        while True:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
            length = int(re.search(r"(?im)^content-length:\s*(\d+)", head).group(1)) \
                if re.search(r"(?im)^content-length:", head) else 0
            await reader.readexactly(length)
            method, path = head.split(" ")[:2]
            request_id = re.search(r"(?im)^x-epbench-request-id:\s*(\S+)", head)
            rid = request_id.group(1) if request_id else ""
            case = path.strip("/").split("/")[0]
            if method != "POST":
                writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
            elif rid == "preflight":
                body = json.dumps(PREFLIGHT["openai" if case == "split-payload"
                                            else "anthropic"]).encode()
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                             b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
            else:
                digits = re.findall(r"\d+", rid)
                if not await _answer(case, int(digits[-1]) if digits else 0, writer):
                    await asyncio.sleep(HOLD_S)
                    return
                writer.write(b"0\r\n\r\n")
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError,
            asyncio.CancelledError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


@contextlib.contextmanager
def lying_endpoint() -> Iterator[int]:
    """Serve every case on one loopback port (in a thread); yield the port."""
    loop = asyncio.new_event_loop()
    started = threading.Event()
    holder: dict[str, int] = {}

    async def main() -> None:
        server = await asyncio.start_server(_handle, "127.0.0.1", 0)
        holder["port"] = server.sockets[0].getsockname()[1]
        started.set()
        async with server:
            await server.serve_forever()

    def run() -> None:
        with contextlib.suppress(asyncio.CancelledError):
            loop.run_until_complete(main())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert started.wait(10), "the lying endpoint did not start"
    try:
        yield holder["port"]
    finally:
        def stop() -> None:
            for task in asyncio.all_tasks(loop):
                task.cancel()

        loop.call_soon_threadsafe(stop)
        thread.join(10)
        loop.close()
