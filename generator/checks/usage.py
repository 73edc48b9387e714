"""Usage held to what was streamed, recomputed from the journal: the runner classes a request
whose `usage` no stream could carry as `usage_implausible` (epbench.core.usage_bounds); a journal
that calls such a request `ok` was not written as the run ran, and is rejected.

The bounds read the line's own counts and streamed bytes, the result's `settings.max_tokens`
(the request's limit; the workload check holds it to the workload) and its endpoint's API.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from epbench.core.findings import Finding
from epbench.core.usage_bounds import Streamed, implausible
from epbench.generator.checks.base import check

USAGE = check(
    "evidence.usage", "reject",
    "no request the journal calls ok reports usage that its streamed bytes, its max_tokens or "
    "arithmetic rule out",
    "the runner classes such a request usage_implausible: submit the journal as the run wrote it",
)


def check_usage(result: Mapping[str, Any], records: Sequence[Mapping[str, Any]],
                file: str) -> list[Finding]:
    """One finding for the first serving request line classed ok whose usage is implausible."""
    limit = (result.get("settings") or {}).get("max_tokens")
    if not isinstance(limit, int) or isinstance(limit, bool):
        limit = None
    api = (result.get("endpoint") or {}).get("api")
    for line in records:
        if line.get("type", "request") != "request" or "task" in line \
                or line.get("class") != "ok":
            continue
        problem = implausible(Streamed.from_line(line), limit, api if isinstance(api, str)
                              else None)
        if problem is not None:
            return [USAGE.at(file, "/evidence",
                             f"request {str(line.get('request_id'))[:80]!r} is ok in the journal "
                             f"but {problem}")]
    return []
