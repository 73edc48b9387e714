"""Checks that a result ran the workload it claims (`workload.*`): the workload file's bytes
(`sha`: the sha256 of a version of it, current or in git history), a trace workload's trace
file (`trace`), and the plan the journal ran, rebuilt from the claimed version (`plan` for
serving results, `agentic_plan` for agentic ones).
"""
