"""A journal's request lines held as columns: what `epbench validate` keeps of a journal of
hundreds of thousands of requests (a journal at the 256 MiB cap validates in under 512 MB).

A parsed request line as a dict costs about 2.5 KB: a hash table of some 30 keys, an int
object per timestamp, a dict of server headers. Held as columns, an integer field is 8 bytes
in an `array('q')`, any other field one reference (short strings interned, floats shared, a
header block as its JSON bytes, equal ones once), and the inter-token gaps of every request in
flat arrays of the smallest integer type each request's gaps fit (1, 2 or 4 bytes a gap; the
journal spends 2 to 7):

    Requests.append(line)  ->  Row   the line stored; the Row reads it back
    row["t_send_ns"], row.get("itl_us"), "error" in row, iter(row), row["_session"] = 2

A Row is a mutable mapping with the line's keys and values (gaps as an `array` of integers:
'B', 'H', 'i' or 'q'), so the one summarizer
(epbench.core.summary) and the checks read it as they read the dict it replaces. Keys iterate in
the order the table first saw them, not the line's own order: nothing that reads a record
depends on it. A value of an unexpected type (a float where the other lines hold an integer)
is kept as it is, beside the column.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

import orjson

from epbench.core import journal_lines


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()
"""What a column holds for a line that lacks the key."""

_LOW = -(2**63)
_ABSENT_CODE, _NONE_CODE, _OTHER_CODE = _LOW, _LOW + 1, _LOW + 2
_SHARED_MAX = 4096  # distinct header blocks / floats shared; past that, kept per line


class _Ints:
    """Integers as 8 bytes each; absence, None and anything else as codes below them."""

    def __init__(self, rows: int) -> None:
        self.values = array("q", [_ABSENT_CODE]) * rows
        self.other: dict[int, Any] = {}

    def append(self, value: Any) -> None:
        self.values.append(self._code(len(self.values), value))

    def set(self, row: int, value: Any) -> None:
        self.other.pop(row, None)
        self.values[row] = self._code(row, value)

    def _code(self, row: int, value: Any) -> int:
        if type(value) is int and _OTHER_CODE < value < 2**63:
            return value
        if value is ABSENT:
            return _ABSENT_CODE
        if value is None:
            return _NONE_CODE
        self.other[row] = value
        return _OTHER_CODE

    def get(self, row: int) -> Any:
        value = self.values[row]
        if value > _OTHER_CODE:
            return value
        if value == _OTHER_CODE:
            return self.other[row]
        return ABSENT if value == _ABSENT_CODE else None


def smallest_code(values: Any) -> str | None:
    """The smallest `array` typecode that holds these integers ('B', 'H', 'i' or 'q': 1, 2, 4
    or 8 bytes each); None when they are not all integers (bool is not) or pass 64 bits."""
    if isinstance(values, array):
        return values.typecode if values.typecode in _RANGES else None
    if not isinstance(values, list) or not all(type(v) is int for v in values):
        return None
    low, high = (min(values), max(values)) if values else (0, 0)
    return next((code for code, (lo, hi) in _RANGES.items() if lo <= low and high <= hi), None)


_RANGES = {"B": (0, 2**8 - 1), "H": (0, 2**16 - 1), "i": (-(2**31), 2**31 - 1),
           "q": (-(2**63), 2**63 - 1)}
_FLAT = ("B", "H", "i", "q")


class _IntLists:
    """Lists of integers (inter-token gaps): each row's in one of four flat arrays, the one of
    the smallest type its values fit (1 byte a gap for gaps under 256 us, 2 under 65 ms, 4
    past that), by offsets."""

    def __init__(self, rows: int) -> None:
        self.flats = [array(code) for code in _FLAT]
        self.kinds = array("b", [-1]) * rows  # which flat; -1: the value is in `other`, or absent
        self.starts = array("q", [0]) * rows
        self.ends = array("q", [0]) * rows
        self.other: dict[int, Any] = {}

    def append(self, value: Any) -> None:
        self.kinds.append(-1)
        self.starts.append(0)
        self.ends.append(0)
        self.set(len(self.kinds) - 1, value)

    def set(self, row: int, value: Any) -> None:
        self.other.pop(row, None)
        self.kinds[row] = -1
        if value is ABSENT:
            return
        code = smallest_code(value)
        if code is None:
            self.other[row] = value
            return
        kind = _FLAT.index(code)
        flat = self.flats[kind]
        self.starts[row] = len(flat)
        flat.extend(value)
        self.ends[row] = len(flat)
        self.kinds[row] = kind

    def get(self, row: int) -> Any:
        kind = self.kinds[row]
        if kind < 0:
            return self.other.get(row, ABSENT)
        return self.flats[kind][self.starts[row]:self.ends[row]]


class _Packed(bytes):
    """A dict or list held as its JSON bytes (a header block: a few hundred bytes as a dict of
    strings, half that as bytes); read back as a new dict or list each time."""

    __slots__ = ()


class _Objects:
    """One reference per row; short strings interned, floats and equal JSON blocks shared, dicts
    and lists held as their JSON bytes."""

    def __init__(self, rows: int, shared: dict[Any, Any]) -> None:
        self.values: list[Any] = [ABSENT] * rows
        self.shared = shared

    def append(self, value: Any) -> None:
        self.values.append(self._share(value))

    def set(self, row: int, value: Any) -> None:
        self.values[row] = self._share(value)

    def _share(self, value: Any) -> Any:
        kind = type(value)
        if kind is str:
            return sys.intern(value) if len(value) <= 64 else value
        if kind is float:
            key: Any = value.hex()
        elif kind is dict or kind is list:
            try:
                key = value = _Packed(orjson.dumps(value))
            except TypeError:
                return value  # (set by a caller, not parsed: kept as it is)
        else:
            return value
        found = self.shared.get(key)
        if found is None:
            if len(self.shared) >= _SHARED_MAX:
                return value
            self.shared[key] = found = value
        return found

    def get(self, row: int) -> Any:
        value = self.values[row]
        return orjson.loads(memoryview(value)) if type(value) is _Packed else value


_Column = _Ints | _IntLists | _Objects


class Requests:
    """Request lines as columns, one per key seen; `append` returns each line's Row."""

    def __init__(self) -> None:
        self.columns: dict[str, _Column] = {}
        self.rows = 0
        self._shared: dict[Any, Any] = {}

    def append(self, line: Mapping[str, Any]) -> Row:
        columns = self.columns
        for key, value in line.items():
            if key not in columns:
                columns[key] = self._column(key, value)
        for key, column in columns.items():
            column.append(line.get(key, ABSENT))
        self.rows += 1
        return Row(self, self.rows - 1)

    def set(self, row: int, key: str, value: Any) -> None:
        column = self.columns.get(key)
        if column is None:
            column = self.columns[key] = self._column(key, value)
        column.set(row, value)

    def _column(self, key: str, first: Any) -> _Column:
        if key == "itl_us" or (isinstance(first, list | array) and all(
                type(v) is int for v in first)):
            return _IntLists(self.rows)
        if type(first) is int or key in _INT_KEYS or key.endswith(("_ns", "_tokens")):
            return _Ints(self.rows)  # (a first line's None does not make it a list of objects)
        return _Objects(self.rows, self._shared)


