"""epbench's verdict on every imported BFCL task equals the verdict of BFCL's own checker, on
the ground truth and on seeded perturbations of it, except where a difference is named (issue
14, "What it must show" 2; issue 26, "What it must show" 3).

BFCL's verdict comes from BFCL's code: `ast_checker` (and `is_empty_output` for irrelevance)
imported from the pinned bfcl-eval 2026.3.23 wheel (`tests/bfcl_checker.py`: fetched once with
pip into the test cache, two heavy imports stubbed). The entries are read from that same
wheel. epbench's verdict is the real path a first answer takes: the call classifier (JSON
Schema) and then `evaluate` with the imported task's checks.

Deliberate differences, each named by the test where it shows (and in docs/agentic/bfcl.md):
- `schema`: a call whose arguments break the tool's JSON Schema (a value outside an `enum`, a
  null for a string or number, a string "variable" for an integer, an empty array below
  `minItems`) is an invalid call in epbench; BFCL checks Python types but not the schema's
  other rules, and accepts such values when its answer lists them.
- `matching`: parallel calls are matched to the expected ones by a maximum matching in
  epbench; BFCL takes, for each expected call in turn, the first unused call that fits, and so
  can fail an answer that a one-to-one assignment accepts.
- `excluded`: entries no call can pass under epbench's rules, or whose values look like
  credentials to the secret scan, are not imported; each is listed in `source.excluded`.
Any other difference fails the test, with the entry, the perturbation and the answer.
"""

from __future__ import annotations

import copy
import json
import random
import re
import types
from collections import Counter
from typing import Any

import pytest

from epbench.core import bfcl_literals as literals
from epbench.generator.importers.bfcl import literal_spec, tool_name, workload
from epbench.generator.importers.bfcl_source import CATEGORIES, Entry, Source
from epbench.runner.agentic.assemble import AssembledCall
from epbench.runner.agentic.checks import Observed, ObservedCall, evaluate
from epbench.runner.agentic.classify import Classifier
from epbench.runner.agentic.model import Task, Workload, load_workload
from tests import bfcl_checker
from tests.conftest import need

KINDS = ("truth", "wrong_value", "missing_required", "extra_argument", "int_for_float",
         "float_for_int", "string_case", "reordered", "no_call", "call_when_none",
         "ints_in_float_array", "floats_in_int_array", "empty_optional_array",
         "missing_optional", "missing_expected", "wrong_type", "wrong_enum")  # fmt: skip
LITERAL_KINDS = ("literal_spelling", "json_text", "quoted_string", "not_a_string")
"""Java and JavaScript only, on the strings sent: another spelling of the same literal (an
ArrayList built with add(), `new Array(...)`), the value written as JSON instead of a literal
(`50` for a long, `[1, 2]` for an ArrayList), a String in quotes, the value itself unquoted."""
NAMED = ("schema", "matching")
EXCLUDED_REASONS = (  # the `excluded` difference: the reasons docs/agentic/bfcl.md names
    r".+'s '.+' is expected but not declared",
    r"no accepted value of .+'s '.+' fits its schema",
    r".+'s required '.+' has no accepted value",
    r"a value looks like a credential to epbench's secret scan",
    r"no (Java|JavaScript) literal stands for an accepted value of .+'s '.+'",
    r".+'s '.+': BFCL does not convert .+",
    r"the answer for key '.+' is not a list of accepted values",
)
MAX_SCHEMA_SHARE = 0.10


def _concrete(option: Any, kind: str, rng: random.Random) -> Any:
    """One concrete value from a BFCL option (dict answers carry per-key option lists)."""
    if kind == "dict" and isinstance(option, dict):
        out = {}
        for key, values in option.items():
            picks = [v for v in values if v != ""]
            if picks and ("" not in values or rng.random() < 0.5):
                out[key] = rng.choice(picks)
        return out
    if isinstance(option, list) and option and all(isinstance(o, dict) for o in option):
        return [_concrete(o, "dict", rng) for o in option]
    return option


def truth_output(entry: Entry, rng: random.Random) -> list[dict[str, Any]]:
    """A first answer BFCL accepts: per argument, one of its listed values (an optional one
    left out half the time)."""
    out = []
    for answer in entry.ground_truth or []:
        ((name, params),) = answer.items()
        function = next(f for f in entry.functions if f["name"] == name)
        props = function["parameters"]["properties"]
        args = {}
        for param, options in params.items():
            picks = [o for o in options if o != ""]
            if picks and ("" not in options or rng.random() < 0.5):
                kind = props.get(param, {}).get("type", "string")
                args[param] = _concrete(rng.choice(picks), kind, rng)
        out.append({tool_name(name): args})
    return out


