"""The registry decides what runs: each check group registers the function that runs it, with
its scope and its place in a fixed order, and check_result / check_endpoint run exactly that."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from epbench.core.findings import Finding
from epbench.generator import checks
from epbench.generator.checks import base
from epbench.generator.checks.base import Runner, Subject, on_result, runners
from tests.conftest import ROOT

DECORATORS = {"on_point", "on_result", "on_endpoint"}


def registering_modules() -> set[str]:
    """The modules under generator/checks/ whose source registers a runner."""
    out = set()
    for path in (ROOT / "generator" / "checks").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and any(
                    isinstance(d, ast.Call) and isinstance(d.func, ast.Name)
                    and d.func.id in DECORATORS for d in node.decorator_list):
                parts = path.relative_to(ROOT / "generator").with_suffix("").parts
                out.add("epbench.generator." + ".".join(parts))
    return out


def test_every_module_that_registers_a_runner_is_a_group_check_result_imports() -> None:
    registered = {r.run.__module__ for r in base.RUNNERS}
    assert registering_modules() == registered
    assert registered == {group.__name__ for group in checks.GROUPS}


def test_a_second_runner_at_a_taken_place_is_refused() -> None:
    taken = runners("result")[0].order
    with pytest.raises(ValueError, match=f"two result runners at order {taken}"):
        on_result(taken)(lambda s: [])
    assert sum(1 for r in base.RUNNERS if r.scope == "result" and r.order == taken) == 1


def _noting(name: str) -> Any:
    def run(s: Subject, *point: Any) -> list[Finding]:
        where = point[0] if point else ""
        return [Finding(s.file, where, name, "warn", name, "")]
    return run


def test_check_result_runs_points_first_then_results_in_order_and_only_where_they_apply(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "RUNNERS", [
        Runner("result", 30, _noting("needs-index"), needs_index=True),
        Runner("result", 20, _noting("epbench-only"), epbench_only=True),
        Runner("result", 10, _noting("always")),
        Runner("point", 10, _noting("point")),
        Runner("endpoint", 10, _noting("endpoint")),
    ])
    result: dict[str, Any] = {"points": [{}, {}], "source": {"format": "epbench"}}

    def ran(doc: dict[str, Any], index: Any = None) -> list[str]:
        return [f"{f.check}{f.pointer}" for f in
                checks.check_result(doc, "r.json", Path("r.json"), index)]

    assert ran(result) == ["point/points/0", "point/points/1", "always", "epbench-only"]
    assert ran(result, index=object()) == ["point/points/0", "point/points/1", "always",
                                           "epbench-only", "needs-index"]
    imported = {**result, "source": {"format": "vllm-bench"}}
    assert ran(imported, index=object()) == ["point/points/0", "point/points/1", "always",
                                             "needs-index"]
    assert [f.check for f in checks.check_endpoint({}, "e.yaml")] == ["endpoint"]
