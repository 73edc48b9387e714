"""The runner: HTTP client, load patterns, metrics, agentic executor, endpoint emulator.

It reads endpoint and workload files and writes an event journal and a result file that match
`schemas/`. It never imports `generator`.
"""
