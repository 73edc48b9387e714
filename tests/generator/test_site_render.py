"""Unit tests of the site generator's pieces: escaping, formatting, result pages, the home
page's answers, generated docs, chart specs and the CSP hashes. No mkdocs build here."""

from __future__ import annotations

import json
from pathlib import Path

import markdown
import pandas as pd
import pytest

from epbench.generator import charts, docs_gen
from epbench.generator.csp import HASHES_TOKEN, script_hashes, secure_html
from epbench.generator.latest import latest_runs, latest_views
from epbench.generator.pages import home_context, write_pages
from epbench.generator.plain_json import view_table
from epbench.generator.render import POINT_COLUMNS as PAGE_POINT_COLUMNS
from epbench.generator.render import (
    flatten,
    fmt_number,
    json_script,
    render,
    result_context,
    run_command,
    safe_json,
)
from epbench.generator.run_pages import SHELL_DIR, SHELL_TITLE, Shell, render_and_write
from epbench.generator.tables import (
    AGENTIC_COLUMNS,
    ENDPOINT_COLUMNS,
    HISTORY_COLUMNS,
    POINT_COLUMNS,
    RUN_COLUMNS,
)
from tests.conftest import ROOT

SAMPLE = ROOT / "tests/data/results/alice/acme-llama-8b/2026-11-20-chat-short-a1b2c3d4.json"


def test_safe_json_cannot_close_the_script_element() -> None:
    text = safe_json({"a": "</script><b>&"})
    assert text == '{"a":"\\u003c/script\\u003e\\u003cb\\u003e\\u0026"}'
    assert json.loads(text) == {"a": "</script><b>&"}


def test_json_script_carries_the_value_and_an_escaped_id() -> None:
    html = str(json_script({"x": "</script>"}, 'a"b'))
    assert html.startswith('<script type="application/json" id="a&#34;b">')
    inner = html.split(">", 1)[1].rsplit("</script>", 1)[0]
    assert "</" not in inner
    assert json.loads(inner) == {"x": "</script>"}


@pytest.mark.parametrize(("value", "text"), [
    (1234.5678, "1,230"), (0.123456, "0.123"), (12345.6, "12,300"), (None, "—"),
    (7, "7"), (1234567, "1,234,567"), (True, "yes"), (0.0, "0"), (float("nan"), "—"),
    (0.00008687, "0.0000869"), (0.5, "0.5"), (99.96, "100"), (-2.345, "-2.35"),
    (150.0, "150"), (float("inf"), "—"), (1e-17, "0"), (-1e-17, "0"), (1e-7, "0.0000001"),
])
def test_fmt_number_formats_hand_computed_values(value: object, text: str) -> None:
    assert fmt_number(value) == text


def test_flatten_gives_dotted_paths_and_keeps_scalar_lists() -> None:
    assert flatten({"a": {"b": 1, "c": [1, 2]}, "d": [{"e": 1}]}) == [
        ("a.b", 1), ("a.c", [1, 2]), ("d[0].e", 1)]


def test_run_command_reproduces_quick_and_client_region() -> None:
    doc = {"endpoint": {"id": "acme"}, "workload": {"id": "chat-short"},
           "settings": {"quick": True}, "client": {"region": "us east"}}
    assert run_command(doc) == (
        "epbench run --endpoint acme --workload chat-short --quick --client-region 'us east'")


def test_script_hashes_cover_inline_scripts_only() -> None:
    html = ('<script>alert(1)</script><script type="application/json">{}</script>'
            '<script src="x.js"></script><script>alert(1)</script>')
    assert script_hashes(html) == ["'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI='"]


def test_secure_html_puts_the_hashes_into_the_policy() -> None:
    html = f'<meta content="script-src \'self\' {HASHES_TOKEN}"><script>alert(1)</script>'
    out = secure_html(html)
    assert HASHES_TOKEN not in out
    assert "script-src 'self' 'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI='" in out


def test_view_table_keeps_known_columns_in_order_with_nulls() -> None:
    frame = pd.DataFrame({"b": [1.5, float("nan")], "a": ["x", "y"], "zz": [1, 2]})
    assert view_table(frame, ["a", "b", "missing"]) == {
        "columns": ["a", "b"], "rows": [["x", 1.5], ["y", None]]}


