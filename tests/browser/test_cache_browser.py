"""What a reader sees of the prompt cache (issue 25): on the serving and cost boards and on
a run page, an endpoint whose usage reported cached tokens shows its hit rate (0% when it
read nothing from the cache), one whose usage never said shows "not reported by the
endpoint", and a result from before cache figures shows a dash, never 0%."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from epbench.core import evidence
from epbench.core.provenance import ATTESTED, Provenance
from tests.browser.harness import page_opener, serve
from tests.browser.site_data import (
    ENDPOINTS,
    journaled,
    make_project,
    result_path,
    serving_result,
)
from tests.browser.test_site_links import _cells
from tests.browser.test_site_look import _ready

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# cached input tokens each request's usage reported (of 128): None = it reported none
CACHED = {"acme-llama-70b": 64, "bolt-llama-8b": 0, "cirrus-mistral-7b": None}
SHOWN = {"acme-llama-70b": "50%", "bolt-llama-8b": "0%",
         "cirrus-mistral-7b": "not reported by the endpoint",
         "acme-llama-8b": "—"}  # the sample: written before cache figures


@pytest.fixture(scope="module")
def cache_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The sample results and one journaled serving result per endpoint of CACHED; returns
    the built site and each of those endpoints' run id."""
    import epbench.generator.validate
    from epbench.generator.site import build_site

    project = make_project(tmp_path_factory.mktemp("cache"), generated=0, xss=False)
    by_id = {ep.id: ep for ep in ENDPOINTS}
    rng = random.Random(25)
    runs = {}
    for i, (endpoint, cached) in enumerate(CACHED.items()):
        ep = by_id[endpoint]
        doc = serving_result(2500 + i, ep, date(2026, 11, 30), "us-east", "carol", rng)
        data = journaled(doc, ep, rng, cache_read=cached)
        path = result_path(project / "results", doc)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc), encoding="utf-8")
        evidence.pack(data, path.with_name(path.stem + evidence.SUFFIX))
        runs[endpoint] = doc["run_id"]

    def tier_of(*args: Any) -> Provenance:
        return Provenance(ATTESTED, "signed by the browser tests' stand-in")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(epbench.generator.validate, "tier_of", tier_of)
        site = build_site(project / "results", tmp_path_factory.mktemp("cache-out") / "_site",
                          project, base_url="", incremental=False)
    return site, runs


@pytest.fixture(scope="module")
def opened(chrome: Any, cache_site: tuple[Path, dict[str, str]]) -> Iterator[Any]:
    site, _ = cache_site
    with serve(site) as base, page_opener(chrome, _ready) as opener:
        yield lambda path: opener(base + path)


def _by_endpoint(page: Any, header: str) -> dict[str, str]:
    names = _cells(page, "endpoint")
    values = _cells(page, header)
    assert names and "error" not in names[0] and "error" not in values[0], (names, values)
    return {n["text"]: v["text"] for n, v in zip(names, values, strict=True)}


@pytest.mark.parametrize("board", ["serving", "cost"])
def test_a_board_shows_the_hit_rate_or_that_the_endpoint_did_not_report_it(
        opened: Any, board: str) -> None:
    page = opened(f"{board}/?unranked=1&emulated=1&self_reported=1")
    shown = _by_endpoint(page, "prompt-cache hit rate")
    assert {k: shown.get(k) for k in SHOWN} == SHOWN
    # the cost without cache prices sits beside it: these cards have no cached-input price,
    # so it equals the cost at max throughput
    plain = _by_endpoint(page, "same, without cache prices")
    priced = _by_endpoint(page, "$ per M output tokens at max throughput")
    assert all(plain[k] == priced[k] and plain[k].startswith("$") for k in CACHED), \
        (plain, priced)


def test_a_run_page_says_not_reported_where_the_endpoint_did_not_and_0_where_it_read_none(
        opened: Any, cache_site: tuple[Path, dict[str, str]]) -> None:
    _, runs = cache_site
    for endpoint in ("cirrus-mistral-7b", "bolt-llama-8b"):
        page = opened(f"runs/{runs[endpoint]}/")
        cells = page.evaluate(
            """() => {
              const table = [...document.querySelectorAll('table')].find(t =>
                [...t.querySelectorAll('thead th')].some(th =>
                  th.innerText.trim() === 'prompt-cache hit rate'));
              if (!table) return ['no points table with a prompt-cache hit rate'];
              const heads = [...table.querySelectorAll('thead th')].map(th => th.innerText.trim());
              const at = heads.indexOf('prompt-cache hit rate');
              return [...table.querySelectorAll('tbody tr')].map(r =>
                r.children[at].innerText.trim());
            }""")
        want = SHOWN[endpoint]
        assert cells and all(c == want for c in cells), (endpoint, cells)
