"""Choosing the reference result and unranking an endpoint below it (epbench.generator.quality)."""

from __future__ import annotations

import pandas as pd

from epbench.generator import quality


def agentic_row(run_id: str, endpoint: str, rate: float, n: int = 100, vendor: bool = False,
                version: str | None = "1") -> dict:
    return {"run_id": run_id, "endpoint_id": endpoint, "model": "m", "model_version": version,
            "workload_id": "bfcl-simple-python", "date": "2026-11-01", "rankable": True,
            "success_rate": rate, "success_n": n, "success_ci_low": rate - 0.05,
            "success_ci_high": min(1.0, rate + 0.05), "quality_workload": True,
            "reference_endpoint": vendor, "source_category": "simple_python"}


def frames(rows: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    agentic = pd.DataFrame(rows)
    runs = pd.DataFrame([{k: r[k] for k in ("run_id", "endpoint_id", "rankable")} for r in rows]
                        + [{"run_id": "serving1", "endpoint_id": "cheap", "rankable": True}])
    points = pd.DataFrame([{"run_id": "serving1", "endpoint_id": "cheap", "rankable": True}])
    return agentic, runs, points


def test_the_vendors_endpoint_is_the_reference_even_when_another_scores_higher():
    agentic, runs, points = frames([agentic_row("a", "vendor", 0.90, vendor=True),
                                    agentic_row("b", "other", 0.95)])
    quality.apply_gate(agentic, runs, points)
    assert set(agentic["quality_reference_run"]) == {"a"}
    assert not agentic["quality_below"].any()


def test_without_a_vendor_the_best_result_is_the_reference():
    agentic, runs, points = frames([agentic_row("a", "one", 0.70), agentic_row("b", "two", 0.95)])
    quality.apply_gate(agentic, runs, points)
    assert set(agentic["quality_reference_run"]) == {"b"}


def test_an_endpoint_below_the_reference_is_unranked_on_every_board():
    agentic, runs, points = frames([agentic_row("a", "vendor", 0.99, vendor=True),
                                    agentic_row("b", "cheap", 0.80)])
    quality.apply_gate(agentic, runs, points)
    cheap = runs[runs["endpoint_id"] == "cheap"]
    assert len(cheap) == 2 and not cheap["rankable"].any()  # its serving run too
    assert all(r == [quality.REASON] for r in cheap["unranked_reasons"])
    assert not points["rankable"].any()
    assert runs[runs["endpoint_id"] == "vendor"]["rankable"].all()
    assert "vs reference 0.990" in cheap.iloc[0]["quality"]
    assert runs.loc[runs["run_id"] == "serving1", "bfcl"].iloc[0][0]["category"] == "simple_python"


def test_other_model_versions_are_not_compared():
    agentic, runs, points = frames([agentic_row("a", "vendor", 0.99, vendor=True),
                                    agentic_row("b", "cheap", 0.50, version="2")])
    quality.apply_gate(agentic, runs, points)
    assert runs["rankable"].all()
