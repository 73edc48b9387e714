"""Metric formulas, one module each, the formula in each module's docstring.

percentiles  p50/p90/p95/p99 (numpy linear), counts, sufficiency flags, bootstrap CIs
latency      TTFT, TPOT, ITL, E2E per request (and from the scheduled send time)
throughput   system_tps, tps_per_user, goodput
errors       the error classes
pareto       the (tps_per_user, system_tps) frontier as a step function
burst        per-phase p99 TTFT and error rate, recovery seconds
passk        pass^k over tasks (C(c,k)/C(n,k))
wilson       the Wilson score interval of a proportion

The runner, the validator, the importers and the site tables call these; none of them keeps
a copy of a formula.
"""
