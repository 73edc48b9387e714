"""Agents under load on the emulator (issue 26, must-show 1): retail-refund-fleet played by 1,
4, 16 and 64 agents at once against the shipped emulator endpoint (its batching: decode slows
as the batch fills, its skill fixed). Success stays flat within its interval, step decision
p90 rises with the batching, the result validates with every figure recomputed from its
journal, and "agents at SLO" is on the endpoint and compare pages with its chart, drawn in
Chromium (a screenshot is saved with the other page screenshots)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from epbench.core.metrics.capacity import Level, capacity
from epbench.core.metrics.quality import quality_gate
from epbench.core.paths import resolve_endpoint, resolve_workload
from tests.browser.harness import page_opener, serve, wait_for_board

ROOT = Path(__file__).resolve().parents[2]
SHOTS = Path(os.environ.get("EPB_SCREENSHOTS", ROOT / "test-artifacts" / "screenshots"))
LEVELS = [1, 4, 16, 64]

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One full run of the fleet workload on the emulator, submitted, validated and built, with
    the emulator's own request log, read just before the run stops it."""
    from epbench.generator.site import build_site
    from epbench.generator.submit import submit_run
    from epbench.runner.emulator import process
    from epbench.runner.entry import run_command

    log: list[dict[str, Any]] = []
    start = process.start_emulator

    def start_keeping_the_log(*args: Any, **kwargs: Any) -> Any:
        emulator = start(*args, **kwargs)
        stop = emulator.stop

        def read_then_stop(*a: Any, **kw: Any) -> None:
            log.extend(emulator.requests())
            stop(*a, **kw)

        emulator.stop = read_then_stop
        return emulator

    tmp = tmp_path_factory.mktemp("fleet")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(process, "start_emulator", start_keeping_the_log)
        [result_path] = run_command(
            endpoint=resolve_endpoint("emulator", ROOT), workload=resolve_workload(
                "retail-refund-fleet", ROOT), out=tmp / "runs", resume=None, quick=False,
            client_region=None, shard=None, progress=False)
    journal = [json.loads(line) for line in
               (result_path.parent / "events.jsonl").read_text("utf-8").splitlines()]
    placed, report = submit_run(result_path.parent, "demo", None, "independent", tmp / "results")
    site = build_site(tmp / "results", tmp / "_site", ROOT, base_url="", incremental=False)
    return {"result": json.loads(placed.read_text("utf-8")), "report": report, "site": site,
            "requests": [line for line in journal if line["type"] == "request"],
            "emulator": {record["request_id"]: record for record in log}}


def test_the_fleet_result_validates_with_every_level_recomputed_from_its_journal(fleet):
    summary = fleet["report"].summary()
    assert summary["rejected"] == 0 and summary["passed"] == 1, summary
    agentic = fleet["result"]["agentic"]
    assert [level["concurrency"] for level in agentic["levels"]] == LEVELS
    # the section is the one-agent level's; each level plays enough trials for its agents
    assert agentic["success_rate"] == agentic["levels"][0]["summary"]["success_rate"]
    assert all(level["summary"]["success_rate"]["n"] >= level["concurrency"]
               for level in agentic["levels"])


def test_success_stays_flat_within_the_one_agent_interval_at_every_level(fleet):
    levels = fleet["result"]["agentic"]["levels"]
    base = levels[0]["summary"]["success_rate"]
    low, high = base["ci95"]
    for level in levels:
        rate = level["summary"]["success_rate"]
        assert low <= rate["value"] <= high, (level["concurrency"], rate, base)
        gate = quality_gate(level["results"]["success"], rate["n"],
                            levels[0]["results"]["success"], base["n"])
        assert not gate.below
        assert level["request_errors"] == {}


def test_the_emulators_own_decode_step_slows_as_more_agents_share_its_batch(fleet):
    # decode time per token grows by tpot_growth with each active sequence (runner/emulator/
    # batching.py): 64 agents hold far more of the 48 slots than one does. The model's own
    # steps, free of the event loop's lateness, order the levels however loaded the machine is.
    steps: dict[int, list[int]] = {level: [0, 0] for level in LEVELS}
    for request in fleet["requests"]:
        record = fleet["emulator"][request["request_id"]]
        steps[request["level"]][0] += record["model_decode_ns"]
        steps[request["level"]][1] += record["model_steps"]
    step_ms = [steps[level][0] / steps[level][1] / 1e6 for level in LEVELS]
    assert step_ms == sorted(step_ms) and len(set(step_ms)) == len(LEVELS), step_ms
    assert step_ms[-1] > 1.5 * step_ms[0], step_ms  # 6 ms alone, about 17 ms at 48 active


def test_the_client_never_measures_a_step_shorter_than_the_emulator_made_it(fleet):
    for request in fleet["requests"]:
        record = fleet["emulator"][request["request_id"]]
        model_ms = (record["model_prefill_ns"] + record["model_decode_ns"]) / 1e6
        measured_ms = (request["t_done_ns"] - request["t_send_ns"]) / 1e6
        assert measured_ms >= model_ms - 1.0, (request["request_id"], measured_ms, model_ms)


