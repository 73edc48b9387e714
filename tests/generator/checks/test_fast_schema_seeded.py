"""The fast schema path (jsonschema-rs) stays never more lenient than jsonschema: 500 seeded
mutations of the samples (numbers at and past their bounds, enums, lists, NaN, huge integers),
each checked against jsonschema; and values of subclassed types are left to jsonschema."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

from epbench.core.schema import check_schema
from epbench.generator.checks.fast_schema import certainly_valid
from tests.conftest import ROOT

SAMPLES = [json.loads(p.read_text()) for p in sorted((ROOT / "tests/data/results").rglob("*.json"))]


class Text(str):
    pass


class Count(int):
    pass


REPLACEMENTS: list[Any] = [
    None, True, False, 0, -1, 1, 2**63, 0.0, -0.0, -1e-9, 1.5, 1e300, "", "p90", "p99",
    "usage", "serviced", "x" * 70, [], ["p90"], ["p90", "p90"], ["p90", "p99"], ["p50"], {},
    {"p50": 1}, [1.0, 2.0], [1.0], Text("p90"), Count(3), [Text("p90")], float("nan"),
]


def _places(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for key, value in doc.items():
            out += _places(value, (*prefix, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            out += _places(value, (*prefix, index))
    return out


def test_500_seeded_mutations_are_certainly_valid_only_when_jsonschema_agrees() -> None:
    rng = random.Random(13)
    answers = set()
    for i in range(500):
        doc = copy.deepcopy(SAMPLES[i % len(SAMPLES)])
        for _ in range(rng.randint(1, 2)):
            places = _places(doc)[1:]
            place = rng.choice(places)
            parent: Any = doc
            for part in place[:-1]:
                parent = parent[part]
            key = place[-1]
            action = rng.randrange(4)
            if action <= 1:
                parent[key] = copy.deepcopy(rng.choice(REPLACEMENTS))
            elif action == 2 and isinstance(parent, dict):
                del parent[key]
            elif isinstance(parent, dict):
                parent[rng.choice(["extra", "ci95", "insufficient", "p50", "ttfa_ms"])] = \
                    copy.deepcopy(rng.choice(REPLACEMENTS))
        fast = certainly_valid(doc, "result")
        answers.add(fast)
        if fast:
            assert check_schema(doc, "result", "mutated") == [], (i, doc)
    assert answers == {True, False}


def test_subclassed_values_are_left_to_jsonschema() -> None:
    for mutate in (
        lambda d: d["points"][0]["requests"].__setitem__("issued", Count(100)),
        lambda d: d["points"][0]["ttft_ms"].__setitem__("insufficient", [Text("p99")]),
        lambda d: d["points"][0]["tokens"].__setitem__("source", Text("usage")),
    ):
        doc = copy.deepcopy(SAMPLES[0])
        mutate(doc)
        assert not certainly_valid(doc, "result")
        assert check_schema(doc, "result", "subclassed") == []  # valid, only not vouched for
