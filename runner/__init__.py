"""The runner: HTTP client, load patterns, agentic executor, endpoint emulator.

It reads endpoint and workload files and writes an event journal and a result file that match
`schemas/`. The metrics it reports are computed by `epbench.core.metrics` (and the summaries in
`epbench.core.summary`, `epbench.core.agentic_summary`), the same functions the validator
recomputes a result with. It never imports `epbench.generator`.
"""
