"""Results in, site out: loading, validation, aggregation, cost normalization, charts, rendering.

It reads result, workload and endpoint files that match `schemas/`. It never imports `runner`.
"""
