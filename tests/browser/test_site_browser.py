"""The built site in real Chromium: pages load cleanly, filters drive rows and charts, the URL
holds the view, downloads equal the visible rows, nothing leaves the origin, payloads stay
inert, and every control works from the keyboard."""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from epbench.generator.downloads import read_table
from tests.browser.harness import PageLog, open_page, wait_for_board

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGES = ["", "serving/", "agentic/", "cost/", "history/", "workloads/", "methodology/",
         "schemas/", "runs/a1b2c3d4-serviced-0001/", "runs/c3d4e5f6-agentic-0001/",
         "runs/e0e0e0e0-xss-payloads/"]


def _renders(page: Any) -> int:
    return int(page.eval_on_selector("#epb-board", "e => Number(e.dataset.renders || 0)"))


def _after(page: Any, before: int) -> None:
    page.wait_for_function(
        "n => Number(document.getElementById('epb-board').dataset.renders || 0) > n",
        arg=before, timeout=15000)


def _rows(page: Any) -> list[str]:
    return list(page.evaluate("() => window.epbBoard.visibleRunIds()"))


def _chart_rows(page: Any) -> list[dict[str, Any]]:
    return list(page.evaluate(
        "() => window.epbBoard.chartData().map(r => ({series: r.series}))"))


def _view(built_site: Path, name: str) -> list[dict[str, Any]]:
    view = json.loads((built_site / "data" / "view" / f"{name}.json").read_text("utf-8"))
    return [dict(zip(view["columns"], row, strict=True)) for row in view["rows"]]


def _open(chrome: Any, url: str, downloads: bool = False) -> tuple[Any, PageLog]:
    page, log = open_page(chrome, accept_downloads=downloads)
    page.goto(url)
    if page.query_selector("#epb-board"):
        wait_for_board(page)
    return page, log


def test_every_page_loads_cleanly_and_requests_nothing_from_another_origin(
        chrome: Any, site_url: str) -> None:
    for path in PAGES:
        page, log = _open(chrome, site_url + path)
        if page.query_selector("#epb-board"):
            data = page.eval_on_selector("#epb-board", "e => Object.assign({}, e.dataset)")
            assert "error" not in data and "chartError" not in data, (path, data)
            assert page.query_selector("#epb-chart canvas"), path
        page.wait_for_timeout(200)
        assert log.problems() == [], path
        foreign = [u for u in log.requests if not u.startswith(site_url)]
        assert foreign == [], path
        assert any(u.endswith(".js") for u in log.requests), path
        page.context.close()


def test_site_search_works_under_the_content_security_policy(chrome: Any, site_url: str) -> None:
    page, log = _open(chrome, site_url)
    page.focus(".md-search__input")
    page.keyboard.type("pareto")
    page.wait_for_selector(".md-search-result__item", timeout=15000)
    assert log.problems() == []
    assert [u for u in log.requests if not u.startswith(site_url)] == []
    page.context.close()


def test_a_filter_changes_the_rows_and_the_chart(chrome: Any, site_url: str,
                                                built_site: Path) -> None:
    page, log = _open(chrome, site_url + "serving/")
    everything = _rows(page)
    before = _renders(page)
    page.select_option("#epb-f-provider", "Bolt Cloud")
    _after(page, before)
    expected = sorted(r["run_id"] for r in _view(built_site, "runs")
                      if r["workload_kind"] == "serving" and r["provider"] == "Bolt Cloud"
                      and r["division"] != "emulated")
    assert sorted(_rows(page)) == expected and 0 < len(expected) < len(everything)
    series = {r["series"].split(" · ")[0] for r in _chart_rows(page)}
    assert series and all(s.startswith("bolt-") for s in series)
    assert "provider=Bolt+Cloud" in page.url
    # the chart was updated in place (a changeset), not embedded again
    assert len(page.query_selector_all(".epb-chart-view[data-chart='pareto']")) == 1
    assert page.text_content("#epb-count").startswith(f"{len(expected)} of ")
    assert log.problems() == []
    page.context.close()


def test_the_api_filter_keeps_the_results_of_one_wire_api(chrome: Any, site_url: str,
                                                         built_site: Path) -> None:
    page, log = _open(chrome, site_url + "serving/")
    before = _renders(page)
    page.select_option("#epb-f-api", "anthropic-messages")
    _after(page, before)
    expected = sorted(r["run_id"] for r in _view(built_site, "runs")
                      if r["workload_kind"] == "serving" and r["api"] == "anthropic-messages"
                      and r["division"] != "emulated")
    assert expected and sorted(_rows(page)) == expected
    assert "api=anthropic-messages" in page.url
    assert log.problems() == []
    page.context.close()


