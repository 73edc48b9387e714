"""Pages that never mislead (issue 24): the compare page takes an agentic difference only
within one workload, and says so when the endpoints share none; the Agentic board and the home
page answer "most reliable at tool calling" per endpoint over the whole suite (pooled in Python,
epbench.generator.agentic_suite); the home page's "Newest results" follow its workload; and
the chart's caption is good English for one endpoint as for many.

The site here has agentic results on two workloads: tool-lookup (the sample's) and a copy of
it under another id, run by some endpoints only."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from epbench.core.metrics.wilson import wilson
from epbench.core.provenance import ATTESTED, Provenance
from epbench.generator.downloads import read_table
from epbench.generator.number_format import fmt_pct
from tests.browser.site_data import ENDPOINTS, SAMPLES, agentic_result, make_project, result_path
from tests.browser.test_site_look import _ready

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OTHER = "tool-lookup-b"  # the second agentic workload
ONLY_OTHER = "bolt-llama-8b"  # has an agentic result on OTHER alone
BOTH = "acme-llama-70b"  # on both workloads (its OTHER result is the newer)
SAMPLE = "acme-llama-8b"  # the sample's endpoint: tool-lookup alone


def _write_other_workload(project: Path) -> str:
    """The tool-lookup workload under another id; returns its sha256."""
    import hashlib

    text = (SAMPLES.parent / "workloads" / "agentic" / "tool-lookup.yaml").read_text("utf-8")
    data = text.replace("id: tool-lookup\n", f"id: {OTHER}\n").encode()
    (project / "workloads" / "agentic" / f"{OTHER}.yaml").write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def _add_other_results(project: Path, sha: str) -> None:
    by_id = {ep.id: ep for ep in ENDPOINTS}
    for i, endpoint in ((900, BOTH), (901, ONLY_OTHER)):
        doc = agentic_result(i, by_id[endpoint], date(2026, 11, 30), "us-east", "carol")
        doc["workload"] = {**doc["workload"], "id": OTHER, "sha256": sha}
        path = result_path(project / "results", doc)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc), encoding="utf-8")


@pytest.fixture(scope="module")
def honest_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every result attested, and every agentic one ranked (no test can write an agentic
    journal here; these tests check what the pages do with ranked results)."""
    import epbench.generator.tables
    import epbench.generator.validate
    from epbench.generator.site import build_site

    project = make_project(tmp_path_factory.mktemp("honest"), generated=12, xss=False)
    _add_other_results(project, _write_other_workload(project))
    real = epbench.generator.tables.rankability

    def rankability(doc: dict[str, Any], *args: Any) -> Any:
        return [] if "agentic" in doc else real(doc, *args)

    def tier_of(*args: Any) -> Provenance:
        return Provenance(ATTESTED, "signed by the browser tests' stand-in")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(epbench.generator.validate, "tier_of", tier_of)
        patch.setattr(epbench.generator.tables, "rankability", rankability)
        return build_site(project / "results", tmp_path_factory.mktemp("honest-out") / "_site",
                          project, base_url="", incremental=False)


@pytest.fixture(scope="module")
def honest(chrome: Any, honest_site: Path) -> Iterator[Any]:
    from tests.browser.harness import serve

    contexts: list[Any] = []
    with serve(honest_site) as base:
        def opener(path: str, width: int = 1366) -> Any:
            context = chrome.new_context(viewport={"width": width, "height": 900})
            contexts.append(context)
            page = context.new_page()
            page.goto(base + path)
            _ready(page)
            return page

        yield opener
        for context in contexts:
            context.close()


def _diff_rows(page: Any) -> dict[str, list[str]]:
    return dict(page.eval_on_selector_all(
        "#epb-diff-table tbody tr",
        "rs => rs.map(r => [r.querySelector('th').textContent,"
        " Array.from(r.querySelectorAll('td')).map(d => d.textContent)])"))


def _agentic(site: Path) -> list[dict[str, Any]]:
    return read_table(site / "data", "agentic")


def test_the_compare_page_takes_an_agentic_difference_only_within_a_shared_workload(
        honest: Any, honest_site: Path) -> None:
    rows = _agentic(honest_site)
    assert {r["workload_id"] for r in rows if r["endpoint_id"] == BOTH} == {"tool-lookup", OTHER}
    page = honest(f"compare/?endpoints={SAMPLE},{BOTH}")
    diff = _diff_rows(page)
    agentic = [label for label in diff if "agentic" in label]
    assert agentic, diff
    assert all(label.endswith((" on tool-lookup (newest)", " on tool-lookup ($)"))
               for label in agentic), agentic
    shared = [r for r in rows if r["workload_id"] == "tool-lookup"
              and r["endpoint_id"] == BOTH]
    rate = diff["agentic success rate on tool-lookup (newest)"]
    assert rate[1] == fmt_pct(shared[0]["success_rate"]), rate
    assert not page.query_selector(".epb-diff-none")


