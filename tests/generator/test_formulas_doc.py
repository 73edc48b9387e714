"""The methodology page's formulas are the docstrings of the code that computes them, and
the page states no formula of its own beside them."""

from __future__ import annotations

import inspect
import re

from epbench.generator import docs_gen, formulas
from epbench.generator.render import code_spans
from tests.conftest import ROOT

TEMPLATE = ROOT / "site" / "templates" / "methodology.md.j2"


def page() -> str:
    return docs_gen.methodology(ROOT / "schemas", ROOT / "docs" / "tables.md")


def test_every_formula_block_is_the_current_docstring_of_its_code() -> None:
    text = page()
    for section, objects in formulas.SECTIONS.items():
        for obj in objects:
            doc = inspect.getdoc(obj)
            assert doc and "=" in doc, f"{obj!r} ({section}) has no formula in its docstring"
            # escaped, its `code spans` shown as code rather than printed with backticks
            assert str(code_spans(doc)) in text, f"the page does not show {obj!r}'s docstring"


def test_the_shared_maths_of_epcore_is_all_on_the_page() -> None:
    shown = {f.source for items in formulas.sections().values() for f in items}
    for name in ("latency", "throughput", "percentiles", "pareto", "passk", "wilson"):
        assert f"epcore/metrics/{name}.py" in shown


def test_the_template_writes_no_formula_by_hand() -> None:
    """A bold metric name followed by '=' is a formula written out: it belongs in a docstring."""
    template = TEMPLATE.read_text(encoding="utf-8")
    by_hand = re.findall(r"\*\*([^*]+)\*\* =", template)
    # Definitions of words, not of figures the code computes:
    assert set(by_hand) <= {"Output tokens", "Decision time", "first tool delta",
                            "Harness overhead", "Success rate"}, by_hand


def test_the_pareto_definition_on_the_page_is_the_dominance_rule_of_the_code() -> None:
    text = page()
    assert "q dominates p   when q.tps_per_user &gt;= p.tps_per_user and q.system_tps &gt;= " \
           "p.system_tps,\n                    at least one of them strictly greater" in text
    assert "both a higher" not in text


def test_a_function_without_a_docstring_cannot_be_shown() -> None:
    def undocumented() -> None:
        pass

    try:
        formulas.formula(undocumented)
    except ValueError as exc:
        assert "no docstring" in str(exc)
    else:
        raise AssertionError("a function without a docstring was accepted")
