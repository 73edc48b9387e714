"""Recomputations already done: so that a tree of 10,000 results with their journals
validates in seconds, once each result has been recomputed.

Recomputing a result from its journal costs 0.1-2 s (the bootstrap intervals dominate). Once a
result has passed, its verdict is remembered under a key made of

    the journal's sha256 (checked against the journal's bytes on every validation),
    the sha256 of every figure the result publishes (and the price card it pins), and
    a fingerprint of the code that recomputes (its source files and numpy's version),

so any change to the journal, to a figure or to the maths misses the cache and recomputes.
Only passes are remembered; the cache is a folder of empty files named by key, kept outside
the repository (EPBENCH_CACHE_DIR, else ~/.cache/epbench/verified), so nothing a pull request
contains can add to it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

_FIGURES = ("points", "pareto", "retries", "burst", "resumes", "agentic")
_CODE = ("summary.py", "agentic_summary.py", "runspec.py", "trial_record.py", "cost_ledger.py",
         "pricing.py", "evidence.py", "rankable.py", "journal_lines.py")


def cache_dir() -> Path:
    given = os.environ.get("EPBENCH_CACHE_DIR")
    base = Path(given) if given else Path.home() / ".cache" / "epbench"
    return base / "verified"


@cache
def code_fingerprint() -> str:
    """sha256 over the recomputing code (epcore's maths and this check) and numpy's version."""
    import epcore

    digest = hashlib.sha256(np.__version__.encode())
    base = Path(epcore.__file__).parent
    files = [base / name for name in _CODE]
    files += sorted((base / "metrics").glob("*.py"))
    files += [Path(__file__).with_name("evidence.py")]
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def key(result: Mapping[str, Any]) -> str:
    figures = {name: result.get(name) for name in _FIGURES}
    figures["pricing"] = (result.get("endpoint") or {}).get("pricing")
    figures["evidence"] = result.get("evidence")
    text = json.dumps(figures, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256((code_fingerprint() + text).encode()).hexdigest()


def seen(result: Mapping[str, Any]) -> bool:
    try:
        return (cache_dir() / key(result)).is_file()
    except OSError:
        return False


def remember(result: Mapping[str, Any]) -> None:
    try:
        folder = cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        (folder / key(result)).touch()
    except OSError:
        pass  # a read-only home: recompute next time
