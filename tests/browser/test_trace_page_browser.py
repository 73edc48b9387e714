"""A trace workload's page in Chromium: its three charts drawn at the page's width in both
palettes, from data on the page only (no request leaves the site), and the source it names."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.harness import SHOT_TIMEOUT_MS, open_page
from tests.browser.test_site_look import SHOTS

pytestmark = [pytest.mark.browser]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_trace_workload_page_draws_arrival_rate_and_length_charts(
        chrome: Any, site_url: str, scheme: str) -> None:
    page, log = open_page(chrome)
    page.set_viewport_size({"width": 1366, "height": 900})
    page.emulate_media(color_scheme=scheme)
    page.goto(site_url + "workloads/trace-azure-code/")
    page.wait_for_function("() => document.querySelectorAll('#epb-trace-charts [data-ready]')"
                           ".length === 3", timeout=30000)
    figures = page.eval_on_selector_all(
        "figure.epb-trace-chart", "fs => fs.map(f => [f.dataset.chart, "
        "f.querySelector('canvas').getBoundingClientRect().width, "
        "f.querySelector('canvas').getBoundingClientRect().height])")
    assert [f[0] for f in figures] == ["arrivals", "inputs", "outputs"]
    assert all(width > 900 and height > 150 for _, width, height in figures), figures
    source = page.text_content(".epb-trace-source") or ""
    assert source.startswith("From Azure LLM inference trace 2023, code") and "CC-BY-4.0" in source
    assert page.get_attribute(".epb-trace-source a", "href") == \
        "https://github.com/Azure/AzurePublicDataset"
    facts = page.text_content(".epb-trace-facts") or ""
    assert "The replay sends 1,482 requests over 586 s" in facts
    assert log.errors == [] and not [m for m in log.console if m[0] == "error"]
    assert all(url.startswith(site_url) for url in log.requests), log.requests
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"workload-trace-charts-{scheme}.png"), full_page=True,
                    timeout=SHOT_TIMEOUT_MS)
    page.context.close()