def _tables(rankable: bool = True) -> object:
    """Four serving runs (two of one endpoint) and one agentic run, by hand."""
    base = {"provider": "P", "model": "m", "region": "r", "client_region": "c",
            "submitter": "s", "disclosure_score": 1.0, "hardware": None,
            "submitter_relationship": "independent", "source_format": "epbench",
            "quick": False, "flags": [], "harness_version": "1"}
    runs = pd.DataFrame([
        {**base, "run_id": "run-aaaa1", "endpoint_id": "fast", "division": "serviced",
         "workload_id": "chat-short", "workload_kind": "serving", "date": "2026-11-01",
         "rankable": rankable},
        {**base, "run_id": "run-aaaa0", "endpoint_id": "fast", "division": "serviced",
         "workload_id": "chat-short", "workload_kind": "serving", "date": "2026-10-01",
         "rankable": rankable},
        {**base, "run_id": "run-bbbb2", "endpoint_id": "cheap", "division": "serviced",
         "workload_id": "chat-long", "workload_kind": "serving", "date": "2026-11-03",
         "rankable": rankable},
        {**base, "run_id": "run-cccc3", "endpoint_id": "emu", "division": "emulated",
         "workload_id": "chat-short", "workload_kind": "serving", "date": "2026-11-05",
         "rankable": False},
        {**base, "run_id": "run-dddd4", "endpoint_id": "agent", "division": "serviced",
         "workload_id": "tool", "workload_kind": "agentic", "date": "2026-11-02",
         "rankable": rankable},
    ])
    ident = ["run_id", "endpoint_id", "provider", "model", "division", "client_region",
             "workload_id", "date", "rankable"]
    by_run = runs.set_index("run_id")

    def point(run: str, name: str, user: float, system: float) -> dict[str, object]:
        row = {k: (run if k == "run_id" else by_run.loc[run, k]) for k in ident}
        return {**row, "point": name, "tps_per_user": user, "system_tps": system}

    points = pd.DataFrame([
        point("run-aaaa0", "c1", 40.0, 40.0),
        point("run-aaaa1", "c1", 50.0, 50.0),
        point("run-aaaa1", "c8", 25.0, 200.0),
        point("run-bbbb2", "c8", 21.0, 150.0),
        point("run-cccc3", "c8", 99.0, 999.0),
    ])
    agentic = pd.DataFrame([{**{k: by_run.loc["run-dddd4", k] for k in ident[1:]},
                             "run_id": "run-dddd4", "usd_per_successful_task": 0.02,
                             "success_rate": 0.75}])
    endpoints = pd.DataFrame([{"endpoint_id": "fast", "provider": "P", "model": "m",
                               "division": "serviced", "output_usd_per_mtok": 0.5,
                               "source_url": "https://p.example/prices"}])

    class T:
        pass

    t = T()
    # Every column the real tables have (those not set above are empty).
    t.runs = runs.reindex(columns=RUN_COLUMNS)  # type: ignore[attr-defined]
    t.points = points.reindex(columns=POINT_COLUMNS)  # type: ignore[attr-defined]
    t.agentic = agentic.reindex(columns=AGENTIC_COLUMNS)  # type: ignore[attr-defined]
    t.endpoints = endpoints.reindex(columns=ENDPOINT_COLUMNS)  # type: ignore[attr-defined]
    t.history = runs.reindex(columns=HISTORY_COLUMNS)  # type: ignore[attr-defined]
    return t


def test_latest_views_keep_the_newest_rankable_run_per_endpoint_workload_and_region() -> None:
    views = latest_views(_tables())
    latest = views["latest"]
    assert sorted(set(latest["run_id"])) == ["run-aaaa1", "run-bbbb2", "run-cccc3"]
    assert "run-aaaa0" not in set(latest["run_id"])  # an older run of the same endpoint
    assert set(latest.loc[latest["run_id"] == "run-aaaa1", "submitter_relationship"]) == \
        {"independent"}  # provenance joined from the runs table
    assert list(views["latest_agentic"]["run_id"]) == ["run-dddd4"]