def _call(entry: Entry, output: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any],
                                                          dict[str, Any]]:
    """(arguments, the function's BFCL properties, the call's ground-truth options)."""
    ((name, args),) = output.items()
    function = next(f for f in entry.functions if tool_name(f["name"]) == name)
    truth = next((params for answer in entry.ground_truth or []
                  for n, params in answer.items() if tool_name(n) == name), {})
    return args, function["parameters"], truth


def _wrong(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 7
    if isinstance(value, str):
        return value + "qzx"
    if isinstance(value, list):
        return [*value, value[0]] if value else ["qzx"]
    if isinstance(value, dict):
        return {**value, "qzx": 1}
    return "qzx"


def _retyped(value: Any) -> Any:
    """The value as another JSON type."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return 7
    if isinstance(value, list):
        return json.dumps(value)
    return "qzx"


def _items(props: dict[str, Any], key: str) -> str | None:
    param = props.get(key, {})
    if param.get("type") in ("array", "tuple"):
        return str(param.get("items", {}).get("type"))
    return None


def perturb(kind: str, entry: Entry, base: list[dict[str, Any]], rng: random.Random
            ) -> list[dict[str, Any]] | None:
    """The base answer changed in one way, or None when the change does not apply."""
    out = copy.deepcopy(base)
    if kind == "truth":
        return out
    if kind == "no_call":
        return [] if out else None
    if kind == "call_when_none":
        if out or not entry.functions:
            return None
        return [{tool_name(entry.functions[0]["name"]): {}}]
    if kind == "reordered":
        return out[::-1] if len(out) > 1 and out[0] != out[-1] else None
    if not out:
        return None
    call = rng.choice(out)
    args, params, truth = _call(entry, call)
    props = params.get("properties", {})
    required = params.get("required", [])
    if kind == "extra_argument":
        args["qzx_extra"] = 1
        return out
    keys: list[str]
    if kind == "missing_required":
        keys = [p for p in required if p in args]
    elif kind == "missing_optional":
        keys = [p for p in args if p not in required and "" in truth.get(p, [])]
    elif kind == "missing_expected":
        keys = [p for p in args if p not in required and "" not in truth.get(p, [""])]
    elif kind in ("wrong_value", "wrong_type"):
        keys = list(args)
    elif kind == "empty_optional_array":
        keys = [p for p in truth if _items(props, p) and "" in truth[p]]
    elif kind == "ints_in_float_array":
        keys = [p for p, v in args.items() if _items(props, p) == "float" and isinstance(v, list)
                and any(type(x) is float and x.is_integer() for x in v)]
    elif kind == "floats_in_int_array":
        keys = [p for p, v in args.items() if _items(props, p) == "integer"
                and isinstance(v, list) and any(type(x) is int for x in v)]
    elif kind == "wrong_enum":
        keys = [p for p in args if isinstance(props.get(p, {}).get("enum"), list)
                and any(e not in truth.get(p, []) for e in props[p]["enum"])]
    else:
        typed = {"int_for_float": "float", "float_for_int": "integer", "string_case": "string"}
        keys = [k for k, v in args.items() if props.get(k, {}).get("type") == typed[kind]
                and not isinstance(v, bool)]
        if kind == "int_for_float":
            keys = [k for k in keys if isinstance(args[k], float) and args[k].is_integer()]
        if kind == "string_case":
            keys = [k for k in keys if isinstance(args[k], str) and args[k]]
        if kind == "float_for_int":
            keys = [k for k in keys if isinstance(args[k], int)]
    if not keys:
        return None
    key = rng.choice(sorted(keys))
    if kind in ("missing_required", "missing_optional", "missing_expected"):
        del args[key]
    elif kind == "wrong_value":
        args[key] = _wrong(args[key])
    elif kind == "wrong_type":
        args[key] = _retyped(args[key])
    elif kind == "empty_optional_array":
        args[key] = []
    elif kind == "ints_in_float_array":
        args[key] = [int(x) if type(x) is float and x.is_integer() else x for x in args[key]]
    elif kind == "floats_in_int_array":
        args[key] = [float(x) if type(x) is int else x for x in args[key]]
    elif kind == "wrong_enum":
        args[key] = rng.choice([e for e in props[key]["enum"] if e not in truth.get(key, [])])
    elif kind == "int_for_float":
        args[key] = int(args[key])
    elif kind == "float_for_int":
        args[key] = float(args[key])
    else:
        args[key] = args[key].upper().replace(" ", ", ") + "."
    return out


def _spelled(spec: dict[str, str], value: Any) -> str | None:
    """Another spelling of the literal BFCL reads the same way, where the type has one."""
    nested = spec.get("items")
    if spec["type"] == "ArrayList" and isinstance(value, list) and value:
        parts = [literals.encode({"language": "java", "type": str(nested)}, v) for v in value]
        if nested in ("String", "char"):
            parts = [f'"{v}"' for v in value]
        if any(p is None for p in parts):
            return None
        return "new ArrayList<Object>() {{ " + " ".join(f"add({p});" for p in parts) + " }}"
    if spec["type"] == "array" and isinstance(value, list):
        text = literals.encode(spec, value)
        return None if text is None else f"new Array({text[1:-1]})"
    if spec["type"] == "String" and spec["language"] == "javascript" and isinstance(value, str):
        return f'"{value}"'
    return None


def literal_output(kind: str, entry: Entry, category: str, output: list[dict[str, Any]],
                   rng: random.Random) -> list[dict[str, Any]] | None:
    """A Java/JavaScript answer: every argument as the string literal a model sends (a value
    with no literal is sent as JSON text), changed in one way for the literal kinds."""
    language = bfcl_checker.language(category, None)
    if language == "python":
        return None if kind in LITERAL_KINDS else output
    out = copy.deepcopy(output)
    places = []
    for call in out:
        ((name, args),) = call.items()
        props = next(f for f in entry.functions
                     if tool_name(f["name"]) == name)["parameters"]["properties"]
        for key, value in args.items():
            if key not in props:
                continue
            spec = literal_spec(props[key], language)
            places.append((args, key, spec, value))
            text = literals.encode(spec, value) if not literals.supported(
                language, spec["type"], spec.get("items")) else None
            args[key] = text if text is not None else (
                value if isinstance(value, str) else json.dumps(value))
    if kind not in LITERAL_KINDS:
        return out
    rng.shuffle(places)
    for args, key, spec, value in places:
        if kind == "literal_spelling":
            text = _spelled(spec, value)
        elif kind == "json_text":
            text = None if isinstance(value, str) else json.dumps(value)
            text = None if text == args[key] else text
        elif kind == "quoted_string":
            text = f'"{value}"' if isinstance(value, str) else None
        else:
            text = value if not isinstance(value, str) else None
        if text is not None:
            args[key] = text
            return out
    return None


def epbench_verdict(wl: Workload, task: Task, output: list[dict[str, Any]]) -> tuple[bool, bool]:
    """(epbench's verdict, some call broke the tool's JSON Schema)."""
    seen = wl.for_task(task)
    numbers = iter(range(1_000))
    classifier = Classifier(seen.tools, lambda: f"x{next(numbers)}")
    assembled = [
        AssembledCall(index=i, id=f"c{i}", name=n, arguments=json.dumps(a))
        for i, call in enumerate(output)
        for n, a in call.items()
    ]
    classified = classifier.classify(assembled, cut=False, length=False)
    observed = Observed([ObservedCall(c.name, c.arguments, c.cls) for c in classified], ["Done."])
    params = {t.name: t.parameters for t in seen.tools}
    schema_broken = any(c.cls == "schema_mismatch" for c in classified)
    return not evaluate(task.checks, observed, params), schema_broken


def assignment_exists(bfcl: types.SimpleNamespace, category: str, entry: Entry,
                      output: list[dict[str, Any]]) -> bool:
    """BFCL's own per-call check, with a one-to-one assignment of calls found by augmenting
    paths instead of BFCL's greedy first fit."""
    truth = entry.ground_truth or []
    if len(truth) != len(output):
        return False
    language = bfcl_checker.language(category, bfcl)
    fits = [
        [j for j, out in enumerate(output) if bfcl.ast.simple_function_checker(
            next(f for f in entry.functions if f["name"] == next(iter(answer))),
            copy.deepcopy(out), answer, language, bfcl_checker.MODEL)["valid"]]
        for answer in truth
    ]
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in fits[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return all(augment(i, set()) for i in range(len(truth)))


def difference(bfcl: types.SimpleNamespace, category: str, entry: Entry,
               output: list[dict[str, Any]], theirs: bool, ours: bool,
               schema_broken: bool) -> str | None:
    """The methodology's name for a disagreement, or None when it has none."""
    if schema_broken and theirs and not ours:
        return "schema"
    if ours and not theirs and assignment_exists(bfcl, category, entry, output):
        return "matching"
    return None


@pytest.fixture(scope="module")
def bfcl() -> types.SimpleNamespace:
    try:
        return bfcl_checker.load()
    except Exception as exc:  # no network, no pip, a changed wheel: say which
        need(f"BFCL's checker from the {bfcl_checker.PIN} wheel: {type(exc).__name__}: {exc}")
        raise


@pytest.fixture(scope="module")
def source(bfcl: types.SimpleNamespace) -> Source:
    return Source(bfcl_checker.wheel())


def compare(bfcl: types.SimpleNamespace, source: Source, category: str
            ) -> tuple[Counter[str], list[tuple[Any, ...]], int]:
    """(tally by perturbation and named difference, unnamed differences, tasks imported)."""
    entries = source.entries(category)
    doc = workload(category, entries, source.version)
    wl = load_workload(doc)
    tasks = {t.id: t for t in wl.tasks}
    excluded = {e["id"] for e in doc["source"].get("excluded", [])}
    assert len(tasks) + len(excluded) == len(entries)  # every entry imported or named
    for item in doc["source"].get("excluded", []):  # and each for a reason the docs name
        assert any(re.fullmatch(r, item["reason"]) for r in EXCLUDED_REASONS), item
    tally: Counter[str] = Counter()
    unnamed = []
    for entry in entries:
        if entry.id in excluded:
            tally["excluded"] += 1
            continue
        rng = random.Random(f"bfcl-agreement/{entry.id}")
        base = truth_output(entry, rng)
        for kind in (*KINDS, *LITERAL_KINDS):
            output = perturb("truth" if kind in LITERAL_KINDS else kind, entry, base, rng)
            if output is not None:
                output = literal_output(kind, entry, category, output, rng)
            if output is None:
                continue
            theirs = bfcl_checker.verdict(bfcl, category, copy.deepcopy(entry.functions),
                                          copy.deepcopy(entry.ground_truth),
                                          copy.deepcopy(output))
            ours, schema_broken = epbench_verdict(wl, tasks[entry.id], output)
            tally[kind] += 1
            if ours == theirs:
                continue
            name = difference(bfcl, category, entry, output, theirs, ours, schema_broken)
            if name is None:
                unnamed.append((entry.id, kind, theirs, ours, output))
            else:
                tally[f"difference: {name}"] += 1
    return tally, unnamed, len(tasks)


@pytest.mark.parametrize("category", CATEGORIES)
def test_every_difference_from_bfcls_own_checker_is_one_the_methodology_names(
        bfcl: types.SimpleNamespace, source: Source, category: str):
    tally, unnamed, imported = compare(bfcl, source, category)
    print(category, dict(tally), [u[:4] for u in unnamed[:5]])
    assert not unnamed, f"{len(unnamed)} differences with no name, first: {unnamed[:3]}"
    assert tally["truth"] == imported
    compared = sum(v for k, v in tally.items() if k in (*KINDS, *LITERAL_KINDS))
    assert tally["difference: schema"] <= MAX_SCHEMA_SHARE * compared


def test_the_checker_is_bfcls_own_from_the_pinned_wheel(bfcl: types.SimpleNamespace):
    assert bfcl_checker.WHEEL in (bfcl.ast.__file__ or "")
    assert bfcl_checker.wheel().name == "bfcl_eval-2026.3.23-py3-none-any.whl"


def _one(source: Source, category: str, entry_id: str) -> tuple[Entry, Workload, Task]:
    entries = source.entries(category)
    entry = next(e for e in entries if e.id == entry_id)
    wl = load_workload(workload(category, [entry], source.version))
    return entry, wl, wl.tasks[0]


def test_ints_in_an_array_of_floats_fail_in_both(bfcl: types.SimpleNamespace, source: Source):
    entry, wl, task = _one(source, "simple_python", "simple_python_13")  # interval: [1.0, 3.0]
    ((name, args),) = truth_output(entry, random.Random(0))[0].items()
    floats = [{name: dict(args)}]
    ints = [{name: {**args, "interval": [int(x) for x in args["interval"]]}}]
    assert args["interval"] == [1.0, 3.0] and all(type(x) is float for x in args["interval"])
    for output, want in ((floats, True), (ints, False)):
        assert bfcl_checker.verdict(bfcl, "simple_python", entry.functions, entry.ground_truth,
                                    copy.deepcopy(output)) is want
        assert epbench_verdict(wl, task, output)[0] is want


def test_an_empty_list_for_an_optional_array_passes_in_both(bfcl: types.SimpleNamespace,
                                                            source: Source):
    entry, wl, task = _one(source, "simple_python", "simple_python_354")  # ingredient_preference
    ((name, args),) = truth_output(entry, random.Random(0))[0].items()
    ((_, options),) = entry.ground_truth[0].items()
    optional = [k for k, v in options.items() if v == [""]]
    assert optional  # BFCL marks an array argument optional with [""] only
    output = [{name: {**args, optional[0]: []}}]
    assert bfcl_checker.verdict(bfcl, "simple_python", entry.functions, entry.ground_truth,
                                copy.deepcopy(output))
    assert epbench_verdict(wl, task, output)[0]
