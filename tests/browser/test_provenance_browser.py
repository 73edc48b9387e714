"""Provenance on the site, in real Chromium: a self-reported result stays out of the boards
(History too) and the home page's answer until the reader includes it, its run page and its
History row and mark say its tier, and the History downloads carry the tier and its reason."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest

from epbench.generator.downloads import read_table
from tests.browser.harness import open_page, wait_for_board
from tests.browser.site_data import SELF_REPORTED_RUN

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _rows(page: Any) -> list[str]:
    return list(page.evaluate("() => window.epbBoard.visibleRunIds()"))


def test_a_self_reported_row_is_left_out_of_the_board_until_the_reader_includes_it(
    chrome: Any, site_url: str,
) -> None:
    page, log = open_page(chrome)
    page.goto(site_url + "serving/")
    wait_for_board(page)
    shown = _rows(page)
    assert shown and SELF_REPORTED_RUN not in shown
    assert "1 self-reported result (no verified attestation) is hidden" in page.text_content(
        "#epb-board")
    assert not page.is_checked("#epb-f-self_reported")
    page.check("#epb-f-self_reported")
    page.wait_for_function("id => window.epbBoard.visibleRunIds().includes(id)",
                           arg=SELF_REPORTED_RUN, timeout=15000)
    assert "self_reported=1" in page.url
    row = page.locator(f"tr[data-run='{SELF_REPORTED_RUN}']")
    assert "self-reported" in row.inner_text()
    assert set(shown) <= set(_rows(page))  # the attested rows stay
    # the address holds the choice
    again, _ = open_page(chrome)
    again.goto(site_url + "serving/?self_reported=1")
    wait_for_board(again)
    assert again.is_checked("#epb-f-self_reported") and SELF_REPORTED_RUN in _rows(again)
    assert log.problems() == []
    page.context.close()
    again.context.close()


def test_the_run_page_of_a_self_reported_result_says_its_tier(chrome: Any, site_url: str) -> None:
    page, log = open_page(chrome)
    page.goto(site_url + f"runs/{SELF_REPORTED_RUN}/")
    text = page.text_content("#tier") or ""
    assert text.startswith("Provenance: self-reported (no attestation bundle).")
    assert page.is_visible("#tier")
    assert "Not ranked: self-reported: no attestation bundle" in page.text_content(".epb-rank")
    attested, _ = open_page(chrome)
    attested.goto(site_url + "runs/a1b2c3d4-serviced-0001/")
    assert (attested.text_content("#tier") or "").startswith("Provenance: attested")
    assert log.problems() == []
    page.context.close()
    attested.context.close()


def _history_rows_text(page: Any) -> str:
    """Every row of the History table as a reader sees it, every page of it shown."""
    page.evaluate("() => { const b = document.getElementById('epb-more');"
                  " while (b && !b.hidden) { b.click(); } }")
    return page.inner_text("#epb-table tbody")


def _chart_words(page: Any) -> str:
    """What the History chart says: its legend as drawn and its table of marks, opened."""
    legend = page.evaluate(
        """() => { const out = []; (function walk(n) { if (!n) { return; }
          if (n.marktype === 'text' && n.role === 'legend-label') {
            n.items.forEach(i => out.push(String(i.text))); }
          (n.items || []).forEach(walk); })(window.epbBoard.view().scenegraph().root);
          return out; }""")
    if not page.eval_on_selector("#epb-chart-alt", "d => d.open"):
        page.click("#epb-chart-alt summary")
    return "\n".join(legend) + "\n" + page.inner_text("#epb-chart-alt")


def test_history_shows_no_self_reported_mark_until_the_reader_includes_it_then_names_its_tier(
    chrome: Any, site_url: str,
) -> None:
    page, log = open_page(chrome)
    page.goto(site_url + "history/")
    wait_for_board(page)
    shown = _rows(page)
    assert shown and SELF_REPORTED_RUN not in shown
    assert "self-reported" not in _history_rows_text(page)
    assert "self-reported" not in _chart_words(page)
    assert "attested" in _history_rows_text(page)  # each row says its tier
    assert "1 self-reported result (no verified attestation) is hidden" in page.text_content(
        "#epb-note")
    assert not page.is_checked("#epb-f-self_reported")
    page.check("#epb-f-self_reported")
    page.wait_for_function("id => window.epbBoard.visibleRunIds().includes(id)",
                           arg=SELF_REPORTED_RUN, timeout=15000)
    page.evaluate("() => window.epbBoard.idle()")
    assert "self_reported=1" in page.url
    row = page.locator(f"#epb-table tr[data-run='{SELF_REPORTED_RUN}']")
    assert "self-reported" in row.inner_text()
    assert row.locator(".epb-tier").get_attribute("title") == (
        "Provenance: self-reported (no attestation bundle)")
    words = _chart_words(page)
    assert "(self-reported)" in words  # its own line in the legend, named with its tier
    alt = page.locator("#epb-chart-alt tbody tr", has_text=SELF_REPORTED_RUN)
    assert alt.count() == 1 and "self-reported" in alt.inner_text()
    assert set(shown) <= set(_rows(page))  # the attested rows stay
    assert log.problems() == []
    page.context.close()


def test_history_downloads_carry_each_rows_tier_and_reason(
    chrome: Any, site_url: str, built_site: Path,
) -> None:
    table = read_table(built_site / "data", "history")
    assert {"tier", "tier_reason"} <= set(table[0])
    mine = [r for r in table if r["run_id"] == SELF_REPORTED_RUN]
    assert [(r["tier"], r["tier_reason"]) for r in mine] == [
        ("self-reported", "no attestation bundle")]
    assert {r["tier"] for r in table if r["run_id"] != SELF_REPORTED_RUN} == {"attested"}
    page, log = open_page(chrome, accept_downloads=True)
    page.goto(site_url + "history/")
    wait_for_board(page)
    with page.expect_download() as info:
        page.click("#epb-csv")
    rows = list(csv.DictReader(io.StringIO(Path(info.value.path()).read_text("utf-8"))))
    assert rows and {"tier", "tier_reason"} <= set(rows[0])
    assert "self-reported" not in {r["tier"] for r in rows}
    page.check("#epb-f-self_reported")
    page.wait_for_function("id => window.epbBoard.visibleRunIds().includes(id)",
                           arg=SELF_REPORTED_RUN, timeout=15000)
    with page.expect_download() as info:
        page.click("#epb-csv")
    rows = list(csv.DictReader(io.StringIO(Path(info.value.path()).read_text("utf-8"))))
    assert [(r["tier"], r["tier_reason"]) for r in rows if r["run_id"] == SELF_REPORTED_RUN] == [
        ("self-reported", "no attestation bundle")]
    assert log.problems() == []
    page.context.close()
