"""The shell page's indentation and blank lines, collapsed: every run of whitespace with a
line break in it, in text between tags, becomes one line break.

mkdocs-material's templates indent every tag and leave blank lines where their conditions
were false: about 5 KB of a result page's 28 KB, written 100,000 times by a full build (the
kernel's share of a page's time grows with its bytes). A browser shows such a run exactly as
one line break (both are one space under `white-space: normal` and `nowrap`, the only values
the theme and board.css give outside code). Left as they are: whitespace inside tags (attribute
values), runs without a line break (the single spaces between inline words), non-breaking
spaces, and everything inside the elements whose whitespace shows or is not HTML text:
`pre`, `code`, `kbd`, `textarea`, `script`, `style` (so inline scripts keep the text their
Content-Security-Policy hash was taken of).
"""

from __future__ import annotations

import re

_MARKUP = re.compile(r"<!--.*?-->|<(?:[^>\"']|\"[^\"]*\"|'[^']*')*>", re.S)
"""A comment or a tag (a `>` inside a quoted attribute value does not end it)."""
_KEEP = re.compile(r"<(pre|code|kbd|textarea|script|style)(?=[\s>/])", re.I)
_SPACE = re.compile(r"[ \t\f\r]*[\n\r][ \t\f\r\n]*")
"""HTML's own whitespace only (Python's `\\s` would take U+00A0 too)."""


def collapse_space(html: str) -> str:
    """`html` with each whitespace run holding a line break, between tags and outside the
    elements above, as one line break."""
    out: list[str] = []
    at = 0
    while at < len(html):
        tag = _MARKUP.search(html, at)
        if tag is None:
            out.append(_SPACE.sub("\n", html[at:]))
            break
        out.append(_SPACE.sub("\n", html[at:tag.start()]))
        out.append(tag.group())
        at = tag.end()
        keep = _KEEP.match(tag.group())
        if keep is not None:
            close = re.compile(rf"</{keep.group(1)}\s*>", re.I).search(html, at)
            end = len(html) if close is None else close.end()
            out.append(html[at:end])
            at = end
    return "".join(out)
