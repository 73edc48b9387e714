"""The home page's controls say what they take in and everything on the page follows them:
the unranked control is named for every unranked result it includes (its old address flag,
emulated=1, still opens the same view), and "Newest results" lists what the controls let in,
on the workload they choose."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from epbench.generator.downloads import read_table
from tests.browser.harness import page_opener
from tests.browser.test_site_look import _ready

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def home(chrome: Any) -> Iterator[Any]:
    with page_opener(chrome, _ready) as opener:
        yield opener


def _newest_shown(page: Any) -> list[str]:
    return list(page.eval_on_selector_all(
        ".epb-newest tbody tr", "rs => rs.filter(r => !r.hidden)"
        ".map(r => r.querySelector('a').getAttribute('href').split('/')[1])"))


def test_the_unranked_control_names_what_it_includes_and_reads_its_old_flag(
        home: Any, site_url: str) -> None:
    page = home(site_url)
    label = page.text_content("label[for='epb-b-unranked']") or ""
    assert label.startswith("Include unranked results (") and "quick" in label, label
    ranked = page.evaluate("() => window.epbBuyer.entries().length")
    page.check("#epb-b-unranked")
    page.wait_for_function("() => new URLSearchParams(location.search).get('unranked') === '1'")
    page.evaluate("() => window.epbBuyer.idle()")
    everything = page.evaluate("() => window.epbBuyer.entries()")
    assert len(everything) > ranked
    page.context.close()
    old = home(site_url + "?emulated=1")  # an address shared before the control was renamed
    assert old.is_checked("#epb-b-unranked")
    assert old.evaluate("() => window.epbBuyer.entries()") == everything
    assert old.is_hidden("#epb-param-notes")  # read, not refused as unknown
    old.context.close()


def test_newest_results_follow_the_controls(
        home: Any, site_url: str, built_site: Path) -> None:
    # newest first, run ids ascending within a day (as pages.home_context sorts them)
    by_date = sorted(read_table(built_site / "data", "runs"), key=lambda r: r["run_id"])
    by_date.sort(key=lambda r: r["date"], reverse=True)
    page = home(site_url)
    workload = page.evaluate("() => window.epbBuyer.state().workload")
    on = [r for r in by_date if r["workload_id"] == workload]
    # the page carries the newest results of every workload; it lists those of its workload
    assert len({r["workload_id"] for r in by_date[:8]}) > 1
    ranked = [r["run_id"] for r in on if r["rankable"]][:8]
    assert _newest_shown(page) == ranked
    assert f"Ranked results on {workload} only" in (page.text_content("#epb-newest-note") or "")
    page.check("#epb-b-unranked")
    page.evaluate("() => window.epbBuyer.idle()")
    shown = _newest_shown(page)
    assert shown == [r["run_id"] for r in on][:8]
    assert [r for r in shown if r not in ranked], "ticking the control lists unranked results"
    assert f"Ranked and unranked results on {workload}" in (
        page.text_content("#epb-newest-note") or "")
    page.context.close()
