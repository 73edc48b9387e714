"""A trace workload's page (epbench.generator.trace_page, workload.md.j2) and a run page's
arrival lag (result.html.j2): figures from the shipped traces and hand-built results, and the
workload's untrusted text kept inert."""

from __future__ import annotations

import json
import shutil

import yaml

from epbench.core.documents import load_document
from epbench.generator import docs_gen
from epbench.generator.entity_pages import workload_page
from epbench.generator.render import render, result_context
from epbench.generator.trace_page import _repeated_blocks, trace_view
from tests.conftest import ROOT

AZURE = ROOT / "workloads" / "serving" / "trace-azure-code.yaml"
MOONCAKE = ROOT / "workloads" / "serving" / "trace-mooncake-chat.yaml"
SAMPLE = ROOT / "tests/data/results/alice/acme-llama-8b/2026-11-20-chat-short-a1b2c3d4.json"


def _values(chart: dict) -> list[dict]:
    return chart["spec"]["data"]["values"]


def test_the_azure_page_draws_every_replayed_request_and_its_lengths():
    view = trace_view(load_document(AZURE), AZURE)
    assert view is not None and view["problem"] == ""
    arrivals, inputs, outputs = view["charts"]
    assert [c["id"] for c in view["charts"]] == ["arrivals", "inputs", "outputs"]
    assert sum(r["requests"] for r in _values(arrivals)) == 1482 == view["facts"]["requests"]
    assert arrivals["caption"].startswith("Requests per second in 10-second bins, over the "
                                          "1,482 requests")
    assert all(r["rps"] == r["requests"] / 10 for r in _values(arrivals))
    assert sum(r["requests"] for r in _values(inputs)) == 1482
    assert max(r["to"] for r in _values(inputs)) == 4096  # the cap, not the trace's 7,437
    assert max(r["to"] for r in _values(outputs)) == 256
    assert view["facts"]["repeated_blocks"] is None  # Azure has no prefix information
    assert view["source"]["licence"] == "CC-BY-4.0" and "$schema" not in arrivals["spec"]


def test_repeated_blocks_count_each_hash_id_sent_before_by_hand():
    assert _repeated_blocks([(0, 1, 2), (0, 3), (4,), (0, 1)]) == round(3 / 8, 4)
    assert _repeated_blocks(None) is None
    view = trace_view(load_document(MOONCAKE), MOONCAKE)
    assert view is not None and 0 < view["facts"]["repeated_blocks"] < 1


def test_a_trace_workload_page_names_its_source_and_licence_and_carries_its_charts():
    doc = next(d for d in docs_gen.workload_docs(ROOT / "workloads") if d.id == "trace-azure-code")
    page = workload_page(doc, None, _empty(), trace_view(load_document(AZURE), AZURE))
    assert "epb_trace: true" in page
    assert ('From <a href="https://github.com/Azure/AzurePublicDataset" rel="noopener '
            'noreferrer">Azure LLM inference trace 2023, code') in page
    assert "licence CC-BY-4.0. Cite: Patel et al., &#34;Splitwise" in page
    assert "The replay sends 1,482 requests over 586 s, 2.53 requests per second" in page
    assert 'id="epb-trace-chart-arrivals"' in page
    config = page.split('<script type="application/json" id="epb-trace-config">')[1]
    assert len(json.loads(config.split("</script>")[0])) == 3


def test_a_trace_page_keeps_hostile_text_inert_and_says_when_the_trace_cannot_be_read(tmp_path):
    (tmp_path / "workloads" / "serving").mkdir(parents=True)
    (tmp_path / "workloads" / "traces").mkdir()
    doc = load_document(AZURE)
    doc["load"]["trace"]["source"]["name"] = "<script>alert(1)</script>"
    path = tmp_path / "workloads" / "serving" / "trace-azure-code.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    view = trace_view(doc, path)  # the trace file is missing
    assert view is not None and view["charts"] == []
    assert view["problem"].startswith("workloads/traces/azure-llm-2023-code-first1500.csv: "
                                      "cannot read")
    wdoc = next(d for d in docs_gen.workload_docs(tmp_path / "workloads"))
    page = workload_page(wdoc, None, _empty(), view)
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert 'id="epb-trace-problem">The trace cannot be replayed: ' in page
    assert "epb_trace" not in page  # no charts: no chart script
    shutil.copy(ROOT / doc["load"]["trace"]["path"], tmp_path / doc["load"]["trace"]["path"])
    assert trace_view(doc, path)["charts"]


def test_a_run_page_shows_each_open_loop_points_arrival_lag():
    doc = json.loads(SAMPLE.read_text(encoding="utf-8"))
    point = dict(doc["points"][0])
    point.pop("concurrency", None)
    point.update(id="trace", rate=2.5,
                 schedule_delay_ms={"p50": 0.71, "p90": 1.75, "p99": 4.4, "n": 700},
                 ttft_from_scheduled_ms={"p50": 30.5, "p99": 80.4, "n": 700})
    doc["points"] = [point]
    row = {"run_id": doc["run_id"], "disclosure_score": 0.9, "rankable": False,
           "result_path": "results/a/x.json"}
    page = render("result.html.j2", **result_context(doc, row, root="../../"))
    assert '<h2 id="arrival-lag">Arrival lag (open loop)</h2>' in page
    assert ('<tr><td>trace</td><td class="epb-num">700</td><td class="epb-num">0.71</td>'
            '<td class="epb-num">1.75</td><td class="epb-num">4.4</td><td>none</td>'
            '<td class="epb-num">30.5</td><td class="epb-num">80.4</td></tr>') in page
    closed = json.loads(SAMPLE.read_text(encoding="utf-8"))
    assert "arrival-lag" not in render("result.html.j2", **result_context(closed, row, "../../"))


def _empty():
    import pandas as pd

    return pd.DataFrame({"workload_id": []})
