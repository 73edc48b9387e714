"""One table as its two download formats, JSON records and CSV, made column by column in
compiled code (orjson formats the numbers, Arrow joins the cells into rows), never row by row
in Python: the parts of a table are slices of one text.

JSON: an array of row objects, compact (no spaces), UTF-8; NaN, NA and infinities are `null`
(also inside lists and dicts); floats in their shortest round-trip form with a `.` or an
exponent (`5.0`, `0.00001`, `1e-7`), integers without.

CSV: the header row, then one line a row (`\\n`), quoted only where a cell holds a comma, a
quote or a line break (the csv module's minimal quoting); missing values, NaN and infinities
are empty; floats as in the JSON, booleans `True`/`False`; lists and dicts as their JSON
text, except `unranked_reasons` joined by "; "; text that a spreadsheet would run as a
formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage return) is prefixed with a
quote (CSV injection).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

JOINED = "unranked_reasons"
"""The one list column a CSV cell shows as its items joined by "; " (a reader's sentence),
not as JSON."""
_JSON = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS
Pieces = list[str | pa.Array]
"""A column as parts of each row's text: constant text and columns of text (never null)."""


@dataclass(frozen=True)
class Lines:
    """Many rows' text end to end (`text`) and where each row starts (`offsets`, one more
    than the rows)."""

    offsets: np.ndarray
    text: memoryview

    @classmethod
    def of(cls, rows: pa.Array) -> Lines:
        _validity, offsets, text = rows.buffers()
        where = np.frombuffer(offsets, dtype=np.int32)[rows.offset:][:len(rows) + 1]
        return cls(where, memoryview(text) if text is not None else memoryview(b""))

    def between(self, start: int, end: int) -> memoryview:
        return self.text[int(self.offsets[start]):int(self.offsets[end])]


@dataclass(frozen=True)
class Rows:
    """A frame's rows as JSON objects (each followed by a comma) and as CSV lines."""

    json: Lines
    csv: Lines
    header: bytes

    def json_part(self, start: int, end: int) -> list[bytes | memoryview]:
        """Rows `start:end` as one JSON array and a newline (the pieces to write)."""
        if start == end:
            return [b"[]\n"]
        return [b"[", self.json.between(start, end)[:-1], b"]\n"]  # no comma after the last

    def csv_part(self, start: int, end: int) -> list[bytes | memoryview]:
        """Rows `start:end` as CSV with the header (the pieces to write)."""
        return [self.header, self.csv.between(start, end)]


def rows(frame: pd.DataFrame) -> Rows:
    """Every row of `frame` in both formats. The text of one call must stay under 2 GB
    (Arrow's string offsets): the caller converts a table in blocks of rows."""
    columns = [str(c) for c in frame.columns]
    header = io.StringIO()
    csv.writer(header, lineterminator="\n").writerow(columns)
    json_pieces: Pieces = ["{"]
    cells: Pieces = []
    for i, name in enumerate(columns):
        token, cell = _column(frame.iloc[:, i], name)
        json_pieces += ["," if i else "", orjson.dumps(name).decode(), ":", *token]
        cells += cell
    return Rows(_lines([*json_pieces, "},"], len(frame)), _csv_lines(cells, len(frame)),
                header.getvalue().encode())


def _lines(pieces: Pieces, length: int, between: str = "") -> Lines:
    """One text a row: the pieces (constants and columns) end to end with `between` from one
    to the next, in one join. Adjacent constants are merged first: the join costs about the
    same for each piece of each row, constant or column, and nothing for `between`."""
    merged: Pieces = []
    for piece in pieces:
        if isinstance(piece, str) and merged and isinstance(merged[-1], str):
            merged[-1] += between + piece
        else:
            merged.append(piece)
    if all(isinstance(p, str) for p in merged):
        return Lines.of(pa.array([between.join(merged)] * length, type=pa.string()))
    return Lines.of(pc.binary_join_element_wise(*merged, between))


def _csv_lines(cells: Pieces, length: int) -> Lines:
    """CSV lines: one cell a column, joined by the join's separator "," (half the pieces of
    joining the commas as constants), the line break folded into the last cell."""
    if not cells:
        return _lines(["\n"], length)
    last = cells[-1]
    end = last + "\n" if isinstance(last, str) else pc.binary_join_element_wise(last, "\n", "")
    return _lines([*cells[:-1], end], length, between=",")


# --- one column: its JSON and its CSV --------------------------------------------------------

def _column(series: pd.Series, name: str) -> tuple[Pieces, Pieces]:
    numpy = isinstance(series.dtype, np.dtype)
    if numpy and series.dtype.kind == "b":
        return ([_split(orjson.dumps(series.to_numpy(), option=_JSON))],
                [pc.if_else(pa.array(series.to_numpy()), "True", "False")])
    if numpy and series.dtype.kind in "fiu":  # orjson formats numbers (NaN, inf: null)
        numbers = series.to_numpy()
        tokens = _split(orjson.dumps(numbers, option=_JSON))
        finite = series.dtype.kind != "f" or bool(np.isfinite(numbers).all())
        return [tokens], [tokens if finite else _empty_for_null(tokens)]  # (no null to empty)
    values = series.to_numpy() if series.dtype == object else None
    try:
        array = pa.array(values, from_pandas=True) if values is not None else _arrow(series)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):  # a mix of types
        return _each(values if values is not None else series.to_numpy(dtype=object), name)
    kind = array.type
    if pa.types.is_null(kind):
        return ["null"], [""]
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        text = array.cast(pa.string())
        return _quoted(text), [_csv_text(text)]
    if pa.types.is_floating(kind) and not _mixed(values, float):
        tokens = _split(orjson.dumps(array.to_numpy(zero_copy_only=False), option=_JSON))
        return [tokens], [_empty_for_null(tokens)]  # (missing as NaN, written as null)
    if pa.types.is_integer(kind) and not _mixed(values, (int, np.integer)):
        text = array.cast(pa.string())
        return [pc.fill_null(text, "null")], [pc.fill_null(text, "")]
    if pa.types.is_boolean(kind):
        return ([pc.fill_null(pc.if_else(array, "true", "false"), "null")],
                [pc.fill_null(pc.if_else(array, "True", "False"), "")])
    if pa.types.is_list(kind) and pa.types.is_null(kind.value_type):  # only [] and None
        array, kind = array.cast(pa.list_(pa.string())), pa.list_(pa.string())
    if pa.types.is_list(kind) and pa.types.is_string(kind.value_type):
        items = pa.ListArray.from_arrays(array.offsets, _token(_quoted(array.values)),
                                         mask=array.is_null())
        tokens = pc.binary_join_element_wise("[", pc.binary_join(items, ","), "]", "")
        shown = pc.binary_join(array, "; ") if name == JOINED else pc.binary_join_element_wise(
            "[", pc.binary_join(items, ", "), "]", "")  # (json.dumps's spacing, as before)
        return [pc.fill_null(tokens, "null")], [_csv_text(shown)]
    return _each(values if values is not None else series.to_numpy(dtype=object), name)