def test_a_permalink_reopens_the_same_filters_sort_and_chart(chrome: Any, site_url: str) -> None:
    page, _ = _open(chrome, site_url + "serving/")
    for action in (
        lambda: page.select_option("#epb-f-client_region", "eu-west"),
        lambda: page.check("#epb-f-emulated"),
        lambda: page.click("th[data-key='ttft_p90_ms_best'] button"),
        lambda: page.click("button[data-chart='ttft']"),
    ):
        before = _renders(page)
        action()
        _after(page, before)
    state = page.evaluate("() => window.epbBoard.state()")
    rows = _rows(page)
    chart = _chart_rows(page)
    link = page.url
    assert "chart=ttft" in link and "sort=ttft_p90_ms_best" in link
    page.context.close()

    again, log = _open(chrome, link)
    assert again.evaluate("() => window.epbBoard.state()") == state
    assert _rows(again) == rows
    assert _chart_rows(again) == chart
    assert again.get_attribute("button[data-chart='ttft']", "aria-pressed") == "true"
    sort = "ascending" if state["dir"] == "asc" else "descending"
    assert again.get_attribute("th[data-key='ttft_p90_ms_best']", "aria-sort") == sort
    assert again.input_value("#epb-f-client_region") == "eu-west"
    assert again.is_checked("#epb-f-emulated")
    assert log.problems() == []
    again.context.close()


def test_back_and_forward_move_between_views(chrome: Any, site_url: str) -> None:
    page, _ = _open(chrome, site_url + "serving/")
    all_rows = _rows(page)
    before = _renders(page)
    page.select_option("#epb-f-provider", "Acme Inference")
    _after(page, before)
    acme = _rows(page)
    before = _renders(page)
    page.select_option("#epb-f-client_region", "us-east")
    _after(page, before)
    narrowed = _rows(page)
    assert len(narrowed) < len(acme) < len(all_rows)
    for go, expected, provider in ((page.go_back, acme, "Acme Inference"),
                                   (page.go_back, all_rows, ""),
                                   (page.go_forward, acme, "Acme Inference")):
        before = _renders(page)
        go()
        _after(page, before)
        assert _rows(page) == expected
        assert page.input_value("#epb-f-provider") == provider
    page.context.close()


def test_downloads_hold_exactly_the_visible_rows(chrome: Any, site_url: str) -> None:
    page, _ = _open(chrome, site_url + "cost/", downloads=True)
    before = _renders(page)
    page.select_option("#epb-f-division", "serviced")
    _after(page, before)
    visible = _rows(page)
    assert visible
    with page.expect_download() as info:
        page.click("#epb-csv")
    text = Path(info.value.path()).read_text(encoding="utf-8")
    table = list(csv.DictReader(io.StringIO(text)))
    assert [r["run_id"] for r in table] == visible
    assert {r["division"] for r in table} == {"serviced"}
    with page.expect_download() as info:
        page.click("#epb-json")
    rows = json.loads(Path(info.value.path()).read_text(encoding="utf-8"))
    assert [r["run_id"] for r in rows] == visible
    page.context.close()


def test_the_run_page_journal_link_downloads_the_journal_the_result_pins(
    chrome: Any, site_url: str, built_site: Path,
) -> None:
    runs = read_table(built_site / "data", "runs")
    row = next(r for r in runs if r["journal_path"] and r["rankable"])
    doc = json.loads((built_site / row["result_path"]).read_text(encoding="utf-8"))
    pinned = doc["evidence"]
    page, log = _open(chrome, site_url + row["page"], downloads=True)
    line = page.locator(".epb-evidence").inner_text()
    assert f"download, {pinned['lines']} lines, sha256 {pinned['sha256']}" in line
    with page.expect_download() as info:
        page.locator(".epb-evidence a").click()
    data = Path(info.value.path()).read_bytes()
    assert info.value.suggested_filename == Path(row["journal_path"]).name
    assert hashlib.sha256(gzip.decompress(data)).hexdigest() == pinned["sha256"]
    first = next(r for r in map(json.loads, gzip.decompress(data).splitlines())
                 if "request_id" in r)
    assert page.locator(".epb-response-id").inner_text() == first["response_id"]
    shown = page.locator(".epb-server-headers tbody").inner_text()
    assert f"request-id\t{first['server_headers']['request-id']}" in shown, shown
    assert log.problems() == []
    page.context.close()
    bare = next(r for r in runs if not r["journal_path"])  # a sample without a journal
    page, _ = _open(chrome, site_url + bare["page"])
    assert page.locator(".epb-evidence").inner_text().startswith("Journal (evidence): none")
    assert page.locator(".epb-evidence a").count() == 0
    page.context.close()


def test_payload_strings_render_as_inert_text(chrome: Any, site_url: str) -> None:
    for path in ("serving/?q=xss", "cost/?q=xss", "runs/e0e0e0e0-xss-payloads/",
                 "workloads/", "history/?q=xss"):
        page, log = _open(chrome, site_url + path)
        page.mouse.move(10, 10)
        page.hover("body")
        injected = page.evaluate(
            "() => document.querySelectorAll('[id^=epb-xss], img[src=x], svg[onload]').length")
        assert injected == 0, path
        assert log.dialogs == [], path
        assert log.problems() == [], path
        if "q=xss" in path:
            assert len(_rows(page)) == 1, path
            text = page.text_content("#epb-table tbody")
            assert '"><img id="epb-xss-img"' in text, path
        page.context.close()


