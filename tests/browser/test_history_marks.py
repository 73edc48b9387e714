"""The History chart: every mark of a day shows (marks that share a day are spread over it),
and its metric menu offers the figures a reader follows over time."""

from __future__ import annotations

from typing import Any

from tests.browser.harness import open_page, wait_for_board


def _marks(page: Any) -> list[dict[str, Any]]:
    page.evaluate("() => window.epbBoard.idle()")
    return list(page.evaluate("() => (window.epbBoard.chartData() || []).map("
                              "d => ({series: d.series, date: d.date, at: d.at, value: d.value}))"))


def test_history_marks_that_share_a_day_each_get_their_own_place(
        chrome: Any, site_url: str) -> None:
    page, log = open_page(chrome)
    page.goto(site_url + "history/")
    wait_for_board(page)
    marks = _marks(page)
    days: dict[str, list[str]] = {}
    for m in marks:
        days.setdefault(str(m["date"])[:10], []).append(str(m["at"]))
    shared = {d: ats for d, ats in days.items() if len(ats) > 1}
    assert shared, days  # the browser site has days with several results
    for day, ats in shared.items():
        assert len(set(ats)) == len(ats), (day, ats)  # none drawn on top of another
        assert all(at.startswith(day + "T") for at in ats), (day, ats)  # all within their day
    assert log.problems() == []
    page.context.close()


def test_history_offers_throughput_at_target_per_user_speed_and_decision_time(
        chrome: Any, site_url: str) -> None:
    page, log = open_page(chrome)
    page.goto(site_url + "history/")
    wait_for_board(page)
    options = page.eval_on_selector_all("select[name=metric] option", "os => os.map(o => o.value)")
    assert {"tps_at_target", "best_tps_per_user", "decision_ms_p90"} <= set(options), options
    for metric in ("tps_at_target", "best_tps_per_user", "decision_ms_p90"):
        page.select_option("select[name=metric]", metric)
        marks = _marks(page)
        assert marks and all(isinstance(m["value"], int | float) for m in marks), (metric, marks)
    assert log.problems() == []
    page.context.close()
