"""What a result page is rendered from, a slice at a time: its `runs` row as plain JSON values
(the columns the page reads) with its frontier marks (`row["frontier"]`), and the digest
of its inputs that the page manifest keeps (`epbench.generator.build.page_manifest.page_digests`).

An incremental build makes the rows of the results whose day changed in the parent, to find
the pages that still stand (`RowList`). A full build, where nothing can stand, hands the
whole `runs` and `points` tables to the forked page workers instead (`FrameRows`): each makes
the rows and digests of its own slice, so that work is split over the cores rather than done
on one before the workers start (3 s of the parent at 100,000 results). Decisions that look at
a whole column (which columns are walked cell by cell, which are hashed by repr) are taken
once over the whole table, so a slice's rows and digests are the ones the whole table gives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from epbench.generator.build import hashed_by_repr, page_digests
from epbench.generator.plain_json import columns_to_walk, records
from epbench.generator.render import ROW_COLUMNS, frontier_by_run

if TYPE_CHECKING:
    from epbench.generator.tables import Tables


@dataclass(frozen=True)
class RowList:
    """Rows already made, with their digests (None: unknown, the page is always built)."""

    rows: list[dict[str, Any]]
    digests: list[str | None]

    def __len__(self) -> int:
        return len(self.rows)

    def take(self, start: int, end: int) -> tuple[list[dict[str, Any]], list[str | None]]:
        return self.rows[start:end], self.digests[start:end]


@dataclass(frozen=True)
class FrameRows:
    """Every row of a `runs` table, made slice by slice; digests only where `shas` is given
    (the build has a cache folder)."""

    runs: pd.DataFrame
    points: pd.DataFrame
    shas: dict[str, str] | None
    context: str
    walk: list[Any]
    by_repr: set[str]

    @classmethod
    def of(cls, tables: Tables, shas: dict[str, str] | None, context: str) -> FrameRows:
        runs = tables.runs
        points = tables.points[["run_id", "point", "on_pareto"]]  # all the frontier reads
        on = points["on_pareto"].fillna(False).astype(bool).to_numpy()
        return cls(runs, points[on], shas, context, columns_to_walk(page_columns(runs)),
                   hashed_by_repr(runs) if shas is not None else set())

    def __len__(self) -> int:
        return len(self.runs)

    def take(self, start: int, end: int) -> tuple[list[dict[str, Any]], list[str | None]]:
        part = self.runs.iloc[start:end]
        front = frontier_by_run(self.points, set(part["run_id"].astype(str)))
        rows = [{**r, "frontier": front.get(str(r["run_id"]), [])}
                for r in records(page_columns(part), self.walk)]
        if self.shas is None:
            return rows, [None] * len(rows)
        return rows, page_digests(part, front, self.shas, self.context, self.by_repr)


def page_columns(runs: pd.DataFrame) -> pd.DataFrame:
    """The columns of a `runs` frame a result page reads
    (`epbench.generator.render.ROW_COLUMNS`)."""
    return runs[[c for c in ROW_COLUMNS if c in runs.columns]]
