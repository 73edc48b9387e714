"""The secret scan's fast pass (prefix prefilter and token runs found on the ASCII bytes)
answers exactly as the regex pass it replaced, on 500 seeded mutations of the samples' text
with keys, hex runs, tokens, separators and non-ASCII planted in them."""

from __future__ import annotations

import random
import string

from epbench.core.credentials import TOKEN, has_key_shape, hex_runs, token_is_secret
from epbench.generator.checks.secret import (
    _DIGEST_BEFORE,
    _digest_key,
    _key_shape,
    _suspicious,
    _tokens,
)
from tests.conftest import ROOT

SAMPLES = [p.read_text("utf-8") for p in sorted((ROOT / "tests/data/results").rglob("*.json"))]
ALPHABET = string.ascii_letters + string.digits + "+/_=-"


def reference_suspicious(text: str) -> bool:
    """The fast pass as it was: the regexes over the whole text."""
    if has_key_shape(text):
        return True
    for token in TOKEN.finditer(text):
        if token_is_secret(token.group()):
            return True
        for run in hex_runs(text, token):
            key = _DIGEST_BEFORE.search(text, max(0, run.start() - 80), run.start())
            if key is None or not _digest_key(key.group(1)):
                return True
    return False


def planted(rng: random.Random) -> str:
    kind = rng.randrange(9)
    if kind == 0:
        prefix = rng.choice(["sk-", "sk_live_", "ghp_", "github_pat_", "AKIA", "AIza", "xoxb-",
                             "hf_", "r8_", "eyJ", "Bearer ", "pplx-", "mlc_", "npm_"])
        return prefix + "".join(rng.choice(ALPHABET[:62]) for _ in range(rng.randint(4, 40)))
    if kind == 1:
        return "".join(rng.choice("0123456789abcdef") for _ in range(rng.choice([31, 32, 40, 64])))
    if kind == 2:
        return "".join(rng.choice(ALPHABET) for _ in range(rng.choice([20, 31, 32, 33, 60])))
    if kind == 3:
        return "a" * rng.choice([31, 32, 50]) + rng.choice(["", "é", "日", "/x"])
    if kind == 4:
        return "eyJabcdefgh.eyJabcdefgh.abcdefgh" + rng.choice(["", "é"])
    if kind == 5:
        return rng.choice(["é", "日本", "\u00e9sk-", "sk\u00e9-"]) + "".join(
            rng.choice(ALPHABET) for _ in range(34))
    if kind == 6:
        return "s" + rng.choice(["", "1", "é", "."]) + "k-" + "A1b2" * 6
    if kind == 7:
        return "/data/" + "".join(rng.choice(ALPHABET) for _ in range(40))
    return rng.choice(["AKIAABCDEFGHIJKLMNOP", "ASIA0123456789ABCDEF", "xoxp-0123456789",
                       "Bearer\tabcdefghijklmnop"])


def mutate(text: str, rng: random.Random) -> str:
    for _ in range(rng.randint(1, 3)):
        quotes = [i for i, c in enumerate(text) if c == '"']
        at = rng.choice(quotes) + 1
        text = text[:at] + planted(rng) + text[at:]
    return text


def test_500_seeded_texts_get_the_same_answer_from_both_passes() -> None:
    rng = random.Random(13)
    answers = set()
    for i in range(500):
        text = mutate(SAMPLES[i % len(SAMPLES)], rng)
        ascii_text = text.encode("ascii") if text.isascii() else None
        assert _key_shape(text, ascii_text) == has_key_shape(text), text
        assert [m.span() for m in _tokens(text, ascii_text)] == \
            [m.span() for m in TOKEN.finditer(text)], text
        answer = _suspicious(text)
        assert answer == reference_suspicious(text), text
        answers.add(answer)
    assert answers == {True, False}


def test_the_samples_are_clean() -> None:
    for text in SAMPLES:
        assert not _suspicious(text)
        assert [m.span() for m in _tokens(text, text.encode("ascii"))] == \
            [m.span() for m in TOKEN.finditer(text)]
