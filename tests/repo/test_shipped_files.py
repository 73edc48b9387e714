"""Every shipped schema is a valid draft 2020-12 schema, and every shipped file matches its own."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from epbench.core.documents import load_document
from epbench.core.schema import check_schema, kind_of
from tests.conftest import ROOT

SCHEMAS = sorted((ROOT / "schemas").glob("*.schema.json"))
SHIPPED = sorted(
    [*(ROOT / "endpoints").glob("*.yaml"), *(ROOT / "workloads" / "serving").glob("*.yaml"),
     *(ROOT / "workloads" / "agentic").glob("*.yaml")]
)


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_schema_is_valid_and_carries_id_and_version(path):
    schema = json.loads(path.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    assert schema["$id"].endswith(path.name)
    assert isinstance(schema["schema_version"], int)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_shipped_file_matches_its_schema(path):
    document = load_document(path)
    kind = kind_of(document)
    assert kind is not None, f"{path} declares no known kind"
    assert check_schema(document, kind, str(path)) == []


def test_unknown_fields_are_schema_errors():
    document = load_document(ROOT / "endpoints" / "emulator.yaml")
    document["surprise"] = 1
    findings = check_schema(document, "endpoint", "e.yaml")
    assert [f.check for f in findings] == ["schema.additionalProperties"]
    assert findings[0].severity == "reject"


def test_schema_findings_carry_the_json_pointer_of_the_bad_value():
    document = load_document(ROOT / "workloads" / "serving" / "chat-short.yaml")
    document["load"]["concurrency"][2] = -4
    findings = check_schema(document, "serving-workload", "w.yaml")
    assert any(f.pointer == "/load/concurrency/2" for f in findings), [f.line() for f in findings]


def test_the_serving_sweeps_have_at_least_five_points():
    for path in (ROOT / "workloads" / "serving").glob("*.yaml"):
        load = load_document(path)["load"]
        if load["pattern"] == "concurrency":
            assert len(load["concurrency"]) >= 5, path.name
        if load["pattern"] == "poisson":
            assert len(load["rates_rps"]) >= 5, path.name
