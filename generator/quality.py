"""The tool-call quality gate on the site's tables.

For each result of a quality workload (`workload.quality` in the result), the model's
reference result on that workload is chosen: the latest result from an endpoint whose file
marks `model.reference: true` (the model vendor's own endpoint), else the result with the best
success rate for the same model (name and version) and workload (ties: more trials, then the
earlier run id). Every other result is tested against it with
`epbench.core.metrics.quality.quality_gate` (one-sided, p < 0.01, 97% of the reference). An
endpoint with any result below the reference is not rankable: all its rows in `runs` get
`rankable: false` and the reason "tool-call quality below the reference", and a `quality`
text (the worst such comparison, both rates with their 95% intervals) for the boards.

The reason is added here, apart from the rankability function, until that function exists
on main (issue 10); then it belongs there.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from epbench.core.metrics.quality import REASON, QualityGate, quality_gate, successes_of
from epbench.generator import columns

# The columns this gate fills (declared in epbench.generator.columns).
AGENTIC_QUALITY_COLUMNS = columns.filled_by("agentic", __name__)
RUN_QUALITY_COLUMNS = columns.filled_by("runs", __name__)


def _key(row: Any) -> tuple[Any, Any, Any]:
    return (row["model"], row["model_version"], row["workload_id"])


def references(agentic: pd.DataFrame) -> dict[tuple[Any, Any, Any], Any]:
    """(model, version, workload) -> the index of its reference row in `agentic`."""
    out: dict[tuple[Any, Any, Any], Any] = {}
    rows = agentic[agentic["quality_workload"].fillna(False).astype(bool)]
    for key, group in rows.groupby(["model", "model_version", "workload_id"], dropna=False):
        vendor = group[group["reference_endpoint"].fillna(False).astype(bool)]
        if not vendor.empty:
            out[key] = vendor.sort_values(["date", "run_id"]).index[-1]
            continue
        ranked = group.sort_values(
            ["success_rate", "success_n", "run_id"], ascending=[False, False, True]
        )
        out[key] = ranked.index[0]
    return out


def text(gate: QualityGate) -> str:
    """Both rates with their 95% intervals, as the boards and run pages show them."""
    lo, hi = gate.interval
    rlo, rhi = gate.reference_interval
    return (
        f"{gate.rate:.3f} [{lo:.3f}, {hi:.3f}] vs reference {gate.reference_rate:.3f} "
        f"[{rlo:.3f}, {rhi:.3f}] (p = {gate.p_value:.2g})"
    )


def apply_gate(
    agentic: pd.DataFrame, runs: pd.DataFrame, points: pd.DataFrame | None = None
) -> None:
    """Fill the quality columns of `agentic` and `runs` in place; every row (runs, agentic,
    points) of an endpoint below the reference becomes unrankable, with the reason."""
    for column in AGENTIC_QUALITY_COLUMNS:
        agentic[column] = None
    for column in RUN_QUALITY_COLUMNS:
        runs[column] = None
    if agentic.empty:
        return
    worst: dict[str, QualityGate] = {}  # endpoint id -> its lowest p-value comparison
    own: dict[str, QualityGate] = {}  # run id -> its own comparison
    for key, ref_index in references(agentic).items():
        ref = agentic.loc[ref_index]
        mask = (
            agentic["quality_workload"].fillna(False).astype(bool)
            & (agentic["model"] == key[0])
            & (agentic["workload_id"] == key[2])
        )
        mask &= agentic["model_version"].isna() if key[1] is None or pd.isna(key[1]) else (
            agentic["model_version"] == key[1]
        )
        ref_n = int(ref["success_n"])
        ref_s = successes_of(float(ref["success_rate"]), ref_n)
        for index in agentic[mask].index:
            row = agentic.loc[index]
            agentic.at[index, "quality_reference_run"] = ref["run_id"]
            agentic.at[index, "quality_reference_rate"] = float(ref["success_rate"])
            rlo, rhi = float(ref["success_ci_low"]), float(ref["success_ci_high"])
            agentic.at[index, "quality_reference_low"] = rlo
            agentic.at[index, "quality_reference_high"] = rhi
            if index == ref_index or int(row["success_n"]) <= 0 or ref_n <= 0:
                agentic.at[index, "quality_below"] = False
                continue
            n = int(row["success_n"])
            gate = quality_gate(successes_of(float(row["success_rate"]), n), n, ref_s, ref_n)
            agentic.at[index, "quality_p"] = gate.p_value
            agentic.at[index, "quality_below"] = gate.below
            agentic.at[index, "quality"] = text(gate)
            own[str(row["run_id"])] = gate
            endpoint = str(row["endpoint_id"])
            if endpoint not in worst or gate.p_value < worst[endpoint].p_value:
                worst[endpoint] = gate
    below = {endpoint for endpoint, gate in worst.items() if gate.below}
    for frame in (runs, agentic, points):
        if frame is not None:
            _unrank(frame, below)
    categories = _bfcl_by_endpoint(agentic)
    touched = runs["endpoint_id"].astype(str).isin(set(categories) | set(worst))
    for index in runs.index[touched.to_numpy()]:
        endpoint = str(runs.at[index, "endpoint_id"])
        if endpoint in categories:
            runs.at[index, "bfcl"] = categories[endpoint]
        worst_gate = worst.get(endpoint)
        if worst_gate is None:
            continue
        gate = own.get(str(runs.at[index, "run_id"]), worst_gate)
        runs.at[index, "quality"] = text(gate)
        runs.at[index, "quality_below"] = gate.below


def _unrank(frame: pd.DataFrame, endpoints: set[str]) -> None:
    """Rows of these endpoints: rankable false, the gate's reason in unranked_reasons."""
    if "unranked_reasons" not in frame.columns:
        frame["unranked_reasons"] = [[] for _ in range(len(frame))]
    if not endpoints:
        return
    for index in frame.index[frame["endpoint_id"].astype(str).isin(endpoints).to_numpy()]:
        frame.at[index, "rankable"] = False
        reasons = list(frame.at[index, "unranked_reasons"] or [])
        if REASON not in reasons:
            frame.at[index, "unranked_reasons"] = [*reasons, REASON]


def _bfcl_by_endpoint(agentic: pd.DataFrame) -> dict[str, list[dict[str, Any]]]:
    """Endpoint id -> its latest result per BFCL category: BFCL's category name, success
    with its interval, and the reference rate."""
    out: dict[str, list[dict[str, Any]]] = {}
    rows = agentic[agentic["source_category"].notna()].sort_values(["date", "run_id"])
    latest = rows.groupby(["endpoint_id", "source_category"]).tail(1)
    for _, row in latest.sort_values(["endpoint_id", "source_category"]).iterrows():
        ref = row["quality_reference_rate"]
        out.setdefault(str(row["endpoint_id"]), []).append({
            "category": str(row["source_category"]),
            "workload_id": str(row["workload_id"]),
            "success_rate": float(row["success_rate"]),
            "low": float(row["success_ci_low"]),
            "high": float(row["success_ci_high"]),
            "n": int(row["success_n"]),
            "reference_rate": None if ref is None or pd.isna(ref) else float(ref),
        })
    return out
