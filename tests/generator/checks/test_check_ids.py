"""A check id names where the check is defined: `workload.plan` is registered in a module of
the `workload` package (generator/checks/workload/), `dist.order` in generator/checks/dist.py.

The defining module is read from the source with `ast` (the call `check("id", ...)` that
registers it), so a module that only imports a check from another does not count, and every
id registered at run time must have been found that way.
"""

from __future__ import annotations

import ast
from pathlib import PurePosixPath

import epbench.generator.changes  # (registers the --changed-since checks)
import epbench.generator.validate  # noqa: F401  (imports every check module)
from epbench.generator.checks.base import CHECKS
from tests.conftest import ROOT

CHECKS_FOLDER = PurePosixPath("generator/checks")


def defined_in() -> dict[str, PurePosixPath]:
    """Each check id with the file whose `check("id", ...)` call registers it."""
    found: dict[str, PurePosixPath] = {}
    for path in sorted((ROOT / "generator").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id == "check" and node.args \
                    and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.args[0].value, str):
                found[node.args[0].value] = PurePosixPath(path.relative_to(ROOT).as_posix())
    return found


def homes(path: PurePosixPath) -> set[str]:
    """The names a check id's prefix may give for a module: its own, and the package it sits
    in below generator/checks/."""
    names = {path.stem}
    if path.parent != CHECKS_FOLDER and CHECKS_FOLDER in path.parents:
        names.add(path.parent.name)
    return names


def test_every_registered_check_is_found_where_it_is_defined() -> None:
    found = defined_in()
    assert set(CHECKS) <= set(found), f"registered but not found in the source: " \
        f"{sorted(set(CHECKS) - set(found))}"
    assert len(CHECKS) > 50  # every module was imported


def test_a_check_id_prefix_names_the_module_or_package_that_defines_it() -> None:
    found = defined_in()
    wrong = []
    for check_id in sorted(CHECKS):
        path = found[check_id]
        prefix = check_id.split(".")[0]
        if CHECKS_FOLDER not in path.parents or prefix not in homes(path):
            wrong.append(f"{check_id} is defined in {path}")
    assert not wrong, "check ids whose prefix is not their module's or package's name:\n" \
        + "\n".join(wrong)


def test_the_rule_reads_a_package_and_a_module_and_refuses_a_stray() -> None:
    # The rule on its own, so the test above cannot pass by accepting everything.
    assert "workload" in homes(PurePosixPath("generator/checks/workload/plan.py"))
    assert homes(PurePosixPath("generator/checks/dist.py")) == {"dist"}
    assert "plausible" not in homes(PurePosixPath("generator/checks/evidence.py"))
    assert "file" not in homes(PurePosixPath("generator/changes.py"))
