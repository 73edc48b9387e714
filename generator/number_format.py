"""Numbers as people read them on the site's pages (the same rules as `fmt` in
site/assets/epbench/lib/format.js).

Three significant figures with thousands separators, dollars with whole cents, shares as
percentages, missing values as an em dash. The run pages format about 150 values each, so the
common case (a float under 1,000) takes one `%g` format, and the rest the full rule.
"""

from __future__ import annotations

import json
import math
from typing import Any

# Below this a figure is zero within float noise (a Wilson bound at no successes comes out
# as 1e-17): it shows as 0, as lib/format.js's NOISE.
NOISE = 1e-12


def fmt_number(value: Any, digits: int = 3) -> str:
    """A number as people read it (as lib/format.js's `fmt`): integers exact with thousands
    separators, floats to `digits` significant figures (2061.3 -> "2,060", 0.00008687 ->
    "0.0000869"); missing values as an em dash."""
    kind = type(value)
    if kind is float:
        if NOISE <= abs(value) < 999.5:  # NaN fails both; infinities the second
            # %g writes fixed notation, trailing zeros cut, exactly when the full rule below
            # would give the same text: no exponent (1e-05 and 1e+03 take the full rule).
            # The %-format: a third of the time of an f-string with a nested precision.
            text = "%.*g" % (digits, value)  # noqa: UP031
            if "e" not in text:
                return text
        return _fmt_float(value, digits)
    if kind is int:
        return f"{value:,}"
    if value is None or isinstance(value, str):
        return "—" if value is None else value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return _fmt_float(value, digits)
    return str(value)


def _fmt_float(value: float, digits: int) -> str:
    if not math.isfinite(value):
        return "—"
    if abs(value) < NOISE:
        return "0"
    rounded = float(f"{value:.{digits}g}")
    if abs(rounded) >= 1000:
        return f"{rounded:,.0f}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(rounded))))
    return f"{rounded:.{decimals}f}".rstrip("0").rstrip(".") if decimals else f"{rounded:.0f}"


def fmt_usd(value: Any) -> str:
    """Dollars as lib/format.js's `fmt(v, 'usd')`: three significant figures with whole cents under
    $1,000 (1.5 -> "$1.50", 0.0938 -> "$0.0938", 1160 -> "$1,160"); missing as an em dash."""
    if type(value) is float and 1e-6 <= abs(value) < 999.5:  # the common case, as below
        text = "%.3g" % value  # noqa: UP031 (see fmt_number)
        if "e" not in text:
            point = text.find(".")
            if point < 0 or len(text) - point < 3:
                text = "%.2f" % value  # noqa: UP031
            return "-$" + text[1:] if value < 0 else "$" + text
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return "—" if value is None or isinstance(value, int | float) else str(value)
    text = fmt_number(float(value))
    decimals = len(text.split(".")[1]) if "." in text else 0
    if abs(float(f"{value:.3g}")) < 1000 and abs(value) >= 1e-6 and decimals < 2:
        text = f"{value:.2f}"
    return "-$" + text[1:] if text.startswith("-") else "$" + text


def fmt_pct(value: Any) -> str:
    """A 0..1 share as a percentage to three significant figures (0.625 -> "62.5%")."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return "—" if value is None or isinstance(value, int | float) else str(value)
    return fmt_number(float(value) * 100) + "%"


def fmt_value(value: Any) -> str:
    """Any disclosure value as text: lists joined, booleans as yes/no, None as an em dash."""
    if isinstance(value, list):
        return ", ".join(fmt_value(v) for v in value) if value else "[]"
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return fmt_number(value)
