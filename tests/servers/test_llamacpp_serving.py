"""epbench against a real inference server it did not write: llama.cpp (llama-cpp-python).

Two kinds of test:
- raw: what llama.cpp's OpenAI-compatible server really sends, asserted on captured bytes
  (role-only first chunk, empty-content chunks, the tool-call id on every chunk, arguments
  cut at max_tokens). If a future llama.cpp changes its streams, these say so.
- through epbench's runner (`epbench.runner.entry.run_command`): a short serving sweep whose result
  validates, where every request is classified, output tokens come from what the server
  reports, and TTFT is measured at the first content chunk, not at the role-only one (a
  loopback relay holds the role chunk back for a known time to make the difference visible).

The server runs from llama-cpp-python's own virtualenv (tests/server_envs.py, built once); when
it cannot be built or started these tests skip locally and fail under CI=true (`need()`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from epbench.core.schema import check_schema
from tests.llama_fixture import MODEL_NAME, llama_server

pytestmark = [pytest.mark.integration, pytest.mark.built_server("llama")]

ROLE_DELAY_S = 0.4
TOOLS = [{
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city", "days"],
        },
    },
}]


@pytest.fixture(scope="module")
def llama_url() -> Iterator[str]:
    with llama_server() as base_url:
        yield base_url


def sse_events(raw: bytes) -> list[Any]:
    """The data payloads of a captured SSE body, JSON-decoded except `[DONE]`."""
    text = raw.decode("utf-8").replace("\r\n", "\n")
    out: list[Any] = []
    for block in text.split("\n\n"):
        data = [line[5:].lstrip() for line in block.split("\n") if line.startswith("data:")]
        if not data:
            continue
        payload = "\n".join(data)
        out.append(payload if payload == "[DONE]" else json.loads(payload))
    return out


def capture(base_url: str, **body: Any) -> list[Any]:
    request = {"model": MODEL_NAME, "stream": True, "temperature": 0.0, **body}
    with httpx.stream("POST", f"{base_url}/chat/completions", json=request, timeout=60) as r:
        assert r.status_code == 200, r.read()
        assert r.headers["content-type"].startswith("text/event-stream")
        raw = b"".join(r.iter_raw())
    return sse_events(raw)


def deltas(events: list[Any]) -> list[dict[str, Any]]:
    return [e["choices"][0]["delta"] for e in events if isinstance(e, dict) and e["choices"]]


# ------------------------------------------------------------------ what llama.cpp really sends


SAY = [{"role": "user", "content": "Say something."}]
WEATHER = [{"role": "user", "content": "Weather in Paris for 3 days?"}]


def test_llama_cpp_opens_every_stream_with_a_role_only_chunk(llama_url: str) -> None:
    events = capture(llama_url, max_tokens=8, messages=SAY)
    first = events[0]["choices"][0]["delta"]
    assert first == {"role": "assistant"}
    assert events[-1] == "[DONE]"
    assert deltas(events)[1].get("content")


def test_llama_cpp_sends_empty_content_chunks_for_partial_utf8(llama_url: str) -> None:
    # Greedy decoding of the seeded model: of 8 generated tokens, some are byte tokens that do
    # not complete a UTF-8 character; llama.cpp still sends a chunk for each, with "content": "".
    events = capture(llama_url, max_tokens=8, messages=SAY)
    contents = [d["content"] for d in deltas(events) if "content" in d]
    assert len(contents) == 8
    assert 1 <= contents.count("") < 8
    assert events[-2]["choices"][0] == {**events[-2]["choices"][0], "delta": {},
                                        "finish_reason": "length"}


def test_llama_cpp_sends_no_usage_chunk_even_when_asked(llama_url: str) -> None:
    events = capture(llama_url, max_tokens=8, messages=SAY,
                     stream_options={"include_usage": True})
    assert all("usage" not in e for e in events if isinstance(e, dict))
    assert all(e["choices"] for e in events if isinstance(e, dict))


def tool_call_chunks(base_url: str, max_tokens: int) -> tuple[list[dict[str, Any]], list[Any]]:
    events = capture(
        base_url, max_tokens=max_tokens, tools=TOOLS,
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
        messages=WEATHER,
    )
    calls = [c for d in deltas(events) for c in d.get("tool_calls") or []]
    return calls, events


def test_llama_cpp_repeats_the_tool_call_id_on_every_chunk(llama_url: str) -> None:
    calls, events = tool_call_chunks(llama_url, max_tokens=16)
    assert len(calls) >= 2
    ids = {c.get("id") for c in calls}
    assert len(ids) == 1
    (call_id,) = ids
    assert call_id == f"call__0_get_weather_{events[0]['id'].replace('chatcmpl', 'cmpl')}"
    assert {c["index"] for c in calls} == {0}
    assert {c["function"]["name"] for c in calls} == {"get_weather"}


def test_llama_cpp_cuts_tool_arguments_at_max_tokens_yet_says_tool_calls(llama_url: str) -> None:
    calls, events = tool_call_chunks(llama_url, max_tokens=6)
    arguments = "".join(c["function"]["arguments"] for c in calls)
    assert arguments.startswith("{")
    # one chunk per generated token (at most max_tokens), then one closing chunk with "".
    assert 1 <= sum(1 for c in calls if c["function"]["arguments"]) <= 6
    assert calls[-1]["function"]["arguments"] == ""
    with pytest.raises(json.JSONDecodeError):
        json.loads(arguments)
    reasons = [e["choices"][0]["finish_reason"] for e in events if isinstance(e, dict)]
    # The stream was cut by max_tokens, but the finish reason does not say "length": a client
    # can only tell a truncated call by parsing its arguments.
    assert reasons[-1] == "tool_calls"
    assert "length" not in reasons


@pytest.mark.slow
def test_llama_cpp_by_default_cuts_a_running_stream_when_another_request_arrives() -> None:
    outcome: dict[str, Any] = {}
    first_is_streaming = threading.Event()

    def stream(name: str, max_tokens: int, min_tokens: int = 0) -> None:
        # min_tokens (llama-cpp-python's own field) holds off the end-of-sequence token, so
        # the first stream is still generating when the second request arrives: 150 tokens of
        # this tiny model once finished first, and then nothing was cut.
        body = {"model": MODEL_NAME, "stream": True, "temperature": 0.0, "max_tokens": max_tokens,
                "min_tokens": min_tokens,
                "messages": [{"role": "user", "content": f"Say something, {name}."}]}
        received = b""
        try:
            with httpx.stream("POST", f"{base_url}/chat/completions", json=body,
                              timeout=60) as r:
                for piece in r.iter_raw():
                    received += piece
                    first_is_streaming.set()
            outcome[name] = sse_events(received)
        except httpx.RemoteProtocolError as exc:
            outcome[name] = exc

    with llama_server(interrupt_requests=True) as base_url:
        first = threading.Thread(target=stream, args=("first", 400, 400))
        first.start()
        assert first_is_streaming.wait(30)
        stream("second", 8)  # sent while the first is still streaming
        first.join(60)
    # The first stream is cut after a few chunks: llama-cpp-python 0.3.36 sends [DONE] at once,
    # with no chunk ever carrying a finish_reason, although the request asked for at least 400
    # tokens. A client that took [DONE] for a finished answer would count a short one; epbench
    # needs the finish_reason (test_epbench_fails_a_stream_cut_by_done_without_finish_reason).
    first = outcome["first"]
    assert isinstance(first, list), first
    assert first[-1] == "[DONE]"
    chunks = [e for e in first if isinstance(e, dict)]
    assert 1 <= len(chunks) < 400
    assert {c["choices"][0]["finish_reason"] for c in chunks} == {None}
    second = outcome["second"]
    assert second[-1] == "[DONE]"
    assert second[-2]["choices"][0]["finish_reason"] == "length"


def test_epbench_counts_llama_cpp_tokens_from_content_chunks(llama_url: str) -> None:
    from epbench.runner.client import EndpointClient

    body = {"model": MODEL_NAME, "stream": True, "temperature": 0.0, "max_tokens": 8,
            "messages": SAY}
    raw = [d.get("content") for d in deltas(capture(llama_url, **{
        k: v for k, v in body.items() if k not in {"model", "stream", "temperature"}}))]

    async def one() -> Any:
        client = EndpointClient(llama_url, None, None, 60.0, 1)
        try:
            return await client.chat(dict(body))
        finally:
            await client.aclose()

    res = asyncio.run(one())
    assert res.ok, res.error
    # No usage from llama.cpp: the fallback counts content-bearing chunks (the same request
    # is decoded greedily, so the raw capture shows the same stream), and says so. The empty
    # chunks are tokens too, so this is fewer than the 8 generated: the price of no usage.
    bearing = sum(1 for c in raw if c)
    assert len(raw) == 10 and bearing < 8  # role chunk, 8 token chunks, finish chunk
    assert res.output_tokens == bearing
    assert res.token_source == "chunks"
    assert res.finish_reason == "length"
    assert len(res.itl_us) == bearing - 1


# ------------------------------------------------------------------ through epbench's runner


class RoleDelayRelay:
    """A loopback TCP relay that holds each response's role-only SSE event back.

    It forwards bytes unchanged, but after the first event of a response that names a role it
    sleeps `delay_s` before forwarding the rest. A client that took the role chunk as the first
    token would see a TTFT near 0; one that waits for content sees at least `delay_s`.
    """

    def __init__(self, upstream_port: int, delay_s: float) -> None:
        self.upstream_port = upstream_port
        self.delay_s = delay_s
        self.port = 0
        self.delayed = 0
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(
            asyncio.start_server(self._handle, "127.0.0.1", 0)
        )
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()
        server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter, hold: bool) -> None:
            armed = True
            with contextlib.suppress(ConnectionError):
                while data := await src.read(65536):
                    if hold and armed and b'"role"' in data:
                        start = data.index(b'"role"')
                        ends = [(i + len(sep)) for sep in (b"\n\n", b"\r\n\r\n")
                                if (i := data.find(sep, start)) >= 0]
                        if ends:
                            cut = min(ends)
                            dst.write(data[:cut])
                            await dst.drain()
                            self.delayed += 1
                            await asyncio.sleep(self.delay_s)
                            data = data[cut:]
                            armed = False
                    if hold and b"[DONE]" in data:
                        armed = True
                    dst.write(data)
                    await dst.drain()
            dst.close()

        await asyncio.gather(pump(reader, up_writer, False), pump(up_reader, writer, True))

    def __enter__(self) -> RoleDelayRelay:
        self._thread.start()
        self._ready.wait(5)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)


def write_endpoint(path: Path, base_url: str) -> Path:
    path.write_text(
        "kind: endpoint\nschema_version: 1\nid: llama-cpp-tiny\nprovider: llama.cpp (local)\n"
        f"model: {{name: {MODEL_NAME}, version: random-weights}}\napi: openai-chat\n"
        f"base_url: {base_url}\napi_key_env: null\ndivision: self-hosted\nregion: local\n"
        "pricing: {usd_per_hour: 0.5, effective_date: '2026-11-01'}\n"
        "hardware: {accelerator: none (CPU), count: 1, engine: llama-cpp-python}\n",
        encoding="utf-8",
    )
    return path


def write_workload(path: Path, requests: int, max_tokens: int) -> Path:
    path.write_text(
        "kind: serving-workload\nschema_version: 1\nid: llama-tiny-sweep\nversion: '1.0'\n"
        "description: a short sweep against llama.cpp\nseed: 3\n"
        "prompts: {input_tokens: {distribution: uniform, min: 8, max: 24}, "
        f"max_tokens: {max_tokens}}}\n"
        f"load: {{pattern: concurrency, concurrency: [1, 2], requests_per_point: {requests}, "
        "warmup_requests: 0}\n"
        "sampling: {temperature: 0.0}\nslo: {ttft_ms: 5000}\ntimeout_s: 60\n",
        encoding="utf-8",
    )
    return path


def run_sweep(tmp_path: Path, base_url: str, requests: int, max_tokens: int) -> Path:
    from epbench.runner.entry import run_command

    results = run_command(
        endpoint=write_endpoint(tmp_path / "llama.yaml", base_url),
        workload=write_workload(tmp_path / "sweep.yaml", requests, max_tokens),
        out=tmp_path,
        resume=None,
        quick=False,
        client_region=None,
        shard=None,
        progress=False,
    )
    assert len(results) == 1
    return Path(results[0])


@pytest.fixture(scope="module")
def sweep(llama_url: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any],
                                                                               list[dict[str, Any]],
                                                                               int]:
    """One sweep through the role-delaying relay: (result, journal lines, relay delays)."""
    tmp = tmp_path_factory.mktemp("llama-sweep")
    port = int(llama_url.rsplit(":", 1)[1].split("/")[0])
    with RoleDelayRelay(port, ROLE_DELAY_S) as relay:
        result_path = run_sweep(tmp, f"http://127.0.0.1:{relay.port}/v1", requests=3,
                                max_tokens=12)
        delayed = relay.delayed
    result = json.loads(result_path.read_text(encoding="utf-8"))
    journal = [json.loads(line) for line in
               (result_path.parent / "events.jsonl").read_text(encoding="utf-8").splitlines()
               if line.strip()]
    return result, journal, delayed


def test_a_sweep_against_llama_cpp_writes_a_valid_result(sweep: Any, tmp_path: Path) -> None:
    result, _, _ = sweep
    assert check_schema(result, "result", str(tmp_path / "result.json")) == []
    assert [p["concurrency"] for p in result["points"]] == [1, 2]
    assert result["endpoint"]["division"] == "self-hosted"


def test_every_request_against_llama_cpp_is_issued_once_and_classified(sweep: Any) -> None:
    result, journal, _ = sweep
    requests = [line for line in journal if "request_id" in line]
    assert len(requests) == 6
    assert len({line["request_id"] for line in requests}) == 6
    # (llama-cpp-python answers an empty HTTP 400 to an x-request-id header that is not a UUID)
    failed = [(line["request_id"], line["class"], line["error"]) for line in requests
              if line["class"] != "ok"]
    assert failed == []
    for point in result["points"]:
        counts = point["requests"]
        assert counts == {**counts, "issued": 3, "completed": 3, "failed": 0}
        assert point["ttft_ms"]["n"] == 3


def test_output_tokens_are_the_content_chunks_llama_cpp_sent(sweep: Any, llama_url: str) -> None:
    from epbench.runner.calibrate import Calibration
    from epbench.runner.prompts import messages

    result, journal, _ = sweep
    requests = [line for line in journal if "request_id" in line]
    # llama.cpp sends no usage, so epbench counts content-bearing chunks and says so. Greedy
    # decoding is deterministic: the same prompt, captured raw, shows the same stream.
    fit = Calibration.from_json(result["settings"]["calibration"])
    for line in requests:
        assert line["input_tokens"] is None and line["input_source"] == "planned"
        prompt = messages(3, line["request_id"], fit.words_for(line["input_requested"]), None)
        events = capture(llama_url, max_tokens=12, messages=prompt)
        bearing = sum(1 for d in deltas(events) if d.get("content"))
        assert line["token_source"] == "chunks"
        assert line["output_tokens"] == bearing, line["request_id"]
        assert 1 <= bearing <= 12
    for point in result["points"]:
        mine = [line for line in requests if line["point"] == point["id"]]
        assert point["tokens"]["output"] == sum(line["output_tokens"] for line in mine)
        assert point["tokens"]["source"] == "chunks"


def test_ttft_against_llama_cpp_waits_for_content_not_the_role_chunk(sweep: Any) -> None:
    result, journal, delayed = sweep
    assert delayed == 6, "the relay held back every response's role chunk"
    requests = [line for line in journal if "request_id" in line]
    for line in requests:
        ttft_s = (line["t_first_ns"] - line["t_send_ns"]) / 1e9
        assert ttft_s >= ROLE_DELAY_S, line
        assert line["t_last_ns"] >= line["t_first_ns"]
    for point in result["points"]:
        assert point["ttft_ms"]["p50"] >= ROLE_DELAY_S * 1000
        assert point["e2e_ms"]["p50"] >= point["ttft_ms"]["p50"]


def test_prompts_hold_their_requested_length_as_llama_cpp_counts_it(
    llama_url: str, tmp_path: Path
) -> None:
    """llama.cpp streams no usage, so the runner calibrates with unstreamed probes. Here every
    journaled prompt is rebuilt and sent unstreamed (max_tokens 1): the median of the
    server's own prompt_tokens over the requested length is within 5% of 1."""
    import statistics

    from epbench.runner.calibrate import Calibration
    from epbench.runner.entry import run_command
    from epbench.runner.prompts import messages

    workload = tmp_path / "lengths.yaml"
    workload.write_text(
        "kind: serving-workload\nschema_version: 1\nid: llama-lengths\nversion: '1.0'\n"
        "description: prompt lengths against llama.cpp\nseed: 5\n"
        "prompts: {input_tokens: {distribution: uniform, min: 192, max: 384}, max_tokens: 2}\n"
        "load: {pattern: concurrency, concurrency: [1], requests_per_point: 12, "
        "warmup_requests: 0}\nsampling: {temperature: 0.0}\ntimeout_s: 60\n",
        encoding="utf-8",
    )
    results = run_command(
        endpoint=write_endpoint(tmp_path / "llama.yaml", llama_url), workload=workload,
        out=tmp_path, resume=None, quick=False, client_region=None, shard=None, progress=False,
    )
    result = json.loads(Path(results[0]).read_text(encoding="utf-8"))
    calibration = result["settings"]["calibration"]
    assert calibration["source"] == "usage" and calibration["probes"] >= 4
    assert result["points"][0]["tokens"]["input_source"] == "planned"  # never shown as measured
    fit = Calibration.from_json(calibration)
    lines = [r for r in map(json.loads, (Path(results[0]).parent / "events.jsonl")
                            .read_text(encoding="utf-8").splitlines())
             if "request_id" in r]  # (the run spec and session lines are not requests)
    ratios = []
    for line in lines:
        prompt = messages(5, line["request_id"], fit.words_for(line["input_requested"]), None)
        answer = httpx.post(f"{llama_url}/chat/completions", timeout=60, json={
            "model": MODEL_NAME, "messages": prompt, "max_tokens": 1, "stream": False,
        }).json()
        ratios.append(answer["usage"]["prompt_tokens"] / line["input_requested"])
    assert len(ratios) == 12
    print(f"llama.cpp: actual/requested input tokens, median {statistics.median(ratios):.4f}")
    assert abs(statistics.median(ratios) - 1.0) <= 0.05, ratios
