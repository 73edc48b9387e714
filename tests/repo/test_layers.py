"""The layer rule, read from the source with `ast` (imports inside functions included):

    epbench (2)                            the command line: the only layer that knows both below
    epbench.runner, epbench.generator (1)  side by side, never importing each other
    epbench.core (0)                       the base: imports nothing of the project

No module imports a module of a higher layer, and the import graph has no cycle.

Each part keeps its own top-level folder; `epbench/` links to them (pyproject.toml), so the
folder a module lives in and its import name are mapped here, once.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from epbench.core.paths import SOURCE_FOLDERS
from tests.conftest import ROOT

# folder -> import name: the project's one map (epbench.core.paths), and the top floor
FOLDERS = {folder: name for name, folder in SOURCE_FOLDERS.items()} | {"epbench": "epbench"}
LAYERS = {"epbench.core": 0, "epbench.runner": 1, "epbench.generator": 1, "epbench": 2}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([FOLDERS[parts[0]], *parts[1:]])


def modules() -> dict[str, Path]:
    """Every module under its import name; the links inside epbench/ are not walked twice."""
    out: dict[str, Path] = {}
    for folder in FOLDERS:
        for path in (ROOT / folder).rglob("*.py"):
            if not any(parent.is_symlink() for parent in path.parents):
                out[module_name(path)] = path
    return out


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
    top = ".".join(module.split(".")[:2])
    top = top if top in LAYERS else "epbench"
    return top, LAYERS[top]


def test_the_import_reader_sees_lazy_conditional_relative_and_from_imports(
        tmp_path: Path) -> None:
    known = {"epbench.generator", "epbench.generator.site", "epbench.runner",
             "epbench.runner.plan", "epbench.core", "epbench.core.paths"}
    probe = tmp_path / "generator" / "probe.py"
    probe.parent.mkdir()
    probe.write_text("def f():\n    from epbench.runner import plan\n"
                     "if False:\n    import epbench.core.paths as p\n"
                     "from . import site\n", encoding="utf-8")
    assert imported("epbench.generator.probe", probe, known) == {
        "epbench.runner.plan", "epbench.core.paths", "epbench.generator.site"}


def test_the_project_has_modules_in_every_layer() -> None:
    tops = {layer(name)[0] for name in modules()}
    assert tops == set(LAYERS)


def test_each_folder_is_linked_from_the_installed_package_under_its_import_name() -> None:
    for folder, name in FOLDERS.items():
        if folder != "epbench":
            link = ROOT / "epbench" / name.split(".")[1]
            assert link.is_symlink() and link.resolve() == ROOT / folder, link


def test_no_module_imports_an_old_top_level_name() -> None:
    """`epcore`, `runner` and `generator` are folders, not import names: only `epbench` is
    installed, so such an import would work in a checkout and fail from the wheel."""
    old = {"epcore", "runner", "generator"}
    bad = []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom)
                     and not node.level else [])
            bad += [f"{name} imports {n}" for n in names if n.split(".")[0] in old]
    assert bad == []


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


def test_the_import_graph_has_no_cycle() -> None:
    """Any length, not only pairs: a depth-first walk finds no edge back to a module still
    on its path (a package's __init__ importing its own submodules counts like any import)."""
    edges = graph()
    state: dict[str, int] = {}
    cycles: list[str] = []

    def walk(node: str, path: list[str]) -> None:
        state[node] = 1
        for dep in sorted(edges.get(node, ())):
            if state.get(dep) == 1:
                cycles.append(" -> ".join([*path[path.index(dep):], dep]))
            elif dep not in state:
                walk(dep, [*path, dep])
        state[node] = 2

    for module in sorted(edges):
        if module not in state:
            walk(module, [module])
    assert cycles == []


@pytest.mark.parametrize("folder", ["workloads", "endpoints", "results"])
def test_data_folders_hold_no_python(folder: str) -> None:
    assert sorted((ROOT / folder).rglob("*.py")) == []


BUILD = "epbench.generator.build"
"""The incremental build's machinery (generator/build/: cache, row store, cold shards, cache
writer, page manifest), behind its one interface module."""


def reached(edges: dict[str, set[str]], start: str) -> set[str]:
    """Every module `start` imports, directly or through others."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for dep in edges.get(todo.pop(), ()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


@pytest.mark.parametrize("domain", ["epbench.generator.validate", "epbench.generator.tables",
                                    "epbench.generator.pages"])
def test_validation_tables_and_pages_reach_nothing_of_the_build_machinery(domain: str) -> None:
    bad = sorted(m for m in reached(graph(), domain) if m == BUILD or m.startswith(BUILD + "."))
    assert bad == []


def test_only_the_site_and_the_build_itself_import_the_build_machinery() -> None:
    """The site's assembly (site, and page_rows for the page manifest's digests) and the
    command line use the build package, and only through its interface module."""
    users = {"epbench.generator.site", "epbench.generator.page_rows"}
    edges = graph()
    inside = {m for m in edges if m == BUILD or m.startswith(BUILD + ".")}
    bad = [f"{name} imports {dep}" for name, deps in edges.items() if name not in inside
           for dep in sorted(deps & inside)
           if dep != BUILD or (layer(name)[0] == "epbench.generator" and name not in users)]
    assert bad == []
