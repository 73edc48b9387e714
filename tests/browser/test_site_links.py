"""One link rule on every board: an endpoint's name opens the endpoint's page (as on Home,
Compare, the suite table and the price cards), a result's date opens that result's run page.
Before, the name opened the run page on Serving and Agentic and the endpoint page in Cost's
price cards."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.harness import page_opener
from tests.browser.test_site_look import _ready

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def board(chrome: Any) -> Iterator[Any]:
    with page_opener(chrome, _ready) as opener:
        yield opener


def _cells(page: Any, header: str) -> list[dict[str, str]]:
    """The visible cells under `header` in the board's table: their text and link target."""
    return list(page.evaluate(
        """(header) => {
          const table = document.getElementById('epb-table');
          const heads = [...table.querySelectorAll('thead th')].map(th => th.innerText.trim());
          const bare = h => h.split('\\n')[0].replace(/[▲▼?]/g, '').trim();
          const at = heads.findIndex(h => bare(h) === header);
          if (at < 0) return [{error: 'no column ' + header + ' in ' + heads.join(' | ')}];
          return [...table.querySelectorAll('tbody tr')].filter(r => !r.hidden).map(r => {
            const cell = r.children[at], a = cell.querySelector('a');
            return {text: cell.innerText.trim(), href: a ? a.getAttribute('href') : ''};
          });
        }""", header))


@pytest.mark.parametrize("name", ["serving", "agentic", "cost"])
def test_a_boards_endpoint_name_opens_the_endpoint_and_its_date_opens_the_run(
        board: Any, site_url: str, name: str) -> None:
    page = board(site_url + f"{name}/?unranked=1&emulated=1&self_reported=1")
    names = _cells(page, "endpoint")
    assert names and "error" not in names[0], names[:1]
    for cell in names:
        assert cell["href"].endswith(f"endpoints/{cell['text']}/"), cell
    dates = _cells(page, "date")
    assert dates and "error" not in dates[0], dates[:1]
    assert all("/runs/" in "/" + d["href"] and d["text"][:4].isdigit() for d in dates), dates[:3]


def test_the_cost_pages_price_cards_follow_the_same_rule(board: Any, site_url: str) -> None:
    page = board(site_url + "cost/")
    links = page.eval_on_selector_all(
        "table:not(#epb-table) tbody tr td:first-child a",
        "as => as.map(a => [a.innerText.trim(), a.getAttribute('href')])")
    assert links
    assert all(href.endswith(f"endpoints/{text}/") for text, href in links), links
