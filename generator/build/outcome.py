"""What the build knows of one result file: its outcome, where its rows are, and the digest of
its journal, made in the worker that checked the file.

`InStore` over a marker value: a file whose rows the cache keeps says so with the shard whose
frames hold them, a type of its own that no rows can be mistaken for.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from epbench.core.digests import sha256_file
from epbench.generator.build.build_cache import JOURNAL_SUFFIX
from epbench.generator.tables import RowCheck, Rows
from epbench.generator.validate import Checked


@dataclass(frozen=True)
class InStore:
    """The file's rows are in its shard's frames on disk (`epbench.generator.build.row_store`),
    not in memory: an unchanged file, or one a cold shard's worker wrote."""

    shard: int


@dataclass
class Outcome:
    """One file as the build has it: checked (its document dropped), its rows (None: it
    gives the tables none), and the sha256 of the journal beside it when it was checked in
    this build (the cache's key with the file's own `Checked.digest`)."""

    checked: Checked
    rows: Rows | InStore | None
    journal_sha: str | None = None


@dataclass(frozen=True)
class CacheCheck:
    """The tables' `RowCheck`, and the journal's sha256 beside it: the task of the build's
    workers (picklable)."""

    rows: RowCheck

    def __call__(self, path: Path) -> Outcome:
        made = self.rows(path)
        journal = os.fspath(path).removesuffix(".json") + JOURNAL_SUFFIX
        return Outcome(made.checked, made.rows, _sha256(journal))


def _sha256(path: str) -> str | None:
    """The file's sha256, None when it cannot be read as a regular file."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        return sha256_file(path)
    except OSError:
        return None