def _split(dumped: bytes) -> pa.Array:
    """The items of orjson's JSON array of numbers, booleans and nulls (no comma inside an
    item) as a string array, without copying them one by one."""
    body = np.frombuffer(dumped, dtype=np.uint8)[1:-1]
    if not len(body):
        return pa.array([], type=pa.string())
    commas = np.flatnonzero(body == ord(","))
    offsets = np.empty(len(commas) + 2, dtype=np.int32)
    offsets[0], offsets[-1] = 0, len(body) - len(commas)
    offsets[1:-1] = commas - np.arange(len(commas))
    return pa.StringArray.from_buffers(len(commas) + 1, pa.py_buffer(offsets),
                                       pa.py_buffer(body[body != ord(",")]))


def _empty_for_null(tokens: pa.Array) -> pa.Array:
    return pc.if_else(pc.equal(tokens, "null"), "", tokens)


def _mixed(values: np.ndarray | None, kind: type | tuple[type, ...]) -> bool:
    """Whether a column of Python objects that Arrow read as numbers also holds other values
    that Arrow turned into them (an integer or a boolean among floats): such a column is
    written cell by cell, each value as it is."""
    if values is None:
        return False
    return not all(v is None or (isinstance(v, kind) and not isinstance(v, (bool, np.bool_)))
                   for v in values)


def _quoted(text: pa.Array) -> Pieces:
    """Text as JSON strings; missing is `null`. Where no cell is missing or needs escaping
    (a quote, a backslash, a control character) the quotes are constants around the column;
    otherwise the odd cells are escaped by orjson, one by one."""
    if text.null_count == 0 and not _any_byte(text, _ESCAPED, control=True):
        return ['"', text, '"']
    tokens = pc.binary_join_element_wise('"', text, '"', "")
    odd = pc.fill_null(pc.match_substring_regex(text, r"[\"\\\x00-\x1f]"), False)
    if pc.any(odd).as_py():
        escaped = [orjson.dumps(v).decode() for v in text.filter(odd).to_pylist()]
        tokens = pc.replace_with_mask(tokens, odd, pa.array(escaped, type=pa.string()))
    return [pc.fill_null(tokens, "null")]


