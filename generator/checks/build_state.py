"""Moved to epbench.generator.checks.file.build_state (check ids in the module their prefix names).
This name only re-exports what generator/validate.py imports from it, while that file is edited
on another branch; delete it once generator/validate.py imports from the new module.
"""

from epbench.generator.checks.file.build_state import (
    committed_state as committed_state,
)
