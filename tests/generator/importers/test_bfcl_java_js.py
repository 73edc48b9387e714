"""BFCL's Java and JavaScript categories import and validate, with BFCL's rules for their types
(issue 26, "What it must show" 4): every parameter is sent as a string holding a literal of
its declared type, read back as BFCL's type converters read it; the importer prints, per
category, how many entries it imported and left out, and why each one was left out."""

from __future__ import annotations

import json
import random
import re
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from epbench.cli import main
from epbench.core import bfcl_literals as literals
from epbench.generator.importers.bfcl_source import Source
from epbench.runner.agentic.matching import call_matches
from epbench.runner.agentic.model import Match, load_workload
from tests.conftest import ROOT

FIXTURE = ROOT / "tests" / "data" / "bfcl" / "bfcl_eval-2026.3.23-data.zip"
BFCL = Match(strings="bfcl", numbers="bfcl", arguments="exact")


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """`epbench import bfcl` of the fixture, 50 entries a category as shipped (all of
    JavaScript's): (the folder written, the lines printed)."""
    out = tmp_path_factory.mktemp("bfcl") / "agentic"
    done = CliRunner().invoke(main, ["import", "bfcl", str(FIXTURE), "--out", str(out),
                                     "--sample", "50", "--seed", "1"])
    assert done.exit_code == 0, done.output
    return out, done.output.splitlines()


def test_java_and_javascript_import_validate_and_say_what_was_left_out(
        imported: tuple[Path, list[str]]):
    runner = CliRunner()
    out, lines = imported
    total = 0
    for category, language in (("simple_java", "java"), ("simple_javascript", "javascript")):
        path = out / f"bfcl-{category.replace('_', '-')}.yaml"
        doc = yaml.safe_load(path.read_text("utf-8"))
        excluded = doc["source"].get("excluded", [])
        assert f"{category}: {len(doc['tasks'])} tasks imported, {len(excluded)} excluded" in lines
        for item in excluded:
            assert f"  excluded {item['id']}: {item['reason']}" in lines
        entries = len(Source(FIXTURE).entries(category))
        assert len(doc["tasks"]) + len(excluded) == min(50, entries)
        task = doc["tasks"][0]
        tool = task["tools"][0]
        assert tool["description"].endswith(
            "Java 8 SDK syntax." if language == "java" else "JavaScript syntax.")
        assert all(p["type"] == "string" and "string representation" in p["description"]
                   for p in tool["parameters"]["properties"].values())
        specs = task["checks"]["calls"][0]["literals"]
        assert specs and all(s["language"] == language for s in specs.values())
        checked = runner.invoke(main, ["validate", str(path)])
        assert checked.exit_code == 0, checked.output
    for line in lines:
        found = re.match(r"\w+: \d+ tasks imported, (\d+) excluded$", line)
        total += int(found.group(1)) if found else 0
    assert f"{total} entries excluded in all" in lines
    assert any(line.startswith(str(out)) for line in lines)  # the written files, as before


def test_a_java_literal_is_read_as_bfcl_reads_it():
    spec = {"language": "java", "type": "ArrayList", "items": "String"}
    assert literals.decode(spec, 'new ArrayList<>(Arrays.asList("a", "b"))') == ["a", "b"]
    assert literals.decode(spec, 'new ArrayList<String>() {{ add("a"); add("b"); }}') == \
        ["a", "b"]
    assert literals.decode(spec, "new ArrayList<>()") == []
    assert literals.decode(spec, '["a", "b"]') == '["a", "b"]'  # JSON is no Java literal
    assert literals.decode({"language": "java", "type": "long"}, "123L") == 123
    assert literals.decode({"language": "java", "type": "long"}, "123") == "123"
    assert literals.decode({"language": "java", "type": "float"}, "3.5f") == 3.5
    assert literals.decode({"language": "java", "type": "HashMap"},
                           'new HashMap<String, Object>() {{ put("k", 1); }}') == {"k": 1}
    assert literals.decode({"language": "javascript", "type": "array", "items": "integer"},
                           "new Array(1, 2)") == [1, 2]
    assert literals.decode({"language": "javascript", "type": "dict"},
                           "{name: 'x', n: 2}") == {"name": "x", "n": 2}


def test_an_imported_java_task_accepts_its_literal_and_refuses_json_text(
        imported: tuple[Path, list[str]]):
    out, _ = imported
    doc = yaml.safe_load((out / "bfcl-simple-java.yaml").read_text("utf-8"))
    wl = load_workload(doc)
    for task in wl.tasks:
        expected = task.checks.calls[0]
        typed = {k: s for k, s in expected.literals.items()
                 if s["type"] in ("long", "ArrayList", "Array", "HashMap")}
        if not typed:
            continue
        call = next(step.calls[0] for step in task.reference if step.calls)
        params = wl.for_task(task).tool(call.tool).parameters
        assert call_matches(expected, call.tool, call.arguments, BFCL, params)
        key = sorted(typed)[0]
        accepted = expected.arguments[key]
        as_json = dict(call.arguments, **{key: json.dumps(accepted[0])})
        assert not call_matches(expected, call.tool, as_json, BFCL, params), (task.id, key)
        break
    else:
        raise AssertionError("no Java task with a typed literal argument")


def test_the_grid_reader_ends_where_bfcls_pattern_ends_on_20000_seeded_strings():
    rng = random.Random(26)
    for _ in range(20_000):
        text = "".join(rng.choice("[],[ ]a\n,") for _ in range(rng.randint(0, 14)))
        text = rng.choice(["", "[", "new Array("]) + text + rng.choice(["", "]", ")", "]]"])
        found = literals._JS_2D.match(text)
        assert literals.grid_end(text) == (found.end() if found else None), repr(text)


def test_near_miss_literals_from_an_endpoint_cannot_stall_the_check():
    """BFCL's own patterns take minutes on these (exponential on the 2D array, polynomial of
    high degree on whitespace runs); epbench reads each in well under a second."""
    hostile = [
        ({"language": "javascript", "type": "array", "items": "String"}, "[" + "[a], " * 60),
        ({"language": "javascript", "type": "array", "items": "String"}, "[[" + "],[" * 300),
        ({"language": "java", "type": "HashMap"}, "new HashMap<>() {" + " " * 900),
        ({"language": "java", "type": "HashMap"}, "new HashMap<>() { " * 50),
        ({"language": "java", "type": "ArrayList", "items": "String"},
         "new ArrayList<>() {{" + " " * 900),
        ({"language": "java", "type": "HashMap"}, "x" * 100_000),
    ]
    started = time.perf_counter()
    for spec, text in hostile:
        assert isinstance(literals.decode(spec, text), str | list | dict)
    assert time.perf_counter() - started < 5.0