def _token(pieces: Pieces) -> pa.Array:
    """Pieces of one column as one text column."""
    if len(pieces) == 1:
        return pieces[0]
    return pc.binary_join_element_wise(*pieces, "")


def _csv_text(text: pa.Array, formulas: bool = True) -> pa.Array:
    """Text as CSV cells: formula-like text prefixed with a quote (with `formulas`), then
    quoted where the csv module would; missing is empty."""
    risky = _FORMULA[_first_bytes(text)] if formulas else np.zeros(0, dtype=bool)
    if risky.any():
        text = pc.if_else(pa.array(risky), pc.binary_join_element_wise("'", text, ""), text)
    if _any_byte(text, _QUOTED):
        needs = pc.fill_null(pc.match_substring_regex(text, r"[,\"\r\n]"), False)
        quoted = pc.binary_join_element_wise('"', pc.replace_substring(text, '"', '""'), '"', "")
        text = pc.if_else(needs, quoted, text)
    return pc.fill_null(text, "")


_ESCAPED = (ord('"'), ord("\\"))
_QUOTED = (ord(","), ord('"'), ord("\r"), ord("\n"))
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet runs as a formula when a cell starts with it."""
_FORMULA = np.zeros(256, dtype=bool)
_FORMULA[[ord(c) for c in FORMULA_START]] = True


def _text_bytes(text: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The offsets of a string array's cells and the bytes they point into."""
    _validity, offsets, data = text.buffers()
    where = np.frombuffer(offsets, dtype=np.int32)[text.offset:][:len(text) + 1]
    return where, (np.frombuffer(data, dtype=np.uint8) if data is not None
                   else np.zeros(0, dtype=np.uint8))


def _any_byte(text: pa.Array, chars: tuple[int, ...], control: bool = False) -> bool:
    """Whether the column's text holds one of the bytes `chars` (or, with `control`, a
    control character): a few passes of comparisons over the bytes."""
    where, data = _text_bytes(text)
    if not len(where):
        return False
    data = data[where[0]:where[-1]]
    found = data < 0x20 if control else np.zeros(len(data), dtype=bool)
    for char in chars:
        found |= data == char
    return bool(found.any())


def _first_bytes(text: pa.Array) -> np.ndarray:
    """Each cell's first byte (0 for an empty or missing cell)."""
    where, data = _text_bytes(text)
    starts = where[:-1]
    first = np.zeros(len(starts), dtype=np.uint8)
    filled = where[1:] > starts
    first[filled] = data[starts[filled]]
    return first


def _each(values: np.ndarray, name: str) -> tuple[Pieces, Pieces]:
    """Cells of any other kind (lists of numbers, dicts, a mix of types), one by one."""
    tokens = [orjson.dumps(v, option=_JSON, default=_missing).decode() for v in values]
    shown = [_shown(v, t, name) for v, t in zip(values, tokens, strict=True)]
    return ([pa.array(tokens, type=pa.string())],
            [_csv_text(pa.array(shown, type=pa.string()), formulas=False)])


def _shown(value: Any, token: str, name: str) -> str | None:
    """One such cell in the CSV: text as it is (a formula quoted); missing, NaN and
    infinities empty; a list in `unranked_reasons` joined by "; "; other lists and dicts as
    json.dumps writes them; numbers and booleans as Python prints them (never quoted: `-1`
    is a number)."""
    if name == JOINED and isinstance(value, list):
        value = "; ".join(str(v) for v in value)
    if isinstance(value, str):
        return "'" + value if value.startswith(FORMULA_START) else value
    if token == "null":
        return None
    if isinstance(value, (list, tuple, dict)):
        try:
            return json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):  # numpy numbers inside: orjson's text
            return token
    return str(value.item() if isinstance(value, np.generic) else value)


def _missing(value: Any) -> None:
    if value is pd.NA or value is pd.NaT:
        return None
    raise TypeError(f"a download cell cannot be written as JSON: {type(value).__name__}")


def _arrow(series: pd.Series) -> pa.Array:
    """A column that is not of numpy numbers or Python objects as one Arrow array (text,
    nullable numbers; categories decoded)."""
    array = pa.array(series, from_pandas=True)
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    return array
