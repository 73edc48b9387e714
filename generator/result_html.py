"""The repeated rows of a result page (every point, the price card, the disclosure, the agentic
tables) as escaped HTML, built in plain loops rather than cell by cell in Jinja.

A page has about 250 cells; through Jinja each cost a test, a filter call and an escape, and at
100,000 results the site renders 100,000 pages. Here a row is one f-string. Escaping stays
mandatory, the result being untrusted data: every text cell goes through `markupsafe.escape`
(remembered per distinct text, since the same names and labels recur on every page); numbers
are written by `epbench.generator.number_format` from Python ints and floats, so their text is
digits,
separators, signs and an em dash only and needs none. The template gets `Markup` and writes it
as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from numbers import Number
from typing import Any

from markupsafe import Markup, escape

from epbench.generator.number_format import fmt_number, fmt_usd, fmt_value

_LIMIT = 50_000
"""Distinct texts remembered before a memory starts again (ids and times are unique per
result, so an unbounded one would grow with the results)."""


class _Remembered(dict[Hashable, str]):
    """HTML made once per distinct key by `make`, at most `_LIMIT` keys (then it starts
    again). Read as `memory[key]`: a hit is a plain dict lookup (0.07 µs here; a
    `functools.lru_cache` call took 0.12 µs, and a page reads about 250)."""

    def __init__(self, make: Callable[[Any], str]) -> None:
        super().__init__()
        self._make = make

    def __missing__(self, key: Hashable) -> str:
        if len(self) >= _LIMIT:
            self.clear()
        out = self[key] = self._make(key)
        return out


_OTHER_CELLS = {None: "<td>—</td>", True: "<td>yes</td>", False: "<td>no</td>"}
_ESCAPED = _Remembered(lambda value: str(escape(value)))


def text(value: str) -> str:
    """A text escaped for HTML (remembered)."""
    return _ESCAPED[value]


def shown(value: Any) -> str:
    """Any value as `fmt_value` shows it, escaped."""
    kind = type(value)
    if kind is str:
        return text(value)
    if kind is float or kind is int:
        return fmt_number(value)
    return text(fmt_value(value))


def number(value: Any) -> str:
    """A value as the `num` filter shows it, escaped."""
    kind = type(value)
    if kind is float or kind is int:
        return fmt_number(value)
    return text(fmt_number(value))


def head_row(labels: Iterable[str]) -> Markup:
    """A table's header cells (built once per table kind, not per page)."""
    return Markup("".join(f'<th scope="col">{escape(label)}</th>' for label in labels))


def _text_cell(value: str) -> str:
    """A text cell of the points table; dollar amounts right-aligned like numbers."""
    align = ' class="epb-num"' if value.startswith("$") else ""
    return f"<td{align}>{text(value)}</td>"


def _text_row(pair: tuple[str, str]) -> str:
    """A two-column row of two texts."""
    return f'<tr><th scope="row">{text(pair[0])}</th><td>{text(pair[1])}</td></tr>\n'


_TEXT_CELLS = _Remembered(_text_cell)
_TEXT_ROWS = _Remembered(_text_row)


def point_rows(rows: Iterable[list[Any]]) -> Markup:
    """The body rows of the points table, one `<tr>` a point: numbers right-aligned, the rest
    as `fmt_value` shows it."""
    out = []
    cells, num = _TEXT_CELLS, fmt_number
    for row in rows:
        out.append("<tr>")
        for value in row:
            kind = type(value)
            if kind is float or kind is int:
                out.append(f'<td class="epb-num">{num(value)}</td>')
            elif kind is str:
                out.append(cells[value])
            elif value is None or kind is bool:
                out.append(_OTHER_CELLS[value])
            elif isinstance(value, Number):  # not from JSON; as the template's `is number`
                out.append(f'<td class="epb-num">{text(fmt_value(value))}</td>')
            else:
                out.append(f"<td>{text(fmt_value(value))}</td>")
        out.append("</tr>\n")
    return Markup("".join(out))


def kv_rows(pairs: Iterable[tuple[str, Any]]) -> Markup:
    """Rows of a two-column table: a label as the row header, then its value (a row of two
    texts remembered whole: most recur on every page)."""
    out = []
    rows = _TEXT_ROWS
    for key, value in pairs:
        if type(value) is str:
            out.append(rows[key, value])
        else:
            out.append(f'<tr><th scope="row">{text(key)}</th><td>{shown(value)}</td></tr>\n')
    return Markup("".join(out))


def price_rows(card: Iterable[tuple[str, Any]], labels: Mapping[str, str]) -> Markup:
    """The price card's rows: fields in words, prices in dollars."""
    return Markup("".join(
        f'<tr><th scope="row">{text(labels.get(k, k))}</th><td>'
        f'{text(fmt_usd(v)) if k.endswith("usd_per_mtok") or k == "usd_per_hour" else shown(v)}'
        "</td></tr>\n" for k, v in card))


def retry_rows(retry: Iterable[tuple[str, Mapping[str, Any]]]) -> Markup:
    """The agentic requests by tag: requests, tokens, seconds, dollars."""
    return Markup("".join(
        f"<tr><td>{text(str(tag))}</td><td>{number(c.get('requests'))}</td>"
        f"<td>{number(c.get('tokens'))}</td><td>{number(c.get('seconds'))}</td>"
        f"<td>{text(fmt_usd(c.get('usd')))}</td></tr>\n" for tag, c in retry))


def task_rows(tasks: Iterable[Mapping[str, Any]]) -> Markup:
    """The agentic tasks: id, trials, successes, outcomes."""
    return Markup("".join(
        f"<tr><td>{text(str(t['id']))}</td><td>{number(t['trials'])}</td>"
        f"<td>{number(t['successes'])}</td><td>{text(str(t['outcomes']))}</td></tr>\n"
        for t in tasks))


def pareto_line(pareto: Iterable[Mapping[str, Any]]) -> Markup:
    """The frontier as one line: each point with its per-user and system speed."""
    return Markup(" → ".join(
        f"{text(str(f['point']))} ({number(f.get('tps_per_user'))} tok/s/user, "
        f"{number(f.get('system_tps'))} tok/s)" for f in pareto))
