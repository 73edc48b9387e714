"""Fuzzing: shipped endpoint, workload and result files, mutated (a field removed, replaced by a
value of another type, an unquoted YAML date, a nested list or mapping), are fed to the loaders
`epbench run` uses and to `epbench validate`. A mutation may be refused, with a line naming the
file; it never crashes a loader and never ends as the validator's `internal.error`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from epbench.core.documents import load_document
from epbench.core.errors import EpbenchError
from epbench.generator.validate import validate_paths
from epbench.runner.agentic.model import load_workload
from epbench.runner.agentic.semantics import validate_workload_semantics
from epbench.runner.endpoint import load_endpoint
from epbench.runner.workload import load_workload_file, serving_workload

ROOT = Path(__file__).resolve().parents[2]
SEEDS = {
    "endpoint": [ROOT / "endpoints/emulator.yaml",
                 ROOT / "endpoints/openai-compatible.yaml.example",
                 ROOT / "tests/data/endpoints/alice-h100-vllm.yaml"],
    "workload": [ROOT / "workloads/serving/chat-short.yaml", ROOT / "workloads/serving/burst.yaml",
                 ROOT / "workloads/agentic/retail-refund.yaml",
                 ROOT / "workloads/agentic/inventory-fault-recovery.yaml"],
    "result": [ROOT / "tests/data/results/carol/emulator/2026-11-23-chat-short-d4e5f6a7.json",
               ROOT / "tests/data/results/bob/acme-llama-8b/2026-11-22-tool-lookup-c3d4e5f6.json"],
}
DATE = "__UNQUOTED_DATE__"  # written into the YAML text without quotes, as a user would
_TMP_OK = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10**6, 10**12), st.floats(-1e9, 1e9),
    st.text(max_size=12), st.just(DATE), st.just(""), st.just(-1), st.just(0),
)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=6)


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for key, value in doc.items():
            out.extend(_paths(value, (*prefix, key)))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            out.extend(_paths(value, (*prefix, index)))
    return out


def _mutate(doc: Any, path: tuple[Any, ...], action: str, value: Any) -> Any:
    if not path:
        return value if action == "replace" else doc
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    if action == "delete":
        del parent[last]
    else:
        parent[last] = value
    return doc


def _write(doc: Any, name: str, folder: Path) -> Path:
    path = folder / name
    if path.suffix == ".json":
        path.write_text(json.dumps(doc).replace(json.dumps(DATE), '"2026-01-05"'), "utf-8")
    else:
        text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
        path.write_text(text.replace(DATE, "2026-01-05"), "utf-8")
    return path


def _run_loaders(what: str, path: Path) -> None:
    """What `epbench run` does with the file before the first request; only EpbenchError."""
    try:
        if what == "endpoint":
            load_endpoint(path, environ={"ACME_API_KEY": "k", "ALICE_KEY": "k"})
        elif what == "workload":
            loaded = load_workload_file(path)
            if loaded.kind == "serving-workload":
                serving_workload(loaded)
            else:
                if not validate_workload_semantics(loaded.doc, str(path)):
                    load_workload(loaded.doc)
    except EpbenchError:
        pass


@settings(max_examples=120, deadline=None, suppress_health_check=_TMP_OK,
          phases=[Phase.explicit, Phase.reuse, Phase.generate])  # no shrinking: minutes long
@given(data=st.data(), what=st.sampled_from(sorted(SEEDS)))
def test_mutated_files_never_crash_run_or_validate(tmp_path: Path, data: Any, what: str) -> None:
    seed = data.draw(st.sampled_from(SEEDS[what]))
    doc = load_document(seed)
    path = data.draw(st.sampled_from(_paths(doc)))
    action = data.draw(st.sampled_from(["delete", "replace", "replace"]))
    doc = _mutate(doc, path, action, data.draw(values))
    name = seed.name.removesuffix(".example")
    written = _write(doc, name, tmp_path)
    if what != "result":
        _run_loaders(what, written)
    report = validate_paths([written], workload_semantics=validate_workload_semantics)
    crashed = [f.line() for f in report.findings if f.check == "internal.error"]
    assert not crashed, (path, action, crashed)


def test_an_unquoted_date_reaches_every_check_as_the_string_it_was_written_as(
        tmp_path: Path) -> None:
    doc = load_document(ROOT / "endpoints/emulator.yaml")
    doc["pricing"]["effective_date"] = DATE
    written = _write(doc, "emulator.yaml", tmp_path)
    assert "effective_date: 2026-01-05\n" in written.read_text("utf-8")
    assert load_document(written)["pricing"]["effective_date"] == "2026-01-05"
    report = validate_paths([written])
    assert not report.blocking, [f.line() for f in report.findings]