def test_step_decision_p90_rises_with_the_emulators_batching(fleet):
    p90 = {level["concurrency"]: level["summary"]["decision_ms"]["p90"]
           for level in fleet["result"]["agentic"]["levels"]}
    # measured on the wall clock: at 64 agents p90 is about twice what it is at 1 or 16
    # (249 against 109 and 138 ms, unloaded). Neighbouring levels are closer than a loaded
    # machine's lateness during one level can push them, so their order is the model's test
    # above, and the wall clock is held to the ends.
    assert p90[64] > p90[16] and p90[64] > p90[1], p90


def test_agents_at_slo_is_the_step_function_of_the_measured_levels(fleet):
    agentic = fleet["result"]["agentic"]
    cap = agentic["capacity"]
    again = capacity([Level(level["concurrency"], level["results"]["success"],
                            level["summary"]["success_rate"]["n"],
                            level["summary"]["decision_ms"]["p90"])
                      for level in agentic["levels"]], cap["decision_p90_slo_ms"],
                     fleet["result"]["endpoint"]["pricing"])
    assert cap == again
    expected = 0  # the last level before the first that is not at the SLO
    for row in cap["levels"]:
        if not row["at_slo"]:
            break
        expected = row["concurrency"]
    assert cap["agents_at_slo"] == expected
    per_hour = fleet["result"]["endpoint"]["pricing"]["usd_per_hour"]  # the emulator's card
    assert cap["usd_per_hour"] == per_hour
    assert cap["agents_per_usd_hour"] == (cap["agents_at_slo"] / per_hour or None)


def _shown(html: str, cap: dict[str, Any]) -> None:
    agents = cap["agents_at_slo"]
    heading = f"emulator · retail-refund-fleet: {agents} agent{'' if agents == 1 else 's'} at SLO"
    assert heading in html
    spec = json.loads(re.search(r'<script type="application/json" id="epb-capacity-spec">'
                                r'(.*?)</script>', html, re.S).group(1))
    rows = spec["datasets"]["rows"]
    assert sorted(r["agents"] for r in rows) == LEVELS
    assert [r["at_slo"] for r in sorted(rows, key=lambda r: r["agents"])] == \
        [row["at_slo"] for row in cap["levels"]]


def test_the_endpoint_and_compare_pages_show_agents_at_slo_and_its_levels(fleet):
    cap = fleet["result"]["agentic"]["capacity"]
    site = fleet["site"]
    _shown((site / "endpoints" / "emulator" / "index.html").read_text("utf-8"), cap)
    _shown((site / "compare" / "index.html").read_text("utf-8"), cap)
    board = (site / "data" / "view" / "agentic.json").read_text("utf-8")
    assert "agents_at_slo" in board


def _chart_ready(page: Any) -> None:
    page.wait_for_selector("#epb-capacity canvas", timeout=30000)
    page.evaluate("() => document.getElementById('epb-capacity').epbReady.then(() => true)")


def _levels(cap: dict[str, Any]) -> list[list[Any]]:
    return sorted([row["concurrency"], row["at_slo"]] for row in cap["levels"])


def test_chromium_draws_the_agents_chart_on_the_endpoint_and_compare_pages(fleet, chrome):
    cap = fleet["result"]["agentic"]["capacity"]
    with serve(fleet["site"]) as base, page_opener(chrome, _chart_ready) as open_page:
        for path in ("endpoints/emulator/", "compare/?endpoints=emulator,elsewhere"):
            page = open_page(base + path)
            drawn = page.evaluate(
                "() => document.getElementById('epb-capacity').epbReady"
                ".then(r => r.view.data('rows').map(d => [d.agents, d.at_slo]))")
            assert sorted(drawn) == _levels(cap)
            text = page.inner_text("#epb-capacity")
            assert "Agents at SLO" in text and "harness lag p90" in text
        SHOTS.mkdir(parents=True, exist_ok=True)
        page = open_page(base + "endpoints/emulator/")
        page.locator("#epb-capacity").screenshot(path=str(SHOTS / "agents-at-slo.png"))
    assert (SHOTS / "agents-at-slo.png").stat().st_size > 10_000


def test_the_agentic_board_charts_each_level_and_lists_agents_at_slo(fleet, chrome):
    def ready(page: Any) -> None:
        wait_for_board(page)
        page.wait_for_function("() => window.epbBoard.chartData().length > 0", timeout=30000)

    cap = fleet["result"]["agentic"]["capacity"]
    with serve(fleet["site"]) as base, page_opener(chrome, ready) as open_board:
        for chart in ("agents_success", "agents_decision"):
            page = open_board(base + f"agentic/?emulated=1&chart={chart}")
            rows = page.evaluate("() => window.epbBoard.chartData()")
            assert sorted([r["agents"], r["at_slo"]] for r in rows) == _levels(cap)
            assert "agents at SLO" in page.inner_text("#epb-board")
