"""The recorded-stream corpus (tests/streams/*.sse): epbench's assembler against what each
stream must give, and against the openai SDK's own accumulator on the same bytes.

Each `NAME.sse` holds the raw bytes of one streamed chat completion; `NAME.json` says what the
calls are, which quirks epbench must note, and whether the SDK
(`openai.lib.streaming.chat.ChatCompletionStreamState`) agrees. Where it does not, the file
names the fields that differ and why the SDK is wrong; the test checks that the SDK really
differs there (and agrees everywhere else), so a named difference cannot go stale silently.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from openai._models import construct_type
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk

from epbench.runner.agentic.assemble import assemble
from epbench.runner.sse import SSEDecoder
from tests.conftest import ROOT

CORPUS = ROOT / "tests" / "streams"
NAMES = sorted(p.stem for p in CORPUS.glob("*.sse"))


def events(data: bytes, reads: list[bytes] | None = None) -> list[dict[str, Any]]:
    """The JSON events of an SSE byte stream, fed to the client's decoder in `reads`."""
    decoder = SSEDecoder()
    payloads: list[str] = []
    for piece in reads if reads is not None else [data]:
        payloads += decoder.feed(piece)
    payloads += decoder.close()
    return [json.loads(p) for p in payloads if p != "[DONE]"]


def ours(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    msg = assemble((i, c) for i, c in enumerate(chunks))
    return {
        "finish_reason": msg.finish_reason,
        "content": msg.content,
        "calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in msg.calls],
        "quirks": sorted(msg.quirks - {"cut"}) + (["cut"] if msg.cut else []),
    }


def sdk(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """What the SDK's accumulator makes of the same events ({"error": ...} if it raises)."""
    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    try:
        for chunk in chunks:
            state.handle_chunk(construct_type(type_=ChatCompletionChunk, value=chunk))
        choice = state.current_completion_snapshot.choices[0]
    except Exception as exc:  # the SDK's failure is the observation
        return {"error": f"{type(exc).__name__}: {exc}"}
    calls = choice.message.tool_calls or []
    return {
        "content": choice.message.content or "",
        "calls": [
            {"id": c.id, "name": c.function.name, "arguments": c.function.arguments} for c in calls
        ],
    }


def load(name: str) -> tuple[bytes, dict[str, Any]]:
    return (CORPUS / f"{name}.sse").read_bytes(), json.loads(
        (CORPUS / f"{name}.json").read_text("utf-8")
    )


def test_the_corpus_holds_at_least_twelve_streams_each_with_its_expectation():
    assert len(NAMES) >= 12
    for name in NAMES:
        assert (CORPUS / f"{name}.json").is_file(), name


@pytest.mark.parametrize("name", NAMES)
def test_epbench_assembles_each_recorded_stream_as_expected(name: str):
    data, meta = load(name)
    got = ours(events(data))
    expect = meta["expect"]
    assert got["calls"] == expect["calls"]
    assert got["finish_reason"] == expect["finish_reason"]
    assert got["quirks"] == sorted(q for q in expect["quirks"] if q != "cut") + (
        ["cut"] if "cut" in expect["quirks"] else []
    )
    if "content" in expect:
        assert got["content"] == expect["content"]
    for call in got["calls"]:
        call["arguments"].encode("utf-8")  # real text: no lone surrogate survives


@pytest.mark.parametrize("name", NAMES)
def test_reads_split_anywhere_even_inside_a_character_assemble_the_same(name: str):
    data, _ = load(name)
    whole = ours(events(data))
    rng = random.Random(name)
    for _ in range(8):
        cuts = sorted(rng.sample(range(1, len(data)), k=min(12, len(data) - 1)))
        reads = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
        assert ours(events(data, reads)) == whole


@pytest.mark.filterwarnings("ignore::UserWarning")  # pydantic, on the SDK's dict-as-string
@pytest.mark.parametrize("name", NAMES)
def test_the_openai_sdk_agrees_except_where_the_corpus_names_why_it_is_wrong(name: str):
    data, meta = load(name)
    chunks = events(data)
    mine, theirs = ours(chunks), sdk(chunks)
    verdict = meta["sdk"]
    if verdict == "agrees":
        assert "error" not in theirs, theirs
        assert theirs["calls"] == mine["calls"]
        return
    differs = set(verdict["differs"])
    assert len(verdict["why"]) > 40  # the reason is written out, not just a label
    if "error" in differs:
        assert "error" in theirs, f"the SDK no longer fails on {name}: {theirs}"
        return
    assert "error" not in theirs, theirs
    if "count" in differs:
        assert len(theirs["calls"]) != len(mine["calls"])
        return
    assert len(theirs["calls"]) == len(mine["calls"])
    for field in ("id", "name", "arguments"):
        same = all(
            t[field] == m[field] for t, m in zip(theirs["calls"], mine["calls"], strict=True)
        )
        if field in differs:
            assert not same, f"the SDK now agrees on {field} for {name}"
        else:
            assert same, f"the SDK differs on {field} for {name}, which the corpus does not name"


def test_the_sdk_leaves_a_split_surrogate_pair_as_two_lone_surrogates():
    data, _ = load("split_surrogate_pair")
    theirs = sdk(events(data))["calls"][0]["arguments"]
    with pytest.raises(UnicodeEncodeError):
        theirs.encode("utf-8")
    assert (
        json.loads(ours(events(data))["calls"][0]["arguments"])["note"] == "party \U0001f389 at 8"
    )


def test_the_sdk_concatenates_an_id_repeated_on_every_chunk():
    data, meta = load("llamacpp_id_every_chunk")
    theirs = sdk(events(data))["calls"][0]["id"]
    expected_id = meta["expect"]["calls"][0]["id"]
    assert theirs != expected_id and theirs.startswith(expected_id * 2)