def _focus_trail(page: Any, presses: int) -> list[str]:
    trail = []
    for _ in range(presses):
        page.keyboard.press("Tab")
        trail.append(page.evaluate(
            "() => { const e = document.activeElement; if (!e) return '';"
            " if (e.id) return '#' + e.id;"
            " if (e.dataset.chart) return 'chart:' + e.dataset.chart;"
            " const th = e.closest('th'); if (th) return 'sort:' + th.dataset.key;"
            " return e.tagName; }"))
    return trail


def test_every_control_is_reachable_and_usable_by_keyboard(chrome: Any, site_url: str) -> None:
    page, log = _open(chrome, site_url + "serving/")
    ids = page.evaluate(
        "() => [...document.querySelectorAll('#epb-board select, #epb-board input,"
        " #epb-board button')].filter(e => !e.hidden && e.offsetParent !== null).map(e =>"
        " e.id ? '#' + e.id : e.dataset.chart ? 'chart:' + e.dataset.chart"
        " : 'sort:' + e.closest('th').dataset.key)")
    assert len(ids) > 20
    trail = _focus_trail(page, len(ids) + 60)
    assert set(ids) - set(trail) == set()

    page.focus("#epb-f-provider")
    before = _renders(page)
    page.keyboard.press("ArrowDown")
    _after(page, before)
    assert page.input_value("#epb-f-provider") != ""

    page.focus("th[data-key='max_system_tps'] button")
    before = _renders(page)
    page.keyboard.press("Enter")
    _after(page, before)
    assert page.get_attribute("th[data-key='max_system_tps']", "aria-sort") == "ascending"

    page.focus("button[data-chart='cost']")
    before = _renders(page)
    page.keyboard.press("Space")
    _after(page, before)
    assert page.get_attribute("button[data-chart='cost']", "aria-pressed") == "true"
    assert page.text_content("#epb-chart-title").startswith("Cost per million")

    page.focus("#epb-f-emulated")
    before = _renders(page)
    page.keyboard.press("Space")
    _after(page, before)
    assert page.is_checked("#epb-f-emulated")

    page.focus("#epb-reset")
    before = _renders(page)
    page.keyboard.press("Enter")
    _after(page, before)
    assert page.input_value("#epb-f-provider") == "" and not page.is_checked("#epb-f-emulated")
    assert log.problems() == []
    page.context.close()


def test_chart_tooltips_carry_the_exact_values(chrome: Any, site_url: str) -> None:
    page, log = _open(chrome, site_url + "serving/")
    tips = page.evaluate(
        "() => { const out = []; const walk = n => { if (!n) return;"
        " if (n.tooltip) out.push(n.tooltip); (n.items || []).forEach(walk); };"
        " walk(window.epbBoard.view().scenegraph().root); return out; }")
    data = {(r["run_id"], r["point"]): r for r in page.evaluate(
        "() => window.epbBoard.chartData().map(r => Object.assign({}, r))")}
    assert tips
    for tip in tips:
        row = data[(tip["run_id"], tip["point"])]
        # Vega prints 12 significant digits: exact for a reader, not rounded to a few
        for key in ("tps_per_user", "system_tps"):
            assert float(tip[key]) == pytest.approx(row[key], rel=1e-11, abs=0)
    assert log.problems() == []
    page.context.close()


def test_history_fetches_daily_rows_and_loads_every_result_of_an_endpoint_on_demand(
        chrome: Any, site_url: str, built_site: Path) -> None:
    page, log = _open(chrome, site_url + "history/?emulated=1")
    fetched = [u for u in log.requests if "/data/view/" in u]
    assert any(u.endswith("/data/view/history.json") for u in fetched)
    assert not [u for u in fetched if "/data/view/history/" in u]  # no series yet
    daily = _view(built_site, "history")
    assert daily and all(r["results"] >= 1 for r in daily)
    every = _view(built_site, "runs")  # newest per series: its endpoints have history files
    endpoint = sorted({r["endpoint_id"] for r in every})[0]
    runs = read_table(built_site / "data", "runs")
    expected = sorted(r["run_id"] for r in runs if r["endpoint_id"] == endpoint)
    before = _renders(page)
    page.select_option("#epb-f-endpoint", endpoint)
    _after(page, before)
    page.evaluate("() => window.epbBoard.idle()")
    assert [u for u in log.requests if "/data/view/history/" in u]
    page.evaluate("() => { const b = document.getElementById('epb-more');"
                  " while (b && !b.hidden) { b.click(); } }")
    shown = sorted(page.evaluate(
        "() => Array.from(document.querySelectorAll('#epb-board tbody tr[data-run]'))"
        ".map(tr => tr.getAttribute('data-run'))"))
    assert shown == expected
    assert log.problems() == []
    page.context.close()
