"""Recomputations already done: so that a tree of 10,000 results with their journals
validates in seconds, once each result has been recomputed.

Recomputing a result from its journal costs milliseconds (about 5 ms of CPU for two points of
64 requests; the bootstrap intervals dominate). Once a result has passed, its verdict is
remembered under a key made of

    the journal's sha256 (checked against the journal's bytes on every validation),
    the sha256 of every figure the result publishes (and the price card it pins), and
    a fingerprint of the code that recomputes (its source files and numpy's version),

so any change to the journal, to a figure or to the maths misses the cache and recomputes.
Only passes are remembered; the cache is one append-only file of keys, a line each
(`verified/keys`), kept outside the repository (`epbench.core.paths.user_cache_dir`), so
nothing a pull request contains can add to it. Validation workers append to it at once (each
line is one write of 65 bytes to a file opened for appending, which the kernel keeps whole)
and each process reads only what was appended since it last looked.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from epbench.core.paths import user_cache_dir

_FIGURES = ("points", "pareto", "retries", "burst", "resumes", "agentic")
_CODE = ("summary.py", "agentic_summary.py", "runspec.py", "trial_record.py", "cost_ledger.py",
         "pricing.py", "evidence.py", "rankable.py", "journal_lines.py", "workload_plan.py",
         "agentic_plan.py")


def cache_dir() -> Path:
    return user_cache_dir() / "verified"


@cache
def code_fingerprint() -> str:
    """sha256 over the recomputing code (epbench.core's maths and this check) and numpy's
    version."""
    import epbench.core

    digest = hashlib.sha256(np.__version__.encode())
    base = Path(epbench.core.__file__).parent
    files = [base / name for name in _CODE]
    files += sorted((base / "metrics").glob("*.py"))
    here = Path(__file__).parent
    files += [here / n for n in ("evidence.py", "workload/plan.py", "workload/agentic_plan.py",
                                 "plausible/fastest_gap.py")]
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def key(result: Mapping[str, Any]) -> str:
    figures = {name: result.get(name) for name in _FIGURES}
    figures["pricing"] = (result.get("endpoint") or {}).get("pricing")
    figures["evidence"] = result.get("evidence")
    figures["workload"] = result.get("workload")  # the plan it was compared with
    figures["settings"] = result.get("settings")
    text = json.dumps(figures, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256((code_fingerprint() + text).encode()).hexdigest()


class _Keys:
    """One keys file as this process last read it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.known: set[str] = set()
        self.offset = 0

    def refresh(self) -> None:
        try:
            with self.path.open("rb") as handle:
                handle.seek(self.offset)
                added = handle.read()
        except OSError:
            return
        complete = added.rfind(b"\n") + 1  # a line still being written waits for next time
        self.offset += complete
        for line in added[:complete].split(b"\n"):
            if len(line) == 64:
                self.known.add(line.decode("ascii", "replace"))


@lru_cache(maxsize=4)
def _keys_of(path: Path) -> _Keys:
    """The keys file at `path` (one cache folder a process, but tests set
    EPBENCH_CACHE_DIR to others)."""
    return _Keys(path)


def _keys_file() -> Path:
    return cache_dir() / "keys"


def seen(wanted: str) -> bool:
    """Whether the verdict of `key(result)` was remembered."""
    keys = _keys_of(_keys_file())
    if wanted not in keys.known:
        keys.refresh()
    return wanted in keys.known


def remember(passed: str) -> None:
    """Remember that the result of key `passed` passed."""
    path = _keys_file()
    line = (passed + "\n").encode("ascii")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except OSError:
        pass  # a read-only home: recompute next time
