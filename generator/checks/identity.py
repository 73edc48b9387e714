"""Names that say who and what a result is about cannot hide characters or pose as others.

The identity fields (provider, model name, submitter display name and contact, harness name,
hardware and engine) reach every page and every table. In them:

- control characters (NUL, escape, line breaks, ...), format characters (bidirectional
  overrides and isolates, zero-width spaces and joiners, the byte-order mark), private-use,
  surrogate and unassigned code points are rejected: they reorder or hide what a reader sees;
- a name that mixes letters of several scripts (a Cyrillic `а` in `Acme`) is flagged for a
  maintainer: it is how a look-alike of another provider's name is made. Japanese text, which
  mixes Han, Hiragana and Katakana by nature, counts as one script.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from epbench.core.findings import Finding
from epbench.generator.checks.base import Subject, check, on_endpoint, on_result

CHARACTERS = check(
    "identity.characters", "reject",
    "identity fields hold no control, bidirectional-override or invisible characters",
    "write the name in plain characters (no control, format or invisible characters)",
)
MIXED_SCRIPT = check(
    "identity.mixed-script", "flag",
    "an identity field writes its letters in one script",
    "write the name in one script (a look-alike letter from another script makes it pose as "
    "another name); a maintainer confirms genuine mixed-script names",
)

ENDPOINT_FIELDS = ("/provider", "/model/name", "/model/version", "/hardware/accelerator",
                   "/hardware/engine")
RESULT_FIELDS = (*(f"/endpoint{p}" for p in ENDPOINT_FIELDS), "/submitter/display_name",
                 "/submitter/contact", "/harness/name")
_BAD_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})
# Han, Hiragana, Katakana (with its marks) and Hangul are written together: one "script" here
_EAST_ASIAN = ("HIRAGANA", "KATAKANA", "CJK", "HANGUL", "IDEOGRAPHIC", "HALFWIDTH KATAKANA",
               "HALFWIDTH HANGUL")


def _get(doc: Any, pointer: str) -> Any:
    for part in pointer.strip("/").split("/"):
        if not isinstance(doc, dict):
            return None
        doc = doc.get(part)
    return doc


def bad_character(text: str) -> str | None:
    """The first forbidden character, as U+XXXX, or None."""
    for char in text:
        if unicodedata.category(char) in _BAD_CATEGORIES:
            return f"U+{ord(char):04X}"
    return None


def scripts(text: str) -> set[str]:
    """The scripts of the letters in `text` (the first word of each letter's Unicode name)."""
    found = set()
    for char in text:
        if unicodedata.category(char).startswith("L"):
            name = unicodedata.name(char, "UNKNOWN")
            found.add("CJK" if name.startswith(_EAST_ASIAN) else name.split(" ")[0])
    return found


def check_identity(doc: dict[str, Any], file: str, fields: tuple[str, ...]) -> list[Finding]:
    """Findings for the identity fields of an endpoint file (ENDPOINT_FIELDS) or a result."""
    out = []
    for pointer in fields:
        value = _get(doc, pointer)
        if not isinstance(value, str):
            continue
        if value.isascii() and value.isprintable():
            continue  # printable ASCII: no control character, one script (the common case)
        bad = bad_character(value)
        if bad is not None:
            out.append(CHARACTERS.at(file, pointer, f"the value holds the character {bad}"))
            continue
        found = scripts(value)
        if len(found) > 1:
            names = ", ".join(sorted(found)).lower()
            out.append(MIXED_SCRIPT.at(file, pointer, f"the value mixes scripts ({names})"))
    return out


@on_result(140)
def _on_result(s: Subject) -> list[Finding]:
    return check_identity(s.doc, s.file, RESULT_FIELDS)


@on_endpoint(30)
def _on_endpoint(s: Subject) -> list[Finding]:
    return check_identity(s.doc, s.file, ENDPOINT_FIELDS)
