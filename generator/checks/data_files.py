"""Moved to epbench.generator.checks.file.data_files (check ids in the module their prefix names).
This name only re-exports what generator/validate.py imports from it, while that file is edited
on another branch; delete it once generator/validate.py imports from the new module.
"""

from epbench.generator.checks.file.data_files import (
    NOT_DOCUMENTS as NOT_DOCUMENTS,
)
from epbench.generator.checks.file.data_files import (
    classified as classified,
)
from epbench.generator.checks.file.data_files import (
    classify as classify,
)
from epbench.generator.checks.file.data_files import (
    in_data_folder as in_data_folder,
)
from epbench.generator.checks.file.data_files import (
    result_of as result_of,
)