def test_latest_runs_prefer_an_older_rankable_run_to_a_newer_unrankable_one() -> None:
    runs = pd.DataFrame([
        {"run_id": "new", "endpoint_id": "e", "workload_id": "w", "client_region": None,
         "date": "2026-11-02", "rankable": False},
        {"run_id": "old", "endpoint_id": "e", "workload_id": "w", "client_region": None,
         "date": "2026-11-01", "rankable": True},
    ])
    assert list(latest_runs(runs)["run_id"]) == ["old"]


def test_home_page_offers_the_most_measured_workload_first_with_its_counts() -> None:
    ctx = home_context(_tables())
    picker = ctx["picker"]
    assert picker["workloads"] == ["chat-short", "chat-long"]  # two endpoints, then one
    assert picker["defaults"] == {"workload": "chat-short", "target": "speed", "speed": 20.0,
                                  "ttft": 1000.0}
    assert picker["sources"]["latest"] == "data/view/latest.json"
    keys = [c["key"] for c in picker["columns"]]
    assert keys[:3] == ["rank", "endpoint_id", "system_tps"]
    cost = next(c for c in picker["columns"] if c["key"] == "usd_per_mtok_output")
    assert "input and output tokens" in cost["help"]
    assert cost["anchor"] == "formula-point_cost_usd"
    assert [r["run_id"] for r in ctx["newest"]][:2] == ["run-cccc3", "run-bbbb2"]
    assert ctx["counts"] == {"runs": 5, "serving": 4, "agentic": 1, "emulated": 1,
                             "endpoints": 4}


def test_result_context_lists_every_point_price_and_disclosure_field() -> None:
    doc = json.loads(SAMPLE.read_text(encoding="utf-8"))
    row = {"run_id": doc["run_id"], "flags": ["workload.sha256"], "disclosure_score": 0.9,
           "result_path": "results/alice/x.json", "frontier": ["c1"]}
    ctx = result_context(doc, row, root="../../")
    assert [p[0] for p in ctx["points"]] == ["c1", "c8"]
    assert ctx["points"][0][1] == "concurrency 1"
    frontier = PAGE_POINT_COLUMNS.index("on frontier")
    assert [p[frontier] for p in ctx["points"]] == [True, False]  # the frontier the row names
    assert ("output_usd_per_mtok", 0.2) in ctx["price_card"]
    disclosure = dict(ctx["disclosure"])
    assert disclosure["endpoint.region"] == "us-east-1"
    assert disclosure["client.rtt_ms"] == 12.5
    assert "endpoint.pricing.output_usd_per_mtok" not in disclosure
    assert ctx["command"] == "epbench run --endpoint acme-llama-8b --workload chat-short " \
                             "--client-region us-east"
    assert ctx["flags"] == [("workload.sha256", "fails the check that the workload sha256 "
                                                "matches the current file or a version in its "
                                                "git history")]


def test_each_flag_on_a_run_page_says_what_its_check_holds() -> None:
    doc = json.loads(SAMPLE.read_text(encoding="utf-8"))
    row = {"run_id": doc["run_id"], "disclosure_score": 0.9, "rankable": False,
           "result_path": "results/alice/x.json",
           "flags": ["plausible.imported-timing", "derived.failed-count", "made.up"]}
    page = render("result.html.j2", **result_context(doc, row, root="../../"))
    assert ("<li><code>plausible.imported-timing</code>: fails the check that every time an "
            "imported result carries is greater than zero</li>") in page
    assert ("<li><code>derived.failed-count</code>: a point fails the check that "
            "requests.failed equals requests.issued - requests.completed (such a point is left "
            "out of the boards)</li>") in page
    assert "<li><code>made.up</code></li>" in page


