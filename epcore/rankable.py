"""Rankable, or why not: the one decision of what the leaderboard ranks, with its reasons.

`rankability(result, limits, provenance)` returns the reasons a result is not ranked; an empty
list means it is ranked. It reads only the result (already validated: when a result pins a
journal, every figure in it was recomputed from that journal), the workload's own `ranking`
limits and the tier validation gave it (epbench.core.provenance; none given: self-reported). The
site tables carry `rankable` and `unranked_reasons`, the run page lists the reasons, and the
home page's answers consider rankable results only.

    self-reported      no valid attestation (epbench.core.provenance): the submitter's word. Always
                       the first reason; a reader may include such results (the boards' and
                       the home page's "Include self-reported results"), and a row whose only
                       reason it is then ranks
    emulated           the endpoint emulator, not a real endpoint
    quick              a --quick run (shortened points)
    imported           another tool's output: there is no journal to recompute from
    no-evidence        an epbench result without its journal (written before journals were
                       submitted): nothing to recompute from
    no-rtt             an epbench result whose journal holds no round trips the runner measured
                       (`round_trips`, recomputed from its session lines): its latencies cannot
                       be held against the network's
    all-failed         no request succeeded
    error-rate         failed / issued above the workload's `ranking.max_error_rate`
                       (default 5%); agentic: trials ending in an endpoint error
    thin-sample        a point (or the agentic decisions) with fewer samples than a p90 needs
    harness-fault      an agentic trial failed because of the harness
    resume-gap         resumed after a gap longer than `ranking.max_resume_gap_s` (default 300 s)
    usage-implausible  a point with a request whose `usage` no stream could carry
                       (epbench.core.usage_bounds): the endpoint's own counts cannot be believed

A new reason (e.g. a quality gate) is one more block here, with its code in REASONS.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from epbench.core.metrics.percentiles import MIN_SAMPLES
from epbench.core.provenance import Provenance

DEFAULT_MAX_ERROR_RATE = 0.05
"""Above 5% failed requests, latency and throughput describe the requests that got through,
not the endpoint a reader would use."""
DEFAULT_MAX_RESUME_GAP_S = 300.0
"""Five minutes: longer, and the endpoint's load (other tenants, autoscaling) may have changed
between the two halves of a run, so they no longer measure one thing."""
P90_SAMPLES = MIN_SAMPLES["p90"]

REASONS = ("self-reported", "emulated", "quick", "imported", "no-evidence", "no-rtt",
           "all-failed", "error-rate", "thin-sample", "harness-fault", "resume-gap",
           "usage-implausible")


@dataclass(frozen=True)
class Reason:
    """Why a result is not ranked: a stable code and a short sentence for people."""

    code: str
    text: str

    def __str__(self) -> str:
        return self.text


def rankability(result: Mapping[str, Any], limits: Mapping[str, Any] | None = None,
                provenance: Provenance | None = None) -> list[Reason]:
    """The reasons `result` is not ranked (empty: it is ranked); `limits` is the workload's
    `ranking` block, if it has one; `provenance` the tier validation gave it."""
    limits = limits or {}
    out: list[Reason] = []
    if provenance is None or not provenance.attested:
        why = provenance.reason if provenance is not None else "no attestation checked"
        out.append(Reason("self-reported", f"self-reported: {why}"))
    endpoint = result.get("endpoint") or {}
    if endpoint.get("division") == "emulated":
        out.append(Reason("emulated", "emulated endpoint"))
    if (result.get("settings") or {}).get("quick"):
        out.append(Reason("quick", "quick run"))
    if (result.get("source") or {}).get("format", "epbench") != "epbench":
        out.append(Reason("imported", "imported without journal"))
    elif not result.get("evidence"):
        out.append(Reason("no-evidence", "no evidence (no journal submitted)"))
    elif not result.get("round_trips"):
        out.append(Reason("no-rtt", "no round trips measured by the runner in its journal"))
    max_error = float(limits.get("max_error_rate", DEFAULT_MAX_ERROR_RATE))
    out += _serving(result.get("points") or [], max_error)
    if result.get("agentic"):
        out += _agentic(result["agentic"], max_error)
        out += _load_levels(result["agentic"], max_error)
    max_gap = float(limits.get("max_resume_gap_s", DEFAULT_MAX_RESUME_GAP_S))
    gaps = [float(r.get("gap_s") or 0.0) for r in result.get("resumes") or []]
    if gaps and max(gaps) > max_gap:
        out.append(Reason("resume-gap",
                          f"resumed after a {max(gaps):.0f} s gap (limit {max_gap:.0f} s)"))
    return out


def _serving(points: list[Mapping[str, Any]], max_error: float) -> list[Reason]:
    if not points:
        return []
    out = []
    issued = sum(int(p["requests"]["issued"]) for p in points)
    failed = sum(int(p["requests"]["failed"]) for p in points)
    if issued and failed == issued:
        out.append(Reason("all-failed", "every request failed"))
    elif issued and failed / issued > max_error:
        out.append(Reason("error-rate", f"error rate {failed / issued:.1%} above the "
                                        f"{max_error:.0%} limit"))
    lied = [p["id"] for p in points if int((p.get("errors") or {}).get("usage_implausible", 0))]
    if lied:
        out.append(Reason("usage-implausible", "usage counts no stream could carry at "
                                               f"{', '.join(map(str, lied[:3]))}"
                                               f"{' and more' if len(lied) > 3 else ''}"))
    thin = [p["id"] for p in points if int((p.get("ttft_ms") or {}).get("n", 0)) < P90_SAMPLES]
    if thin:
        out.append(Reason("thin-sample", f"fewer than {P90_SAMPLES} samples (what a p90 needs) "
                                         f"at {', '.join(map(str, thin[:3]))}"
                                         f"{' and more' if len(thin) > 3 else ''}"))
    return out


def _agentic(block: Mapping[str, Any], max_error: float) -> list[Reason]:
    out = []
    outcomes = [o for task in block.get("tasks") or [] for o in task.get("outcomes") or []]
    errors = sum(1 for o in outcomes if o.get("result") == "endpoint_error")
    if outcomes and errors / len(outcomes) > max_error:
        out.append(Reason("error-rate", f"endpoint errors in {errors / len(outcomes):.1%} of "
                                        f"trials, above the {max_error:.0%} limit"))
    decisions = int((block.get("decision_ms") or {}).get("n", 0))
    if decisions < P90_SAMPLES:
        out.append(Reason("thin-sample", f"{decisions} tool-call decisions, fewer than the "
                                         f"{P90_SAMPLES} a p90 needs"))
    faults = block.get("harness_faults") or []
    if faults:
        out.append(Reason("harness-fault", f"harness fault in {len(faults)} trial"
                                           f"{'s' if len(faults) != 1 else ''}"))
    return out


def _load_levels(block: Mapping[str, Any], max_error: float) -> list[Reason]:
    """Endpoint errors and harness faults at any load level count as at the first (whose
    section is the block's own): the first level of each kind is named."""
    out: list[Reason] = []
    codes = {r.code for r in _agentic(block, max_error)}
    for level in (block.get("levels") or [])[1:]:
        for reason in _agentic(level.get("summary") or {}, max_error):
            if reason.code in ("error-rate", "harness-fault") and reason.code not in codes:
                codes.add(reason.code)
                out.append(Reason(reason.code, f"{reason.text} at {level['concurrency']} "
                                               f"concurrent agents"))
    return out
