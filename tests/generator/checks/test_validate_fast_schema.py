"""The fast schema path is never more lenient than jsonschema: whenever it says "certainly
valid", jsonschema finds nothing. Checked on the samples and on random mutations of them."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from epbench.core.schema import check_schema
from epbench.generator.checks.fast_schema import certainly_valid
from tests.conftest import ROOT

SAMPLES = [json.loads(p.read_text()) for p in sorted((ROOT / "tests/data/results").rglob("*.json"))]
ENDPOINT = {
    "kind": "endpoint", "schema_version": 1, "id": "acme", "provider": "Acme",
    "model": {"name": "m", "snapshot_date": "2026-01-02"}, "api": "openai-chat",
    "base_url": "https://api.acme.example/v1", "api_key_env": "ACME_API_KEY",
    "division": "serviced", "region": "us-east-1",
    "pricing": {"input_usd_per_mtok": 1, "output_usd_per_mtok": 2,
                "effective_date": "2026-01-01", "source_url": "https://acme.example/p"},
}


def test_the_valid_samples_take_the_fast_path() -> None:
    assert len(SAMPLES) == 4
    for sample in SAMPLES:
        assert check_schema(sample, "result", "sample") == []
        assert certainly_valid(sample, "result")
    assert certainly_valid(ENDPOINT, "endpoint")


def test_typical_defects_are_not_certainly_valid() -> None:
    sample = SAMPLES[0]
    for mutate in (
        lambda d: d.__setitem__("surprise", 1),
        lambda d: d["points"][0].__setitem__("concurrency", True),
        lambda d: d["points"][0].__setitem__("rate", 2.0),  # oneOf: both
        lambda d: d["endpoint"].__setitem__("id", "Bad/Id"),
        lambda d: d["points"][0]["ttft_ms"].__setitem__("insufficient", ["p99", "p99"]),
        lambda d: d["endpoint"]["pricing"].__setitem__("effective_date", "2026-02-30"),
        lambda d: d.__setitem__("started_at", "yesterday"),
        lambda d: d["points"][0]["ttft_ms"].__setitem__("ci95", {"p50": [1.0]}),
        lambda d: d.pop("pareto"),
    ):
        doc = copy.deepcopy(sample)
        mutate(doc)
        assert not certainly_valid(doc, "result")


values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**6) | st.floats(-1, 1e6, allow_nan=False)
    | st.sampled_from(["", "x", "p90", "c1", "2026-11-20", "2026-11-20T10:00:00Z", "serviced",
                       "a" * 70, "usage", "success"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["p50", "p90", "n", "id", "x", "usd"]), inner, max_size=3),
    max_leaves=6,
)


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for key, value in doc.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            out += _paths(value, (*prefix, index))
    return out


@settings(max_examples=300, deadline=None)
@given(which=st.integers(0, 3), pick=st.integers(0, 10**6), value=values,
       action=st.sampled_from(["set", "delete", "add"]))
def test_certainly_valid_implies_jsonschema_valid(which: int, pick: int, value: Any,
                                                  action: str) -> None:
    doc = copy.deepcopy(SAMPLES[which])
    paths = _paths(doc)[1:]
    path = paths[pick % len(paths)]
    parent: Any = doc
    for part in path[:-1]:
        parent = parent[part]
    key = path[-1]
    if action == "set":
        parent[key] = value
    elif action == "delete" and isinstance(parent, dict):
        del parent[key]
    elif action == "add" and isinstance(parent, dict):
        parent[f"{key}_extra"] = value
    if certainly_valid(doc, "result"):
        assert check_schema(doc, "result", "mutated") == [], (path, action, value)


def test_a_trailing_newline_after_a_pattern_is_not_certainly_valid() -> None:
    doc = copy.deepcopy(SAMPLES[0])
    doc["run_id"] += "\n"  # `$` is the end of the string
    assert not certainly_valid(doc, "result")
    assert check_schema(doc, "result", "newline") != []


def test_a_document_jsonschema_rs_cannot_take_is_left_to_jsonschema() -> None:
    doc = copy.deepcopy(SAMPLES[0])
    doc["points"][0]["requests"]["issued"] = 2**70  # past every integer type Rust reads
    assert certainly_valid(doc, "result") in (False, check_schema(doc, "result", "big") == [])


def test_a_trailing_newline_in_a_results_endpoint_id_is_a_finding_at_its_pointer() -> None:
    doc = copy.deepcopy(SAMPLES[0])
    doc["endpoint"]["id"] += "\n"  # checked through the $ref into endpoint.schema.json
    assert not certainly_valid(doc, "result")
    findings = check_schema(doc, "result", "newline")
    assert [(f.pointer, f.check) for f in findings] == [("/endpoint/id", "schema.pattern")]