def test_a_hostile_result_reaches_its_written_page_escaped(tmp_path: Path) -> None:
    evil = "<script>alert(1)</script>"
    doc = json.loads(SAMPLE.read_text(encoding="utf-8"))
    doc["endpoint"]["provider"] = f"Acme {evil}"
    doc["endpoint"]["model"]["name"] = evil
    doc["points"][0]["id"] = "<img src=x onerror=alert(2)>"
    doc["points"][0]["tokens"]["source"] = "$<b>bold</b>"
    doc["client"]["os"] = '"><svg onload=alert(3)>'
    doc["endpoint"]["pricing"]["source_url"] = "javascript:alert(4)<i>"
    doc["agentic"] = {"tasks": [{"id": evil, "trials": 1, "successes": 0, "outcomes": []}],
                      "retry_cost": {evil: {"requests": 1, "tokens": 2, "seconds": 0.5,
                                            "usd": 0.1}},
                      "calls": {evil: 1}}
    results = tmp_path / "results"
    (results / "alice").mkdir(parents=True)
    (results / "alice" / "x.json").write_text(json.dumps(doc), encoding="utf-8")
    row = {"run_id": doc["run_id"], "disclosure_score": 0.9, "rankable": False,
           "unranked_reasons": [evil], "flags": [evil], "result_path": "results/alice/x.json",
           "frontier": ["c1"]}
    shell = Shell(f"<html><head><title>{SHELL_TITLE} - epbench</title>"
                  f'<link rel="canonical" href="/{SHELL_DIR}/"></head><body>',
                  f"<footer>{SHELL_TITLE}</footer></body></html>")
    assert render_and_write([row], results, tmp_path / "site", shell) == 1
    page = (tmp_path / "site" / "runs" / doc["run_id"] / "index.html").read_text()
    for hostile in (evil, "<img", "<b>", "<svg", "<i>"):
        assert hostile not in page, hostile
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert '<td class="epb-num">$&lt;b&gt;bold&lt;/b&gt;</td>' in page  # a $ text, aligned
    assert "&#34;&gt;&lt;svg onload=alert(3)&gt;" in page
    assert page.startswith("<html><head><title>Acme &lt;script&gt;")
    assert f'<link rel="canonical" href="/runs/{doc["run_id"]}/">' in page
    assert page.endswith("</footer></body></html>") and SHELL_TITLE not in page
    assert (results / "alice" / "x.json").read_bytes() == \
        (tmp_path / "site" / "results" / "alice" / "x.json").read_bytes()


def test_schema_reference_walks_refs_variants_and_arrays() -> None:
    docs = {d.file: d for d in docs_gen.schema_docs(ROOT / "schemas")}
    result = {f.path: f for f in docs["result.schema.json"].fields}
    assert result["run_id"].required is True
    assert "pattern" in result["run_id"].constraints
    assert "points[].ttft_ms.p90" in result
    assert result["endpoint"].type.endswith("(see endpoint.schema.json)")
    endpoint = {f.path: f for f in docs["endpoint.schema.json"].fields}
    assert endpoint["pricing.input_usd_per_mtok"].description.startswith("(price card")


def test_workloads_catalogue_keeps_untrusted_text_inert(tmp_path: Path) -> None:
    folder = tmp_path / "serving"
    folder.mkdir()
    (folder / "evil.yaml").write_text(
        'id: evil\nversion: "1.0"\ndescription: "<script>alert(1)</script> '
        '[x](javascript:alert(2))"\ntools:\n  - {name: "<b>t</b>", description: "<img src=x>"}\n',
        encoding="utf-8",
    )
    text = docs_gen.workloads_catalogue(tmp_path)
    html = markdown.markdown(text.split("---", 2)[2], extensions=["attr_list", "tables"])
    assert "<script>" not in html and "<img" not in html and "<b>t" not in html
    assert 'href="javascript:' not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "[x](javascript:alert(2))" in html


def test_methodology_names_every_class_the_schema_defines() -> None:
    text = docs_gen.methodology(ROOT / "schemas", ROOT / "docs" / "tables.md")
    schema = json.loads((ROOT / "schemas/result.schema.json").read_text(encoding="utf-8"))
    defs = schema["$defs"]
    classes = [*defs["errors"]["required"], *defs["agentic"]["properties"]["calls"]["required"],
               *defs["agentic"]["properties"]["retry_cost"]["required"]]
    for name in classes:
        assert f"`{name}`" in text, name
    assert "def request_cost_usd" not in text and "falls back to output_price" in text
    assert "`overloaded`" in text and "## Reasoning tokens" in text


