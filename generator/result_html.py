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

from collections.abc import Iterable, Mapping
from numbers import Number
from typing import Any

from markupsafe import Markup, escape

from epbench.generator.number_format import fmt_number, fmt_usd, fmt_value

_LIMIT = 50_000
"""Distinct texts remembered before a memory starts again (ids and times are unique per
result, so an unbounded one would grow with the results)."""
_escaped: dict[str, str] = {}
_text_cells: dict[str, str] = {}
_text_rows: dict[tuple[str, str], str] = {}
_OTHER_CELLS = {None: "<td>—</td>", True: "<td>yes</td>", False: "<td>no</td>"}


def text(value: str) -> str:
    """A text escaped for HTML (remembered)."""
    out = _escaped.get(value)
    if out is None:
        if len(_escaped) >= _LIMIT:
            _escaped.clear()
        out = _escaped[value] = str(escape(value))
    return out


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
    if len(_text_cells) >= _LIMIT:
        _text_cells.clear()
    align = ' class="epb-num"' if value.startswith("$") else ""
    out = _text_cells[value] = f"<td{align}>{text(value)}</td>"
    return out


def point_rows(rows: Iterable[list[Any]]) -> Markup:
    """The body rows of the points table, one `<tr>` a point: numbers right-aligned, the rest
    as `fmt_value` shows it."""
    out = []
    cells, num = _text_cells, fmt_number
    for row in rows:
        out.append("<tr>")
        for value in row:
            kind = type(value)
            if kind is float or kind is int:
                out.append(f'<td class="epb-num">{num(value)}</td>')
            elif kind is str:
                out.append(cells.get(value) or _text_cell(value))
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
    rows = _text_rows
    for key, value in pairs:
        if type(value) is str:
            row = rows.get((key, value))
            if row is None:
                if len(rows) >= _LIMIT:
                    rows.clear()
                row = rows[key, value] = (f'<tr><th scope="row">{text(key)}</th>'
                                          f"<td>{text(value)}</td></tr>\n")
            out.append(row)
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
