"""Moved to epbench.generator.checks.workload.sha (check ids in the module their prefix names).
This name only re-exports what generator/tables.py imports from it, while that file is edited on
another branch; delete it once generator/tables.py imports from the new module.
"""

from epbench.generator.checks.workload.sha import (
    WorkloadIndex as WorkloadIndex,
)
