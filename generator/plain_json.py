"""Tables as plain JSON values: the one converter from a DataFrame to what a page or a
download reads (NaN/NA -> null, numpy scalars -> Python numbers, infinities -> null)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd


def plain_rows(frame: pd.DataFrame, walk: list[Any] | None = None) -> list[list[Any]]:
    """Rows as lists of plain JSON values, in one vectorised pass; only the columns that hold
    infinities or containers (lists, dicts: their items may be NaN or numpy scalars) are
    walked cell by cell. Per-cell conversion of every column costs seconds at 10,000 results.
    `walk` names those columns when they were found over a larger frame this one is a slice
    of (so each slice gives the values the whole would)."""
    if frame.empty:
        return []
    values = frame.astype(object).where(frame.notna(), None)
    for column in columns_to_walk(frame) if walk is None else walk:
        # an object Series as it is: `map` would make a column of numbers and None float,
        # None becoming NaN in some frames (or slices) and not in others
        values[column] = pd.Series([_plain(v) for v in values[column].to_numpy()],
                                   index=values.index, dtype=object)
    rows: list[list[Any]] = values.to_numpy().tolist()
    return rows


def columns_to_walk(frame: pd.DataFrame) -> list[Any]:
    """The columns `plain_rows` converts cell by cell."""
    walk = []
    for column in frame.columns:
        series = frame[column]
        if pd.api.types.is_numeric_dtype(series.dtype):
            if pd.api.types.is_float_dtype(series.dtype) and bool((series.abs() == math.inf).any()):
                walk.append(column)
        elif series.dtype == object and any(isinstance(v, (list, tuple, dict, float))
                                            for v in series.to_numpy()):
            walk.append(column)
    return walk


def _plain(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def records(frame: pd.DataFrame, walk: list[Any] | None = None) -> list[dict[str, Any]]:
    """A table as a list of plain-JSON row objects (`walk`: as in `plain_rows`)."""
    columns = [str(c) for c in frame.columns]
    return [dict(zip(columns, row, strict=True)) for row in plain_rows(frame, walk)]


def view_table(frame: pd.DataFrame, columns: list[str]) -> dict[str, Any]:
    """A table as compact JSON for a page: column names once, then rows as arrays."""
    present = [c for c in columns if c in frame.columns]
    return {"columns": present, "rows": plain_rows(frame[present]) if present else []}
