"""Derived values agree with what they derive from (per measurement point).

- tps_per_user = 1000 / tpot_ms.p90
- system_tps = tokens.output_in_window / window_s
- issued - completed == failed == sum(errors)
"""

from __future__ import annotations

from typing import Any

from epbench.core.findings import Finding
from epbench.core.metrics.throughput import system_tps, tps_per_user
from epbench.generator.checks.base import Subject, check, close, fmt, on_point

TPS_PER_USER = check(
    "derived.tps-per-user", "reject-point",
    "tps_per_user equals 1000 / tpot_ms.p90 within 1%",
    "recompute tps_per_user as 1000 / tpot_ms.p90 (or re-run `epbench run`, which writes both)",
)
SYSTEM_TPS = check(
    "derived.system-tps", "reject-point",
    "system_tps equals tokens.output_in_window / window_s within 1%",
    "recompute system_tps as tokens.output_in_window / window_s",
)
FAILED_COUNT = check(
    "derived.failed-count", "reject-point",
    "requests.failed equals requests.issued - requests.completed",
    "every issued request either completes or fails: make failed = issued - completed",
)
ERROR_SUM = check(
    "derived.error-sum", "reject-point",
    "the error classes add up to requests.failed",
    "count each failed request in exactly one error class",
)


def check_point(point: dict[str, Any], where: str, file: str) -> list[Finding]:
    """Findings for one point at JSON pointer `where`."""
    out: list[Finding] = []
    p90 = point["tpot_ms"].get("p90")
    tps_user = point.get("tps_per_user")
    expected = tps_per_user(p90)
    if expected is not None:
        if tps_user is None or not close(tps_user, expected):
            out.append(TPS_PER_USER.at(
                file, f"{where}/tps_per_user",
                f"tps_per_user is {fmt(tps_user)} but 1000 / tpot_ms.p90 ({fmt(p90)}) is "
                f"{fmt(expected)}",
            ))
    elif tps_user is not None and p90 is None:
        out.append(TPS_PER_USER.at(
            file, f"{where}/tps_per_user",
            f"tps_per_user is {fmt(tps_user)} but tpot_ms.p90 is null",
            "set tps_per_user to null when no request had 2+ output tokens",
        ))
    expected_tps = system_tps(point["tokens"]["output_in_window"], point["window_s"])
    if not close(point["system_tps"], expected_tps):
        out.append(SYSTEM_TPS.at(
            file, f"{where}/system_tps",
            f"system_tps is {fmt(point['system_tps'])} but tokens.output_in_window / window_s is "
            f"{fmt(expected_tps)}",
        ))
    req = point["requests"]
    if req["issued"] - req["completed"] != req["failed"]:
        out.append(FAILED_COUNT.at(
            file, f"{where}/requests/failed",
            f"failed is {req['failed']} but issued - completed is "
            f"{req['issued'] - req['completed']}",
        ))
    errors_total = sum(point["errors"].values())
    if errors_total != req["failed"]:
        out.append(ERROR_SUM.at(
            file, f"{where}/errors",
            f"the error classes add up to {errors_total} but requests.failed is {req['failed']}",
        ))
    return out


@on_point(10)
def _on_point(s: Subject, where: str, point: dict[str, Any]) -> list[Finding]:
    return check_point(point, where, s.file)
