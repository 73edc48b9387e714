"""The add-a-workload guide stays in step with the agentic workload schema."""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import ROOT

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


def yaml_blocks(text: str) -> list[str]:
    """The fenced YAML blocks of a Markdown page, dedented (an indented block sits in a list)."""
    import textwrap

    blocks, current, fence = [], None, ""
    for line in text.splitlines():
        stripped = line.strip()
        if current is None and stripped == "```yaml":
            current, fence = [], line[: len(line) - len(line.lstrip())]
        elif current is not None and stripped == "```":
            blocks.append(textwrap.dedent("\n".join(current)))
            current = None
        elif current is not None:
            current.append(line[len(fence):] if line.startswith(fence) else line)
    return blocks


def test_the_guide_shows_a_state_tool_with_updates_that_the_schema_accepts():
    import jsonschema
    import yaml

    schema = json.loads(SCHEMA.read_text("utf-8"))
    shown = [yaml.safe_load(b) for b in yaml_blocks(GUIDE.read_text("utf-8"))]
    states = [d["implementation"] for d in shown
              if isinstance(d, dict) and isinstance(d.get("implementation"), dict)
              and d["implementation"].get("type") == "state"]
    assert states, "the guide shows no `type: state` implementation"
    implementation = {"$defs": schema["$defs"], "$ref": "#/$defs/implementation"}
    for state in states:
        jsonschema.validate(state, implementation)
    ops = {u["op"] for s in states for u in s.get("updates", [])}
    assert ops == {"set", "append", "increment"}


def test_the_guide_says_what_correct_call_rate_counts():
    guide = GUIDE.read_text("utf-8")
    at = guide.find("`correct_call_rate`")
    assert at >= 0
    assert "over all tool calls" in guide[at:at + 200]
