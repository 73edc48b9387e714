"""What a person sees on every page type at a phone's 390 px, in Chromium (the desktop's
1366 px is test_site_look's): a screenshot of each is saved (test-artifacts/screenshots/, or
$EPB_SCREENSHOTS), and the tests assert what those screenshots show: no page wider than a
phone's screen, no Markdown backtick printed as text, and one endpoint's "$ per M output
tokens" at its point reading the same on the home page, the compare page and the boards."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.harness import page_opener
from tests.browser.test_site_look import PAGE_TYPES, _ready, read_every_page_type

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PHONE = 390


@pytest.fixture(scope="module")
def at_width(chrome: Any) -> Iterator[Any]:
    """Opens a page at the given window width and waits for its data."""
    with page_opener(chrome, _ready) as opener:
        yield lambda url, width: opener(url, width=width)


@pytest.fixture(scope="module")
def on_a_phone(at_width: Any, site_url: str) -> dict[str, dict[str, Any]]:
    """Every page type opened once at a phone's width, read by `read_page`."""
    return read_every_page_type(lambda url: at_width(url, PHONE), site_url, str(PHONE))


def test_every_page_type_fits_a_phones_screen_and_is_screenshotted(
        on_a_phone: dict[str, dict[str, Any]]) -> None:
    # (at 1366 px: test_site_look, whose light screenshots are the desktop ones)
    assert sorted(on_a_phone) == sorted(PAGE_TYPES)
    for facts in on_a_phone.values():
        assert facts["shot"].stat().st_size > 10_000, facts["shot"]
    wider = {name: (facts["sizes"], facts["overflowing"]) for name, facts in on_a_phone.items()
             if facts["sizes"][0] > facts["sizes"][1]}
    assert wider == {}


def test_no_page_prints_a_markdown_backtick(on_a_phone: dict[str, dict[str, Any]]) -> None:
    printed = {}
    for name, facts in on_a_phone.items():
        lines = [line for line in facts["text"].splitlines() if "`" in line]
        if lines:
            printed[name] = lines[:3]
    assert printed == {}


def _latest(built_site: Path) -> list[dict[str, Any]]:
    view = json.loads((built_site / "data" / "view" / "latest.json").read_text("utf-8"))
    return [dict(zip(view["columns"], row, strict=True)) for row in view["rows"]]


def _a_ranked_endpoints_busiest_point(built_site: Path) -> dict[str, Any]:
    """On the default workload (chat-short), an endpoint measured from one client region and
    ranked there, whose point of highest throughput is priced: that point's row."""
    rows = [p for p in _latest(built_site) if p["workload_id"] == "chat-short" and p["rankable"]
            and p["division"] == "self-hosted"]
    regions: dict[str, set[Any]] = {}
    for p in rows:
        regions.setdefault(p["endpoint_id"], set()).add(p["client_region"])
    endpoint = sorted(e for e, r in regions.items() if len(r) == 1)[0]
    busiest = max((p for p in rows if p["endpoint_id"] == endpoint),
                  key=lambda p: p["system_tps"])
    assert busiest["usd_per_mtok_output"] is not None
    return busiest


def _column(page: Any, table: str, key: str) -> int:
    keys = page.eval_on_selector_all(f"{table} thead th", "t => t.map(x => x.dataset.key)")
    return int(keys.index(key)) + 1


def test_an_endpoints_cost_at_its_point_reads_the_same_on_home_compare_and_the_boards(
        at_width: Any, site_url: str, built_site: Path) -> None:
    point = _a_ranked_endpoints_busiest_point(built_site)
    endpoint = point["endpoint_id"]
    # A per-user target its busiest point meets: the home and compare pages place the
    # endpoint there, the point the boards' rows stand for ("max system throughput").
    value = math.floor(point["tps_per_user"])
    home = at_width(site_url + f"?workload=chat-short&value={value}", 1366)
    column = _column(home, "#epb-ranked", "usd_per_mtok_output")
    shown = home.eval_on_selector_all(
        "#epb-ranked tbody tr", f"""(rs, id) => rs.filter(r => r.querySelector(
        `a[href$="endpoints/${{id}}/"]`)).map(r => r.cells[{column - 1}].innerText.trim())""",
        endpoint)
    entry = [e for e in home.evaluate("() => window.epbBuyer.entries()")
             if e["endpoint_id"] == endpoint]
    assert [e["point"] for e in entry] == [point["point"]]
    home.context.close()
    other = "lab-a10-sglang" if endpoint != "lab-a10-sglang" else "lab-h100-vllm"
    compare = at_width(site_url + f"compare/?workload=chat-short&value={value}"
                       f"&endpoints={endpoint},{other}", 1366)
    diff = compare.eval_on_selector_all(
        "#epb-diff-table tbody tr", "rs => rs.map(r => [...r.cells].map(c => c.innerText))"
        ".filter(c => c[0] === '$ per M output tokens there')")
    compare.context.close()
    figures = {"home": shown, "compare": [diff[0][1]] if diff else []}
    averages = {}
    for board in ("serving", "cost"):
        page = at_width(site_url + f"{board}/?endpoint={endpoint}&workload=chat-short", 1366)
        cells = {key: page.eval_on_selector_all(
            f"#epb-table tbody td:nth-child({_column(page, '#epb-table', key)})",
            "t => t.map(x => x.innerText.trim())")
            for key in ("usd_per_mtok_output_at_max_tps", "usd_per_mtok_output")}
        figures[board] = cells["usd_per_mtok_output_at_max_tps"]
        averages[board] = cells["usd_per_mtok_output"]
        heads = page.eval_on_selector_all("#epb-table thead th", "t => t.map(x => x.innerText)")
        # the whole-sweep average, where a board shows it, is named as what it is
        assert [h for h in heads if "per M output" in h and "max throughput" not in h
                and "whole-sweep average" not in h] == [], heads
        page.context.close()
    one = figures["home"][0] if figures["home"] else None
    assert one is not None and one.startswith("$"), figures
    assert figures == {"home": [one], "compare": [one], "serving": [one], "cost": [one]}
    # A self-hosted endpoint's quiet points cost the same hours for fewer tokens: the sweep's
    # average is another figure, and the boards give it its own column and name.
    assert averages["serving"] == averages["cost"] and averages["serving"] != [one], averages


def _right(page: Any, selector: str) -> float:
    return float(page.eval_on_selector(selector, "e => e.getBoundingClientRect().right"))


def test_on_a_phone_the_ranked_table_shows_its_cost_unscrolled_and_names_the_rest(
        at_width: Any, site_url: str) -> None:
    page = at_width(site_url, 390)
    edge = _right(page, "#epb-ranked-hint + .epb-scroll")
    assert _right(page, "#epb-ranked th[data-key='usd_per_mtok_output']") <= edge
    assert _right(page, "#epb-ranked caption") <= edge  # its sentence is read, not cut
    hint = page.text_content("#epb-ranked-hint") or ""
    assert page.is_visible("#epb-ranked-hint")
    assert hint.startswith("The table is wider than the page: scroll it sideways for "), hint
    page.context.close()
    wide = at_width(site_url, 1366)  # beside the chart, every column in view: no note
    assert wide.is_hidden("#epb-ranked-hint")
    wide.context.close()
