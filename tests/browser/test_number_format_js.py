"""lib/format.js (`fmt`, reached through site.js's `window.epbSite`) and
epbench.generator.number_format print every figure the same way: the values a page formats
in the browser (boards, home, compare) and the ones the build writes into a page (run,
endpoint, workload pages) read alike, tiny ones without an exponent and a figure that is
zero within float noise as 0."""

from __future__ import annotations

import random
from typing import Any

import pytest

from epbench.generator.number_format import fmt_number, fmt_pct, fmt_usd
from tests.browser.harness import open_page

pytestmark = [pytest.mark.browser]

# Hand-picked edges, then seeded random figures over sixteen orders of magnitude. (Whole
# numbers are left out: JSON cannot tell 1234.0 from 1234, and lib/format.js prints those exactly.)
EDGES = [1e-17, -1e-17, 3e-13, 1e-7, 2.5e-9, 0.00008687, 0.0938, 0.123456, 0.5, 1.005, 1.5,
         -2.345, 99.96, 999.4, 999.6, 1234.5678, 12345.6, 0.9999, 0.006]


def figures(seed: int, n: int = 400) -> list[float]:
    rng = random.Random(seed)
    out = list(EDGES)
    while len(out) < n:
        value = rng.choice([1, -1]) * 10 ** rng.uniform(-10, 6)
        if value != int(value):
            out.append(value)
    return out


def test_site_js_and_python_format_every_figure_alike(chrome: Any, site_url: str) -> None:
    values = figures(2026)
    page, log = open_page(chrome)
    page.goto(site_url)
    page.wait_for_function("() => window.epbSite")
    in_browser = page.evaluate(
        "vs => vs.map(v => [window.epbSite.fmt(v, 'num'), window.epbSite.fmt(v, 'usd'),"
        " window.epbSite.fmt(v, 'pct')])", values)
    in_python = [[fmt_number(v), fmt_usd(v), fmt_pct(v)] for v in values]
    differ = [(v, js, py) for v, js, py in zip(values, in_browser, in_python, strict=True)
              if js != py]
    assert differ == []
    assert in_python[0] == ["0", "$0", "0%"]  # a bound at zero within float noise
    assert in_python[3][0] == "0.0000001"
    assert [text for row in in_browser for text in row if "e" in text] == []  # no exponent
    assert log.problems() == []
    page.context.close()
