"""Prompt-cache accounting (issue 25): the hit rate from the journal, cost with the card's
cached-input and cache-write prices worked out by hand, and "not reported by the endpoint"
kept apart from 0 in the result, the tables, the downloads and the run page."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from epbench.core.metrics.pareto import frontier
from epbench.core.runspec import PointSpec
from epbench.core.schema import check_schema
from epbench.core.summary import summarize_point
from epbench.generator.downloads import read_csv, read_table, write_tables
from epbench.generator.number_format import fmt_usd
from epbench.generator.prompt_cache import cache_figures, hit_rate_words
from epbench.generator.render import POINT_COLUMNS, result_context
from epbench.generator.tables import build_tables
from epbench.generator.validate import validate_paths
from tests.generator.checks.test_validate_results import SERVICED, load, make_project, save

CARD = {"input_usd_per_mtok": 3.0, "output_usd_per_mtok": 15.0,
        "cached_input_usd_per_mtok": 0.30, "cache_write_input_usd_per_mtok": 3.75,
        "effective_date": "2026-01-01", "source_url": "https://example.com/pricing"}
ABSENT = object()
MS = 1_000_000


def record(seq: int, cached: Any, written: Any = None, input_tokens: int = 10_000,
           output_tokens: int = 500) -> dict[str, Any]:
    """One ok request line of point c1, 10 ms apart; `cached` ABSENT leaves the field out
    (a journal written before requests journaled cached tokens)."""
    t = 1_000 * MS + seq * 10 * MS
    line: dict[str, Any] = {
        "request_id": f"c1-{seq:05d}", "point": "c1", "seq": seq, "warmup": False,
        "t_scheduled_ns": None, "t_send_ns": t, "t_first_ns": t + 2 * MS,
        "t_last_ns": t + 7 * MS, "t_done_ns": t + 8 * MS,
        "input_tokens": input_tokens, "input_source": "usage", "input_requested": input_tokens,
        "output_tokens": output_tokens, "token_source": "usage", "status": 200, "class": "ok",
        "error": None, "itl_us": [10] * (output_tokens - 1), "attempts": 1, "retry_s": 0.0,
        "retry_tokens": 0,
    }
    if cached is not ABSENT:
        line["cache_read_tokens"] = cached
        line["cache_write_tokens"] = written
    return line


def point_of(records: list[dict[str, Any]]) -> dict[str, Any]:
    return summarize_point(PointSpec("c1", 0, concurrency=1), records, {}, seed=1)


# Anthropic Messages-style usage: the first request writes an 8,000-token prefix to the cache,
# the next three read it. Every request has 10,000 input tokens (cached or not) and 500 out.
MESSAGES = [record(0, 0, 8_000), *(record(seq, 8_000, 0) for seq in (1, 2, 3))]


def test_the_hit_rate_is_cached_over_input_tokens_pooled_over_the_point() -> None:
    cache = point_of(MESSAGES)["cache"]
    # (0 + 8,000 * 3) / (4 * 10,000) = 24,000 / 40,000
    assert cache == {"hit_rate": 0.6, "requests": 4, "reported": 4, "input": 40_000,
                     "cached": 24_000}


def test_not_reported_is_null_with_its_reason_and_zero_is_a_hit_rate_of_zero() -> None:
    silent = point_of([record(seq, None) for seq in range(4)])
    zero = point_of([record(seq, 0) for seq in range(4)])
    assert silent["cache"]["hit_rate"] is None
    assert silent["cache"]["reason"] == "not_reported"
    assert "cached_input" not in silent["tokens"]  # no count was reported: none is summed
    assert zero["cache"]["hit_rate"] == 0.0 and "reason" not in zero["cache"]
    assert zero["tokens"]["cached_input"] == 0
    # half the requests reported: the rate is over those two (8,000 of 20,000)
    partly = point_of([record(0, None), record(1, None), record(2, 8_000), record(3, 0)])
    assert partly["cache"] == {"hit_rate": 0.4, "requests": 4, "reported": 2,
                               "input": 20_000, "cached": 8_000}


def test_a_partly_reported_rate_says_over_how_many_requests_it_was_taken() -> None:
    partly = point_of([record(0, None), record(1, None), record(2, 8_000), record(3, 0)])
    rate, status = cache_figures([partly])
    assert (rate, status) == (0.4, "partly reported (2 of 4 requests)")
    assert hit_rate_words(rate, status) == "40%, partly reported (2 of 4 requests)"
    assert hit_rate_words(*cache_figures([{"id": "c1"}])).startswith("not recorded")


def test_a_journal_from_before_cached_tokens_were_journaled_gives_no_cache_block() -> None:
    assert "cache" not in point_of([record(seq, ABSENT) for seq in range(4)])


def _result(project: Path, points: list[dict[str, Any]], run_id: str,
            name: str) -> str:
    """The serviced sample re-pointed at `points`, priced with CARD, saved as `name`."""
    doc = load(project, SERVICED)
    doc["run_id"] = run_id
    doc["endpoint"]["pricing"] = CARD
    doc["points"] = points
    doc["pareto"] = frontier(points)
    assert check_schema(doc, "result", name) == []
    rel = str(Path(SERVICED).parent / name)
    save(project, rel, doc)
    return rel


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = make_project(tmp_path)
    endpoint = project / "endpoints" / "acme-llama-8b.yaml"
    doc = yaml.safe_load(endpoint.read_text())
    doc["pricing"] = CARD
    endpoint.write_text(json.dumps(doc))
    mine = [
        _result(project, [point_of(MESSAGES)], "cache001-messages",
                "2026-11-20-chat-short-cache001.json"),
        _result(project, [point_of([record(seq, None) for seq in range(4)])],
                "cache002-silent", "2026-11-20-chat-short-cache002.json"),
        _result(project, [point_of([record(seq, 0) for seq in range(4)])], "cache003-zero",
                "2026-11-20-chat-short-cache003.json"),
    ]
    (project / "results" / SERVICED).unlink()  # the template: its points priced otherwise
    rejected = [f for f in validate_paths([project / "results" / r for r in mine]).findings
                if f.severity.startswith("reject")]
    assert rejected == []
    return project


def test_cost_prices_cache_reads_and_writes_at_the_card_s_cache_prices(project: Path) -> None:
    tables = build_tables(project / "results", project)
    point = tables.points.set_index("run_id").loc["cache001-messages"]
    # input 40,000 = 8,000 uncached + 24,000 read + 8,000 written; output 2,000:
    #   8,000 * $3 + 24,000 * $0.30 + 8,000 * $3.75 + 2,000 * $15   (per M tokens)
    #   = 24,000 + 7,200 + 30,000 + 30,000 = 91,200 µ$ = $0.0912
    assert point["cost_usd"] == pytest.approx(0.0912)
    # per M output tokens: 0.0912 / 2,000 * 1e6 = $45.60
    assert point["usd_per_mtok_output"] == pytest.approx(45.6)
    # without cache prices: 40,000 * $3 + 2,000 * $15 = 150,000 µ$; / 2,000 * 1e6 = $75.00
    assert point["usd_per_mtok_output_uncached"] == pytest.approx(75.0)
    assert point["cache_hit_rate"] == pytest.approx(0.6)
    run = tables.runs.set_index("run_id").loc["cache001-messages"]
    assert run["usd_per_mtok_output_at_max_tps"] == pytest.approx(45.6)
    assert run["usd_per_mtok_output_uncached_at_max_tps"] == pytest.approx(75.0)
    # and the run page says the same
    doc = load(project, str(Path(SERVICED).parent / "2026-11-20-chat-short-cache001.json"))
    (cells,) = result_context(doc, {"run_id": doc["run_id"], "frontier": ["c1"]},
                              root="../../")["points"]
    shown = dict(zip(POINT_COLUMNS, cells, strict=True))
    assert shown["cost per M output tokens"] == fmt_usd(45.6) == "$45.60"
    assert shown["uncached cost per M output tokens"] == "$75.00"
    assert shown["prompt-cache hit rate"] == "60%"


def test_not_reported_stays_apart_from_zero_in_tables_downloads_and_the_run_page(
        project: Path, tmp_path: Path) -> None:
    tables = build_tables(project / "results", project)
    runs = tables.runs.set_index("run_id")
    silent, zero = runs.loc["cache002-silent"], runs.loc["cache003-zero"]
    assert silent["cache_hit_rate"] is None or math.isnan(silent["cache_hit_rate"])
    assert silent["cache_status"] == "not reported by the endpoint"
    assert zero["cache_hit_rate"] == 0.0 and zero["cache_status"] == "reported"
    write_tables(tables, tmp_path / "data")
    by_run = {r["run_id"]: r for r in read_table(tmp_path / "data", "points")}
    assert by_run["cache002-silent"]["cache_hit_rate"] is None
    assert by_run["cache002-silent"]["cache_status"] == "not reported by the endpoint"
    assert by_run["cache003-zero"]["cache_hit_rate"] == 0.0
    csv = {r["run_id"]: r for r in read_csv(tmp_path / "data", "runs")}
    assert csv["cache002-silent"]["cache_hit_rate"] == ""
    assert csv["cache002-silent"]["cache_status"] == "not reported by the endpoint"
    assert csv["cache003-zero"]["cache_hit_rate"] == "0.0"
    hit = POINT_COLUMNS.index("prompt-cache hit rate")
    pages = {}
    for name in ("cache002", "cache003"):
        doc = load(project, str(Path(SERVICED).parent / f"2026-11-20-chat-short-{name}.json"))
        (cells,) = result_context(doc, {"run_id": doc["run_id"], "frontier": []},
                                  root="../../")["points"]
        pages[name] = cells[hit]
    assert pages == {"cache002": "not reported by the endpoint", "cache003": "0%"}
