"""What a status git reports for a data file means under `--changed-since`
(epbench.generator.changes reads the statuses): a deletion is flagged for a maintainer's review,
a change of type (file, link, submodule) is rejected.
"""

from __future__ import annotations

from epbench.generator.checks.base import check

DELETED = check(
    "file.deleted", "flag", "a pull request that deletes a result, workload or endpoint file "
    "is reviewed by a maintainer",
    "a maintainer confirms the deletion (results are withdrawn by their submitter or a "
    "maintainer, never silently)",
)
TYPE_CHANGE = check(
    "file.type-change", "reject", "a data file does not change type (file, link, submodule)",
    "commit a regular file in place of the link (or the reverse change is refused too)",
)
