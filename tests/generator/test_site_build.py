"""`build_site` end to end (mkdocs build --strict included) on a small project: the sample
results, a few generated ones and a result whose every string is a script or HTML payload."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from epbench.generator.downloads import read_csv, read_table
from epbench.generator.site import build_site
from tests.browser.site_data import make_project

pytestmark = pytest.mark.slow

PAGES = ["index.html", "serving/index.html", "agentic/index.html", "cost/index.html",
         "history/index.html", "workloads/index.html", "methodology/index.html",
         "schemas/index.html"]
# A resource the browser would load by itself: script, stylesheet, image, frame, font, media.
_RESOURCE = re.compile(
    r"<(?:script|img|iframe|source|video|audio|embed|object)\b[^>]*\s(?:src|data)=\"([^\"]*)\""
    r"|<link\b[^>]*\shref=\"([^\"]*)\"", re.I)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = make_project(tmp_path_factory.mktemp("project"), generated=6)
    return build_site(project / "results", tmp_path_factory.mktemp("out") / "_site", project,
                      base_url="https://example.org/epbench/")


def _html_pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def test_build_writes_every_page_and_one_page_per_result(site: Path) -> None:
    for page in PAGES:
        assert (site / page).is_file(), page
    runs = read_table(site / "data", "runs")
    assert len(runs) == 4 + 6 + 1 + 1  # samples, generated, self-reported copy, load levels
    for row in runs:
        page = site / row["page"] / "index.html"
        assert page.is_file(), row["page"]
        raw = site / row["result_path"]
        assert json.loads(raw.read_text(encoding="utf-8"))["run_id"] == row["run_id"]
    assert not (site / "runs" / "_shell").exists()
    assert "_shell" not in (site / "sitemap.xml").read_text(encoding="utf-8")


def test_result_page_shows_points_command_price_card_and_raw_link(site: Path) -> None:
    html = (site / "runs" / "a1b2c3d4-serviced-0001" / "index.html").read_text(encoding="utf-8")
    assert "<title>Acme Inference meta-llama/Llama-3.1-8B-Instruct: chat-short, 2026-11-20" in html
    assert "epbench run --endpoint acme-llama-8b --workload chat-short" in html
    assert 'href="../../results/alice/acme-llama-8b/2026-11-20-chat-short-a1b2c3d4.json"' in html
    assert html.count('<tr><td>c1</td>') == 1 and html.count('<tr><td>c8</td>') == 1
    assert "output, per M tokens</th><td>$0.20" in html
    assert "https://example.org/epbench/runs/a1b2c3d4" in html
    assert "EPBSHELL" not in html


def test_result_pages_carry_the_theme_without_its_indentation_and_blank_lines(
        site: Path) -> None:
    html = (site / "runs" / "a1b2c3d4-serviced-0001" / "index.html").read_text(encoding="utf-8")
    theme = html[:html.index('<div class="epb-result"')]
    assert '<header class="md-header"' in theme and "\n\n" not in theme
    assert not re.search(r"\n[ \t]+<", theme)
    board = (site / "serving" / "index.html").read_text(encoding="utf-8")
    assert "\n\n" in board  # the pages mkdocs writes keep theirs


def test_no_page_loads_a_resource_from_another_origin(site: Path) -> None:
    for page in _html_pages(site):
        html = page.read_text(encoding="utf-8")
        for match in _RESOURCE.finditer(html):
            url = match.group(1) or match.group(2) or ""
            if 'rel="canonical"' in match.group(0):
                continue
            assert not re.match(r"^(https?:)?//", url), f"{page}: {url}"
    for css in site.rglob("*.css"):
        text = css.read_text(encoding="utf-8")
        assert not re.search(r"url\(\s*['\"]?(https?:)?//", text), css
        assert "@import" not in text or "http" not in text, css


def test_every_page_has_a_policy_covering_exactly_its_inline_scripts(site: Path) -> None:
    from epbench.generator.csp import script_hashes

    for page in _html_pages(site):
        html = page.read_text(encoding="utf-8")
        meta = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', html)
        assert meta, page
        assert html.index(meta.group(0)) < html.index("<script"), page
        policy = meta.group(1)
        script_src = next(p for p in policy.split(";") if p.strip().startswith("script-src"))
        assert "unsafe-eval" not in script_src and "unsafe-inline" not in script_src
        for source in script_hashes(html):
            assert source in script_src, page
        assert "default-src 'self'" in policy and "object-src 'none'" in policy


def test_payload_result_is_escaped_in_the_html(site: Path) -> None:
    page = site / "runs" / "e0e0e0e0-xss-payloads" / "index.html"
    html = page.read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(" in html
    assert '<script>alert("xss' not in html and "<script>alert('xss" not in html
    for tag in ("<img", "<svg id=", "<b id=epb", "<script>alert"):
        assert tag not in html, tag
    assert "&lt;img id=&#34;epb-xss-img&#34; src=x onerror=" in html
    workloads = (site / "workloads" / "index.html").read_text(encoding="utf-8")
    assert 'href="javascript:' not in workloads and "&lt;svg" in workloads


def test_board_configuration_is_json_that_cannot_close_its_script(site: Path) -> None:
    html = (site / "serving" / "index.html").read_text(encoding="utf-8")
    body = re.search(r'<script type="application/json" id="epb-board-config">(.*?)</script>',
                     html, re.S)
    assert body
    config = json.loads(body.group(1))
    assert config["table"]["source"] == "runs"
    assert config["sources"] == {"points": "../data/view/points.json",
                                 "runs": "../data/view/runs.json"}
    assert [c["id"] for c in config["charts"]] == ["pareto", "ttft", "cost"]


def test_data_views_are_compact_and_match_the_tables(site: Path) -> None:
    runs = read_table(site / "data", "runs")
    history = json.loads((site / "data" / "view" / "history.json").read_text(encoding="utf-8"))
    index = history["columns"].index("run_id")
    assert sorted(r[index] for r in history["rows"]) == sorted(r["run_id"] for r in runs)
    # The boards read one result per endpoint x workload x client region: a rankable one
    # first, then one only its tier keeps from ranking (self-reported, which a reader may
    # include), then the newest.
    view = json.loads((site / "data" / "view" / "runs.json").read_text(encoding="utf-8"))

    def order(run: dict) -> tuple:
        only_tier = run["tier"] == "self-reported" and len(run["unranked_reasons"] or []) == 1
        return (not run["rankable"], not (run["rankable"] or only_tier),
                [-ord(c) for c in run["date"]], run["run_id"])

    latest: dict[tuple[str, str, str], dict] = {}
    for run in sorted(runs, key=order):
        latest.setdefault((run["endpoint_id"], run["workload_id"], run["client_region"] or ""),
                          run)
    index = view["columns"].index("run_id")
    assert sorted(r[index] for r in view["rows"]) == sorted(r["run_id"] for r in latest.values())
    assert len(read_csv(site / "data", "runs")) == len(runs)


def test_every_column_definition_links_to_a_section_of_the_methodology_page(site: Path) -> None:
    from epbench.generator.columns import DEFINITIONS

    page = (site / "methodology" / "index.html").read_text(encoding="utf-8")
    missing = sorted({anchor for _, anchor, _ in DEFINITIONS.values()
                      if anchor and f'id="{anchor}"' not in page})
    assert missing == []
