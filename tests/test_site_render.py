"""Unit tests of the site generator's pieces: escaping, formatting, result pages, the home
page's answers, generated docs, chart specs and the CSP hashes. No mkdocs build here."""

from __future__ import annotations

import json
from pathlib import Path

import markdown
import pandas as pd
import pytest

from generator import charts, docs_gen
from generator.render import (
    flatten,
    fmt_number,
    json_script,
    result_context,
    run_command,
    safe_json,
)
from generator.site import (
    HASHES_TOKEN,
    _write_pages,
    home_context,
    script_hashes,
    secure_html,
    view_table,
)

ROOT = Path(__file__).resolve().parent.parent
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
    (1234.5678, "1235"), (0.123456, "0.1235"), (12345.6, "12,346"), (None, "—"),
    (7, "7"), (1234567, "1,234,567"), (True, "yes"), (0.0, "0"), (float("nan"), "—"),
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
    """Three serving runs and one agentic run, by hand."""
    base = {"provider": "P", "model": "m", "region": "r", "client_region": "c",
            "submitter": "s", "disclosure_score": 1.0, "hardware": None}
    runs = pd.DataFrame([
        {**base, "run_id": "run-aaaa1", "endpoint_id": "fast", "division": "serviced",
         "workload_id": "chat-short", "workload_kind": "serving", "date": "2026-11-01",
         "ttft_p90_ms_best": 90.0, "usd_per_mtok_output": 0.5, "rankable": rankable},
        {**base, "run_id": "run-bbbb2", "endpoint_id": "cheap", "division": "serviced",
         "workload_id": "chat-short", "workload_kind": "serving", "date": "2026-11-03",
         "ttft_p90_ms_best": 300.0, "usd_per_mtok_output": 0.1, "rankable": rankable},
        {**base, "run_id": "run-cccc3", "endpoint_id": "emu", "division": "emulated",
         "workload_id": "chat-short", "workload_kind": "serving", "date": "2026-11-05",
         "ttft_p90_ms_best": 10.0, "usd_per_mtok_output": 0.01, "rankable": False},
        {**base, "run_id": "run-dddd4", "endpoint_id": "agent", "division": "serviced",
         "workload_id": "tool", "workload_kind": "agentic", "date": "2026-11-02",
         "ttft_p90_ms_best": None, "usd_per_mtok_output": None, "rankable": rankable},
    ])
    points = pd.DataFrame([
        {"run_id": "run-aaaa1", "point": "c1", "tps_per_user": 50.0, "system_tps": 50.0},
        {"run_id": "run-aaaa1", "point": "c8", "tps_per_user": 25.0, "system_tps": 200.0},
        {"run_id": "run-aaaa1", "point": "c32", "tps_per_user": 10.0, "system_tps": 320.0},
        {"run_id": "run-bbbb2", "point": "c8", "tps_per_user": 21.0, "system_tps": 150.0},
        {"run_id": "run-cccc3", "point": "c8", "tps_per_user": 99.0, "system_tps": 999.0},
    ])
    agentic = pd.DataFrame([{"run_id": "run-dddd4", "usd_per_successful_task": 0.02,
                             "success_rate": 0.75}])
    endpoints = pd.DataFrame([{"endpoint_id": "fast", "provider": "P", "model": "m",
                               "division": "serviced", "output_usd_per_mtok": 0.5,
                               "source_url": "https://p.example/prices"}])

    class T:
        pass

    t = T()
    t.runs, t.points, t.agentic, t.endpoints = runs, points, agentic, endpoints  # type: ignore[attr-defined]
    t.history = runs  # type: ignore[attr-defined]
    return t


def test_home_page_answers_each_question_from_rankable_results() -> None:
    ctx = home_context(_tables())
    answers = {b["question"]: (b["row"] or {}).get("endpoint_id") for b in ctx["best"]}
    assert answers == {
        "Fastest first token (lowest TTFT p90)": "fast",
        "Most throughput with every user at 20 tokens/s or faster": "fast",  # 200 at 25 tok/s
        "Cheapest per million output tokens": "cheap",
        "Best agentic success per dollar": "agent",
    }
    throughput = ctx["best"][1]["answer"]
    assert throughput == "200 tokens/s at 25 tokens/s per user (point c8)"
    assert ctx["best_note"] == ""
    assert [r["run_id"] for r in ctx["newest"]][:2] == ["run-cccc3", "run-bbbb2"]
    assert ctx["counts"] == {"runs": 4, "serving": 3, "agentic": 1, "emulated": 1,
                             "endpoints": 4}


def test_home_page_falls_back_to_emulated_results_with_a_note() -> None:
    ctx = home_context(_tables(rankable=False))
    assert ctx["best"][0]["row"]["endpoint_id"] == "emu"
    assert "emulated" in ctx["best_note"]


def test_result_context_lists_every_point_price_and_disclosure_field() -> None:
    doc = json.loads(SAMPLE.read_text(encoding="utf-8"))
    row = {"run_id": doc["run_id"], "flags": ["workload.sha256"], "disclosure_score": 0.9,
           "result_path": "results/alice/x.json", "frontier": ["c1"]}
    ctx = result_context(doc, row, root="../../")
    assert [p[0] for p in ctx["points"]] == ["c1", "c8"]
    assert ctx["points"][0][1] == "concurrency 1"
    assert [p[-1] for p in ctx["points"]] == [True, False]  # the frontier the row names
    assert ("output_usd_per_mtok", 0.2) in ctx["price_card"]
    disclosure = dict(ctx["disclosure"])
    assert disclosure["endpoint.region"] == "us-east-1"
    assert disclosure["client.rtt_ms"] == 12.5
    assert "endpoint.pricing.output_usd_per_mtok" not in disclosure
    assert ctx["command"] == "epbench run --endpoint acme-llama-8b --workload chat-short " \
                             "--client-region us-east"
    assert ctx["flags"] == ["workload.sha256"]


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
    assert "def request_cost_usd" not in text and "cached_price falls back" in text


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


def test_nav_lists_only_the_guides_that_exist(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "guides").mkdir(parents=True)
    (docs / "guides" / "submit.md").write_text("# Submit\n", encoding="utf-8")
    nav = _write_pages(docs, _tables(), ROOT)
    guides = next(entry["Guides"] for entry in nav if "Guides" in entry)
    assert guides == [{"How to submit": "guides/submit.md"}]
    assert (docs / "serving.md").is_file() and (docs / "runs" / "_shell.md").is_file()