@pytest.mark.parametrize("page", ["serving", "agentic", "cost", "history"])
def test_every_chart_reads_the_named_dataset_and_names_no_origin(page: str) -> None:
    for chart in charts.charts_for(page):
        spec = chart.spec
        assert spec["data"] == {"name": "rows"}
        assert "http" not in json.dumps(spec)
        assert chart.alt_columns


def test_pareto_chart_draws_the_frontier_as_a_step_before_line() -> None:
    spec = charts.pareto_chart().spec
    line = spec["layer"][0]
    assert line["mark"]["interpolate"] == "step-before"
    assert line["transform"] == [{"filter": "datum.frontier"}]


def test_nav_top_level_is_the_header_tabs_with_only_the_guides_that_exist(
        tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "guides").mkdir(parents=True)
    (docs / "guides" / "submit.md").write_text("# Submit\n", encoding="utf-8")
    nav = write_pages(docs, _tables(), ROOT)
    assert [next(iter(entry)) for entry in nav] == [
        "Home", "Serving", "Agentic", "Cost", "History", "Compare", "Workloads", "Methodology",
        "Submit"]
    guides = next(entry["Submit"] for entry in nav if "Submit" in entry)
    assert guides == [{"How to submit": "guides/submit.md"}]
    assert (docs / "compare.md").is_file()
    assert (docs / "serving.md").is_file() and (docs / "runs" / "_shell.md").is_file()


def test_a_run_that_fell_back_to_unstreamed_tool_calls_says_so_on_its_page() -> None:
    doc = json.loads(SAMPLE.read_text(encoding="utf-8"))
    doc.setdefault("settings", {})["fallbacks"] = [
        {"feature": "streamed_tool_calls", "fallback": "non-streamed",
         "reason": "llama-cpp-python <b>refuses</b> tools in a stream"}]
    row = {"run_id": doc["run_id"], "disclosure_score": 0.9, "rankable": True,
           "result_path": "results/alice/x.json", "flags": []}
    page = render("result.html.j2", **result_context(doc, row, root="../../"))
    flags = page.split('<h2 id="flags">Flags</h2>', 1)[1].split("<h2", 1)[0]
    assert "<p>None.</p>" not in flags
    assert ("<li>Tool calls were not streamed: the endpoint refuses tool calls in a stream, so "
            "the requests that offer tools were sent with stream: false") in flags
    assert ("the endpoint file says: llama-cpp-python &lt;b&gt;refuses&lt;/b&gt; tools in a "
            "stream</li>") in flags


def test_the_workloads_catalogue_lists_every_workload_a_run_can_name(tmp_path: Path) -> None:
    from epbench.core.paths import workload_ids, workloads_dir

    shipped = workloads_dir()
    runnable = workload_ids(tmp_path)  # an empty project: the shipped workloads
    assert any(p.parent.name == "bfcl" for p in shipped.glob("agentic/*/*.yaml"))
    docs = docs_gen.workload_docs(shipped)
    assert {d.id for d in docs} == runnable
    bfcl = [d for d in docs if d.id == "bfcl-multiple"]
    assert [d.file for d in bfcl] == ["workloads/agentic/bfcl/bfcl-multiple.yaml"]
    page = docs_gen.workloads_catalogue(shipped, frozenset(runnable))
    for workload_id in runnable:
        assert f'<a href="{workload_id}/">{workload_id}</a>' in page


def test_the_submit_guide_says_that_the_contact_it_asks_for_is_published_on_the_run_page() -> None:
    guide = (ROOT / "site/docs/guides/submit.md").read_text(encoding="utf-8")
    assert "**What is published about you.**" in guide
    for field in ("`name`", "`display_name`", "`contact`", "`relationship`"):
        assert field in guide.split("**What is published about you.**", 1)[1].split("\n\n")[0]
    doc = json.loads(SAMPLE.read_text(encoding="utf-8"))
    doc["submitter"]["contact"] = "alice@example.org"
    row = {"run_id": doc["run_id"], "disclosure_score": 0.9, "rankable": True,
           "result_path": "results/alice/x.json", "flags": []}
    page = render("result.html.j2", **result_context(doc, row, root="../../"))
    assert "alice@example.org" in page  # what the guide says: the run page shows it
