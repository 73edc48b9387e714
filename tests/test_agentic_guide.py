"""The add-a-workload guide stays in step with the agentic workload schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "schemas" / "agentic-workload.schema.json"
GUIDE = ROOT / "site" / "docs" / "guides" / "agentic-workload.md"


def field_names(node: Any, out: set[str]) -> set[str]:
    if isinstance(node, dict):
        out.update(node.get("properties", {}))
        for value in node.values():
            field_names(value, out)
    elif isinstance(node, list):
        for value in node:
            field_names(value, out)
    return out


def test_every_field_of_the_agentic_workload_schema_appears_in_the_guide():
    names = field_names(json.loads(SCHEMA.read_text("utf-8")), set()) - {"$schema"}
    guide = GUIDE.read_text("utf-8")
    missing = sorted(n for n in names if n not in guide)
    assert len(names) > 40
    assert missing == [], f"document these fields in {GUIDE.name}: {missing}"


def test_every_category_in_the_schema_has_a_shipped_example_in_the_guide():
    schema = json.loads(SCHEMA.read_text("utf-8"))
    guide = GUIDE.read_text("utf-8")
    for category in schema["properties"]["category"]["enum"]:
        if category != "other":
            assert f"| `{category}` |" in guide, category
