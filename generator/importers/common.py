"""What both importers share: ids from free text, distributions, placing the files."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from epbench.core import __version__
from epbench.core.errors import InputError
from epbench.core.metrics.errors import CLASSES_IN_EVERY_RESULT
from epbench.core.metrics.percentiles import insufficient
from epbench.core.schema import check_schema
from epbench.generator.checks.layout import expected_relpath
from epbench.generator.submit import ID_PATTERN

# Imported results carry the classes every result has (the taxonomy: epbench.core.metrics.errors).
ERROR_CLASSES = CLASSES_IN_EVERY_RESULT
UNKNOWN_BASE_URL = "http://unknown.invalid/v1"


def slug(text: str, limit: int = 64) -> str:
    """An epbench id from free text: lowercase, [a-z0-9._-], starting with a letter or digit."""
    out = re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-._")
    return (out or "unknown")[:limit].rstrip("-._") or "unknown"


def digest(*parts: object) -> str:
    """sha256 of the canonical JSON of the parts (stable ids for re-imports)."""
    blob = json.dumps(parts, sort_keys=True, default=str).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


def dist(p50: float | None, p90: float | None, p95: float | None, p99: float | None,
         mean: float | None, n: int) -> dict[str, Any]:
    """An epbench distribution; percentiles the source did not report stay null."""
    values = {"p50": p50, "p90": p90, "p95": p95, "p99": p99, "mean": mean}
    if n == 0:
        values = dict.fromkeys(values)
    return {**values, "n": n, "insufficient": insufficient(n)}


def errors_with(failed: int, cls: str = "http_5xx") -> dict[str, int]:
    out = dict.fromkeys(ERROR_CLASSES, 0)
    out[cls] = failed
    return out


def harness_note() -> str:
    return f"imported by epbench {__version__}"


def write_results(results: list[dict[str, Any]], out: Path, submitter: str | None) -> list[Path]:
    """Fill the submitter, check each result against the schema, write it under `out`."""
    name = submitter or out.name
    if not ID_PATTERN.match(name):
        raise InputError(f"--submitter {name!r}: use lowercase letters, digits, '.', '_' or '-'")
    written = []
    for result in results:
        block = {"name": name, "relationship": "independent"}
        block.update({k: v for k, v in (result.get("submitter") or {}).items()
                      if k in ("display_name", "contact", "relationship")})
        result["submitter"] = block
        problems = check_schema(result, "result", "imported result")
        if problems:
            raise InputError(f"the imported result does not fit the schema: {problems[0].line()}")
        relpath = expected_relpath(result)
        if relpath is None:  # pragma: no cover - submitter and date are always set above
            raise InputError("the imported result has no start date")
        target = out / relpath.split("/", 1)[1]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n",
                          encoding="utf-8")
        written.append(target)
    return written


def unmapped_keys(where: str, doc: Any, known: Any) -> list[str]:
    """`where: key` for each top-level key of `doc` that the importer did not read (`known`
    is a set of names, or a callable that says whether a name was read)."""
    if not isinstance(doc, dict):
        return []
    read = known if callable(known) else known.__contains__
    return [f"{where}: {str(key)[:200]}" for key in sorted(map(str, doc)) if not read(key)]


def date_missing(path: Any, what: str) -> InputError:
    """The error for a source without a run date: never guess one (no file times)."""
    return InputError(
        f"{path}: {what}, so the run's date is unknown; pass --date YYYY-MM-DD (or an ISO "
        "date-time) with the day the run started, in UTC"
    )
