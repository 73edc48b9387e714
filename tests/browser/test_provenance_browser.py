"""Provenance on the site, in real Chromium: a self-reported result stays out of the board
and the home page's answer until the reader includes it, and its run page says its tier."""

from __future__ import annotations

from typing import Any

import pytest

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