def test_the_compare_page_says_when_its_endpoints_share_no_agentic_workload(
        honest: Any) -> None:
    page = honest(f"compare/?endpoints={SAMPLE},{BOTH},{ONLY_OTHER}")
    diff = _diff_rows(page)
    assert [label for label in diff if "agentic" in label] == ["agentic"], diff
    note = page.text_content(".epb-diff-none") or ""
    assert "No agentic workload that every endpoint here has a result on" in note
    assert page.is_visible(".epb-diff-none")
    # every endpoint's agentic results are still listed, each with its workload
    listed = page.eval_on_selector_all(
        "#epb-agentic-table tbody tr",
        "rs => rs.map(r => r.children[0].textContent + ' ' + r.children[1].textContent)")
    assert f"{ONLY_OTHER} {OTHER}" in listed and f"{SAMPLE} tool-lookup" in listed, listed


def _pooled(rows: list[dict[str, Any]], endpoint: str) -> tuple[float, float, float]:
    newest: dict[str, dict[str, Any]] = {}
    for r in sorted(rows, key=lambda r: (r["date"], r["run_id"])):
        if r["endpoint_id"] == endpoint and r["rankable"]:
            newest.setdefault(r["workload_id"], r)
            if r["date"] > newest[r["workload_id"]]["date"]:
                newest[r["workload_id"]] = r
    n = sum(r["success_n"] for r in newest.values())
    wins = sum(round(r["success_rate"] * r["success_n"]) for r in newest.values())
    low, high = wilson(wins, n)
    return wins / n, low, high


def _suite_table(page: Any) -> list[list[str]]:
    return list(page.eval_on_selector_all(
        "#epb-suite .epb-suite-pool:not([hidden]) tbody tr",
        "rs => rs.map(r => Array.from(r.children).map(c => c.textContent))"))


def test_the_agentic_board_pools_each_endpoint_over_the_suite_above_the_per_workload_rows(
        honest: Any, honest_site: Path) -> None:
    rows = _agentic(honest_site)
    page = honest("agentic/")
    table = _suite_table(page)
    by_endpoint = {r[0]: r for r in table}
    assert set(by_endpoint) == {r["endpoint_id"] for r in rows if r["rankable"]}
    rate, low, high = _pooled(rows, BOTH)
    line = by_endpoint[BOTH]
    # the figures first (in view on a phone), then how much was pooled, then who
    assert line[1] == fmt_pct(rate) and line[5] == "2"
    assert line[2] == f"{fmt_pct(low)} – {fmt_pct(high)}", line
    one = next(r for r in rows if r["endpoint_id"] == BOTH and r["workload_id"] == OTHER)
    assert (one["suite_success_ci_low"], one["suite_success_ci_high"]) == pytest.approx(
        (low, high))
    assert (low, high) != pytest.approx((one["success_ci_low"], one["success_ci_high"]))
    suite_top = page.eval_on_selector("#epb-suite", "e => e.getBoundingClientRect().top")
    board_top = page.eval_on_selector("#epb-board", "e => e.getBoundingClientRect().top")
    assert suite_top < board_top


def test_the_home_page_answers_most_reliable_at_tool_calling_from_the_suite(
        honest: Any, honest_site: Path) -> None:
    rows = _agentic(honest_site)
    page = honest("")
    assert page.is_visible("#most-reliable")
    table = _suite_table(page)
    endpoints = sorted({r["endpoint_id"] for r in rows if r["rankable"]},
                       key=lambda e: (-_pooled(rows, e)[1], -_pooled(rows, e)[0], e))
    assert [r[0] for r in table] == endpoints[:5]
    assert {r[0]: r[1] for r in table}[BOTH] == fmt_pct(_pooled(rows, BOTH)[0])


def test_the_chart_caption_is_grammatical_for_one_endpoint_and_for_several(
        honest: Any) -> None:
    many = honest("").text_content("#epb-chart-caption") or ""
    assert "endpoints\u2019 newest results" in many and " 1 " not in many, many
    # a per-user speed only the fastest endpoint reaches: one series
    page = honest("")
    best: dict[str, float] = page.evaluate(
        """async () => {
          const w = window.epbBuyer.state().workload, best = {};
          (await window.epbSite.fetchView('data/view/latest.json')).forEach(p => {
            if (p.workload_id === w && p.rankable && p.tps_per_user != null) {
              best[p.endpoint_id] = Math.max(best[p.endpoint_id] || 0, p.tps_per_user);
            }
          });
          return best;
        }""")
    ordered = sorted(best.values(), reverse=True)
    assert len(ordered) >= 2 and ordered[0] > ordered[1]
    one = honest(f"?value={(ordered[0] + ordered[1]) / 2}")
    caption = one.text_content("#epb-chart-caption") or ""
    assert caption.startswith("The highest-ranked endpoint\u2019s newest results"), caption
    compare = honest(f"compare/?endpoints={SAMPLE}")
    caption = compare.text_content("#epb-chart-caption") or ""
    assert caption.startswith("The chosen endpoint\u2019s newest results"), caption
