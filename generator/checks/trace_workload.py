"""Moved to epbench.generator.checks.workload.trace (check ids in the module their prefix names).
This name only re-exports what generator/validate.py imports from it, while that file is edited
on another branch; delete it once generator/validate.py imports from the new module.
"""

from epbench.generator.checks.workload.trace import (
    check_trace_workload as check_trace_workload,
)
