"""A real stream that arrived in one burst (vLLM with its API process starved: TPOT p50 0) is
evidence: flagged by name, with the figure it makes impossible, and kept, not rejected."""

from __future__ import annotations

from epbench.generator.checks.dist import check_dist


def dist(p50: float, p90: float) -> dict[str, float | int | list[str]]:
    return {"n": 8, "p50": p50, "p90": p90, "p95": p90, "p99": p90,
            "insufficient": ["p90", "p99"]}


def test_a_burst_stream_is_flagged_and_not_rejected() -> None:
    findings = check_dist(dist(0.0, 0.0), "tpot_ms", "/points/0/tpot_ms", "r.json")
    assert [(f.check, f.severity) for f in findings] == [("dist.burst-stream", "flag")]
    assert "tps_per_user cannot be computed" in findings[0].message


def test_a_burst_at_the_median_only_keeps_tps_per_user() -> None:
    (finding,) = check_dist(dist(0.0, 3.5), "tpot_ms", "/points/0/tpot_ms", "r.json")
    assert finding.check == "dist.burst-stream" and "tps_per_user" not in finding.message


def test_a_zero_ttft_and_a_negative_tpot_are_still_rejected() -> None:
    ttft = check_dist(dist(0.0, 1.0), "ttft_ms", "/points/0/ttft_ms", "r.json")
    assert [f.check for f in ttft] == ["dist.positive"]
    negative = check_dist(dist(-1.0, 1.0), "tpot_ms", "/points/0/tpot_ms", "r.json")
    assert "dist.positive" in [f.check for f in negative]
