"""The fast JSON path agrees with the walk it replaced and with the full loader, on the
samples and on 500 seeded mutations of their text (strings with brackets, quotes and
backslashes, big exponents, long digit runs, duplicate keys, NaN, deep nesting, non-ASCII)."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest

from epbench.core.documents import MAX_DEPTH, DocumentError, parse_document
from epbench.core.fast_json import Unusual, fast_json
from epbench.core.strict_json import depth, members, shape
from tests.conftest import ROOT

SAMPLES = [p.read_bytes() for p in sorted((ROOT / "tests/data/results").rglob("*.json"))]
_INF = float("inf")


# --- the reference: the fast path as it was (regex on the text, a hook per float, a walk) --

def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise Unusual
    return out


def _constant(_: str) -> Any:
    raise Unusual


def _finite_float(literal: str) -> float:
    value = float(literal)
    if value in (_INF, -_INF):
        raise Unusual
    return value


def _shallow(document: Any, max_depth: int) -> bool:
    stack = [(document, 1)]
    while stack:
        item, level = stack.pop()
        for value in item.values() if isinstance(item, dict) else item:
            if isinstance(value, dict | list):
                if level + 1 >= max_depth:
                    return False
                stack.append((value, level + 1))
    return True


def reference(data: bytes, max_depth: int) -> tuple[Any, str]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Unusual from None
    if text.startswith("\ufeff") or re.search(r"\d{19}", text):
        raise Unusual
    try:
        document = json.loads(text, object_pairs_hook=_unique, parse_constant=_constant,
                              parse_float=_finite_float)
    except (ValueError, RecursionError):
        raise Unusual from None
    if isinstance(document, dict | list) and not _shallow(document, max_depth):
        raise Unusual
    return document, text


def walk_members(value: Any) -> int:
    if isinstance(value, dict):
        return len(value) + sum(walk_members(v) for v in value.values())
    if isinstance(value, list):
        return sum(walk_members(v) for v in value)
    return 0


def walk_depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((walk_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((walk_depth(v) for v in value), default=0)
    return 0


# --- seeded mutations of a sample's text ------------------------------------------------

NASTY_STRINGS = ['"[["', '"}}]"', r'"a\"[b"', r'"\\"', r'"\\\"{"', r'"\\\\"', r'"x\\\\\"]"',
                 r'"\u005b\u007b"', '"é[ü{"', '"日本"', r'"\n\t\/"', '"\\\\\\\\\\"[\\""', '""',
                 '"٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣"', '"1234567890123456789"']
NASTY_VALUES = ["1e999", "-1e999", "1E+308", "1e308", "2e-400", "1.5e-05", "12345678901234567",
                "1234567890123456789", "99999999999999999999", "NaN", "Infinity", "-0.0",
                "1e99", "123456789012345678.123456789012345678e99", "[[[[[]]]]]",
                '{"a": [1, {"b": [2]}]}', "[" * 62 + "]" * 62, "[" * 63 + "]" * 63,
                "[" * 64 + "]" * 64, "{" + '"k": ' * 0 + "}", *NASTY_STRINGS]


def mutate(data: bytes, rng: random.Random) -> bytes:
    text = data.decode("utf-8")
    for _ in range(rng.randint(1, 3)):
        action = rng.randrange(5)
        values = [m.span() for m in re.finditer(r'(?<=: )(?:"[^"]*"|-?[0-9.eE+-]+|true|false|null)',
                                                text)]
        if action <= 1 and values:  # replace a value
            start, end = rng.choice(values)
            text = text[:start] + rng.choice(NASTY_VALUES) + text[end:]
        elif action == 2:  # add a key (maybe a duplicate one) to an object
            spots = [m.end() for m in re.finditer(r"\{", text)]
            at = rng.choice(spots)
            key = rng.choice(['"kind"', '"p50"', '"zz"', '"[{"', r'"q\"{"'])
            text = text[:at] + f"{key}: {rng.choice(NASTY_VALUES)}, " + text[at:]
        elif action == 3:  # wrap a value in lists
            if values:
                start, end = rng.choice(values)
                n = rng.choice([1, 5, 40, 58, 59, 60, 61, 62])
                text = text[:start] + "[" * n + text[start:end] + "]" * n + text[end:]
        else:  # a string with escapes and non-ASCII in place of a string value
            strings = [m.span() for m in re.finditer(r'"[a-z0-9._-]+"(?!:)', text)]
            if strings:
                start, end = rng.choice(strings)
                text = text[:start] + rng.choice(NASTY_STRINGS) + text[end:]
    return text.encode("utf-8")


def outcome(fn: Any, data: bytes) -> Any:
    try:
        document, text = fn(data, MAX_DEPTH)
    except Unusual:
        return Unusual
    return json.dumps(document, sort_keys=True), text


def test_the_samples_take_the_fast_path_and_match_the_full_loader() -> None:
    assert len(SAMPLES) == 4
    for data in SAMPLES:
        document, _ = fast_json(data, MAX_DEPTH)
        assert document == parse_document(data, "r.json")
        assert outcome(fast_json, data) == outcome(reference, data)


def test_500_seeded_mutations_agree_with_the_old_path_and_the_full_loader() -> None:
    rng = random.Random(13)
    fast_count = unusual = 0
    for i in range(500):
        data = mutate(SAMPLES[i % len(SAMPLES)], rng)
        new, old = outcome(fast_json, data), outcome(reference, data)
        unicode_digits = re.search(r"\d{19}", data.decode()) and not re.search(
            r"[0-9]{19}", data.decode())
        if unicode_digits:  # the old rule also counted digits of other scripts (in strings)
            assert old is Unusual
        else:
            assert new == old, (i, data)
        if new is Unusual:
            unusual += 1
            continue
        fast_count += 1
        try:
            full = parse_document(data, "r.json")
        except DocumentError as exc:  # the fast path must never accept what this refuses
            pytest.fail(f"fast path accepted what the loader refuses: {exc}")
        assert json.dumps(full, sort_keys=True) == new[0]
    assert fast_count > 100 and unusual > 100  # both sides of the fast path were exercised


def test_depth_and_members_read_from_the_text_equal_those_of_the_document() -> None:
    rng = random.Random(7)
    atoms = [1, -2.5, None, True, "", "[", "]]", "{", "}", '"', "\\", '\\"', "\\\\", '\\\\"',
             "é{", "日[", "a\\[b"]

    def value(level: int) -> Any:
        roll = rng.random()
        if level > 12 or roll < 0.35:
            return rng.choice(atoms)
        if roll < 0.7:
            return [value(level + 1) for _ in range(rng.randint(0, 4))]
        return {rng.choice(atoms[4:]) + str(i): value(level + 1) for i in range(rng.randint(0, 4))}

    for _ in range(500):
        document = value(0)
        for ensure_ascii in (True, False):
            data = json.dumps(document, ensure_ascii=ensure_ascii).encode("utf-8")
            assert depth(data) == walk_depth(document), data
            assert shape(data) == (walk_depth(document), walk_members(document)), data
            assert members(document) == walk_members(document), data


def test_nesting_right_at_the_limit_is_left_to_the_full_loader() -> None:
    deep = b"[" * MAX_DEPTH + b"]" * MAX_DEPTH
    with pytest.raises(Unusual):
        fast_json(deep, MAX_DEPTH)
    ok = b"[" * (MAX_DEPTH - 1) + b"]" * (MAX_DEPTH - 1)
    assert walk_depth(fast_json(ok, MAX_DEPTH)[0]) == MAX_DEPTH - 1


def test_brackets_that_do_not_pair_up_are_an_error_not_an_endless_loop() -> None:
    for text in (b"[}", b'{"a": [1}', b"]", b'"x" ]['):
        with pytest.raises(ValueError, match="unbalanced"):
            depth(text)


def test_a_duplicate_key_is_unusual_wherever_it_hides() -> None:
    for text in (b'{"a": 1, "a": 2}', b'[{"b": {"a": 1, "a": 1}}]', b'{"a\\"": 1, "a\\"": 2}',
                 b'{"k": "x:y", "k": ":"}', b'{"\\\\": [], "\\\\": {}}',
                 b'{"a": 1, "\\u0061": 2}', b'{"a": ":", "a": ":"}',
                 # the escaped colon would make up for the lost member's in a count of all
                 b'{"a": 1, "a": 2, "b": "\\u003a"}', b'{"a": 1, "a": 2, "b": "\\u003A"}'):
        with pytest.raises(Unusual):
            fast_json(text, MAX_DEPTH)
    for text in (b'{"a": 1, "b": {"a": 2}}', b'{"a:b": ":", "c": "\\":"}'):
        document, _ = fast_json(text, MAX_DEPTH)
        assert document == json.loads(text)


def test_a_number_that_overflows_to_infinity_is_unusual_even_beside_a_digest() -> None:
    digest = '"sha256": "4e484c2e999e1000"'
    for text in (b'{"a": 1e999}', b'{"a": [-1E400]}', b'{"a": 123456789012345678e300}',
                 f'{{{digest}, "a": 1e999}}'.encode()):
        with pytest.raises(Unusual):
            fast_json(text, MAX_DEPTH)
    document, _ = fast_json(f'{{{digest}, "a": 1e300}}'.encode(), MAX_DEPTH)
    assert document["a"] == 1e300