_INT_KEYS = frozenset({"seq", "status", "attempts", "input_requested", "_session",
                       *journal_lines.STREAMED_FIELDS})


class Row(MutableMapping[str, Any]):
    """One request line of a `Requests` table, read and written as a mapping."""

    __slots__ = ("_row", "_table")

    def __init__(self, table: Requests, row: int) -> None:
        self._table = table
        self._row = row

    def __getitem__(self, key: str) -> Any:
        column = self._table.columns.get(key)
        value = ABSENT if column is None else column.get(self._row)
        if value is ABSENT:
            raise KeyError(key)
        return value

    def get(self, key: str, default: Any = None) -> Any:
        column = self._table.columns.get(key)
        value = ABSENT if column is None else column.get(self._row)
        return default if value is ABSENT else value

    def __contains__(self, key: object) -> bool:
        column = self._table.columns.get(key) if isinstance(key, str) else None
        return column is not None and column.get(self._row) is not ABSENT

    def __iter__(self) -> Iterator[str]:
        row = self._row
        return iter([k for k, c in self._table.columns.items() if c.get(row) is not ABSENT])

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __setitem__(self, key: str, value: Any) -> None:
        self._table.set(self._row, key, value)

    def __delitem__(self, key: str) -> None:
        if key not in self:
            raise KeyError(key)
        self._table.set(self._row, key, ABSENT)

    def __repr__(self) -> str:
        return f"Row({dict(self)!r})"
