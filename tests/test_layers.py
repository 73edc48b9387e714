"""The layer rule, read from the source with `ast` (imports inside functions included):

    epbench (2)        the command line: the only layer that knows both below
    runner, generator (1)  side by side, never importing each other
    epcore (0)         the base: imports nothing of the project

No module imports a module of a higher layer, and no two modules import each other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = {"epcore": 0, "runner": 1, "generator": 1, "epbench": 2}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for package in LAYERS for p in (ROOT / package).rglob("*.py")}


def imported(name: str, path: Path, known: set[str]) -> set[str]:
    """Project modules `name` imports anywhere in its file (top level, functions, TYPE_CHECKING).

    `from a.b import c` counts as importing a.b.c when that is a module, else a.b."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                       for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {name: imported(name, path, known) for name, path in found.items()}


def layer(module: str) -> tuple[str, int]:
    top = module.split(".")[0]
    return top, LAYERS[top]


def test_the_import_reader_sees_lazy_conditional_relative_and_from_imports(
        tmp_path: Path) -> None:
    known = {"generator", "generator.site", "runner", "runner.plan", "epcore", "epcore.paths"}
    probe = tmp_path / "generator" / "probe.py"
    probe.parent.mkdir()
    probe.write_text("def f():\n    from runner import plan\n"
                     "if False:\n    import epcore.paths as p\n"
                     "from . import site\n", encoding="utf-8")
    assert imported("generator.probe", probe, known) == {
        "runner.plan", "epcore.paths", "generator.site"}


def test_the_project_has_modules_in_every_layer() -> None:
    tops = {name.split(".")[0] for name in modules()}
    assert tops == set(LAYERS)


def test_no_module_imports_a_module_of_a_higher_layer() -> None:
    bad = [f"{name} (layer {layer(name)[1]}) imports {dep} (layer {layer(dep)[1]})"
           for name, deps in graph().items() for dep in sorted(deps)
           if layer(dep)[1] > layer(name)[1]]
    assert bad == []


def test_runner_and_generator_never_import_each_other() -> None:
    bad = [f"{name} imports {dep}" for name, deps in graph().items() for dep in sorted(deps)
           if {layer(name)[0], layer(dep)[0]} == {"runner", "generator"}]
    assert bad == []


def test_no_two_modules_import_each_other() -> None:
    edges = graph()
    pairs = sorted({tuple(sorted((a, b))) for a, deps in edges.items() for b in deps
                    if a in edges.get(b, set())})
    assert pairs == []


@pytest.mark.parametrize("folder", ["workloads", "endpoints", "results"])
def test_data_folders_hold_no_python(folder: str) -> None:
    assert sorted((ROOT / folder).rglob("*.py")) == []
