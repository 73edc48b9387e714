"""The streaming tool-call assembler and the call classifier."""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from epbench.runner.agentic.assemble import AssembledCall, assemble, join_surrogates
from epbench.runner.agentic.classify import Classifier
from epbench.runner.agentic.model import Tool


def utf16_pieces(text: str, cuts: list[int]) -> list[str]:
    """Split text at UTF-16 code-unit positions: a cut inside a pair leaves lone surrogates,
    which is what a JSON decoder makes of a pair split across two events."""
    units = text.encode("utf-16-le")
    n = len(units) // 2
    points = sorted({c % (n + 1) for c in cuts} | {0, n})
    return [
        units[2 * a : 2 * b].decode("utf-16-le", "surrogatepass")
        for a, b in itertools.pairwise(points)
    ]


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


arguments = st.dictionaries(
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=6),
    st.one_of(st.text(max_size=12), st.integers(), st.booleans(), st.just("🎉 ✓ São")),
    max_size=4,
)
calls = st.lists(
    st.tuples(
        st.sampled_from(["get_weather", "get_quote", "book"]),
        arguments,
        st.lists(st.integers(0, 400), max_size=8),
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=80, deadline=None)
@given(
    calls=calls,
    id_policy=st.sampled_from(["first", "every", "none"]),
    interleave=st.booleans(),
    ensure_ascii=st.booleans(),
    seed=st.randoms(use_true_random=False),
)
def test_any_split_and_interleaving_assembles_every_call_exactly(
    calls, id_policy, interleave, ensure_ascii, seed
):
    streams = []
    for index, (name, args, cuts) in enumerate(calls):
        text = json.dumps(args, ensure_ascii=ensure_ascii)
        head: dict[str, Any] = {
            "index": index,
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        if id_policy != "none":
            head["id"] = f"call_{index}"
        parts = [head]
        for piece in utf16_pieces(text, cuts):
            entry: dict[str, Any] = {"index": index, "function": {"arguments": piece}}
            if id_policy == "every":
                entry["id"] = f"call_{index}"
                entry["function"]["name"] = name
            parts.append(entry)
        streams.append(parts)
    order: list[dict[str, Any]] = []
    if interleave:
        queues = [list(s) for s in streams]
        while any(queues):
            q = seed.choice([q for q in queues if q])
            order.append(q.pop(0))
    else:
        order = [p for s in streams for p in s]
    chunks = [chunk({"tool_calls": [p]}) for p in order] + [chunk({}, "tool_calls")]
    msg = assemble((i, c) for i, c in enumerate(chunks))
    assert len(msg.calls) == len(calls)
    for call, (name, args, _) in zip(msg.calls, calls, strict=True):
        assert call.name == name
        assert json.loads(call.arguments) == args
        assert call.id == (None if id_policy == "none" else f"call_{call.index}")
    assert msg.finish_reason == "tool_calls" and not msg.cut


def test_join_surrogates_combines_a_split_pair_and_replaces_a_lone_one():
    assert join_surrogates("a\ud83c\udf89b") == ("a\U0001f389b", True)
    assert join_surrogates("x\ud83c") == ("x\ufffd", True)
    assert join_surrogates("plain é") == ("plain é", False)


def test_a_non_streamed_body_assembles_its_tool_calls_by_list_position():
    body = {
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "a",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                        },
                        {
                            "id": "b",
                            "type": "function",
                            "function": {"name": "g", "arguments": {"x": 1}},
                        },
                    ],
                },
            }
        ]
    }
    msg = assemble([(5, body)])
    assert [(c.id, c.name, c.arguments) for c in msg.calls] == [
        ("a", "f", "{}"),
        ("b", "g", '{"x": 1}'),
    ]
    assert msg.first_tool_ns == 5 and "args_object" in msg.quirks


def test_first_and_last_tool_delta_times_are_kept_for_decision_time():
    chunks = [
        (10, chunk({"content": "hm"})),
        (
            20,
            chunk(
                {
                    "tool_calls": [
                        {"index": 0, "id": "c", "function": {"name": "f", "arguments": "{"}}
                    ]
                }
            ),
        ),
        (35, chunk({"tool_calls": [{"index": 0, "function": {"arguments": "}"}}]})),
        (40, chunk({}, "tool_calls")),
    ]
    msg = assemble(chunks)
    assert (msg.first_tool_ns, msg.last_tool_ns) == (20, 35)


TOOL = Tool(
    "get_weather",
    "w",
    {
        "type": "object",
        "additionalProperties": False,
        "required": ["city"],
        "properties": {"city": {"type": "string"}},
    },
    {"type": "static"},
)


def classify(*calls: AssembledCall, cut: bool = False, length: bool = False) -> list[str]:
    numbers = iter(range(1, 100))
    return [
        c.cls
        for c in Classifier([TOOL], lambda: f"syn{next(numbers)}").classify(
            list(calls), cut=cut, length=length
        )
    ]


def test_each_call_lands_in_exactly_one_class():
    ok = AssembledCall(0, "c1", "get_weather", '{"city": "Paris"}')
    assert classify(ok) == ["ok"]
    assert classify(AssembledCall(0, "c1", "get_wether", '{"city": "Paris"}')) == ["unknown_tool"]
    assert classify(AssembledCall(0, "c1", "get_weather", '{"city": "Paris"')) == ["invalid_json"]
    assert classify(AssembledCall(0, "c1", "get_weather", '["Paris"]')) == ["invalid_json"]
    assert classify(AssembledCall(0, "c1", "get_weather", '{"town": "Paris"}')) == [
        "schema_mismatch"
    ]
    assert classify(AssembledCall(0, None, "get_weather", '{"city": "Paris"}')) == ["missing_id"]
    assert classify(ok, AssembledCall(1, "c1", "get_weather", '{"city": "Rome"}')) == [
        "ok",
        "duplicate_id",
    ]
    assert classify(ok, cut=True) == ["stream_truncated"]
    assert classify(AssembledCall(0, "c1", "get_weather", '{"city": "Pa'), length=True) == [
        "stream_truncated"
    ]


def test_missing_and_duplicate_ids_get_a_fresh_synthesised_id():
    numbers = iter(range(1, 100))
    classifier = Classifier([TOOL], lambda: f"syn{next(numbers)}")
    out = classifier.classify(
        [
            AssembledCall(0, None, "get_weather", '{"city": "A"}'),
            AssembledCall(1, "x", "get_weather", '{"city": "B"}'),
            AssembledCall(2, "x", "get_weather", '{"city": "C"}'),
        ],
        cut=False,
        length=False,
    )
    assert [c.call_id for c in out] == ["syn1", "x", "syn2"]
    assert all(c.executable for c in out)
    assert "city" in classify_problem(AssembledCall(0, "c", "get_weather", "{}"))


def classify_problem(call: AssembledCall) -> str:
    return Classifier([TOOL], lambda: "s").classify([call], cut=False, length=False)[0].problem
