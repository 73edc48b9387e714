"""What a credential looks like, in one place: the validator's secret scan and the runner's
redaction of stored error texts follow the same rules.

A string holds a credential when it has

- a known key prefix: `sk-` (OpenAI, Anthropic `sk-ant-`), `sk_live_`/`rk_live_` (Stripe),
  `ghp_ gho_ ghu_ ghs_ ghr_ github_pat_` (GitHub), `glpat-` (GitLab), `AKIA`/`ASIA` (AWS),
  `AIza` (Google), `xox?-` (Slack), `hf_` (Hugging Face), `gsk_` (Groq), `r8_` (Replicate),
  `pplx-` (Perplexity), `xai-` (xAI), `nvapi-` (NVIDIA), `npm_`, `pypi-`, `mlc_` (MLCommons),
  a JSON Web Token, or `Bearer <token>`;
- a run of 32+ hex digits with at least 3 bits of entropy per character (an Azure key is 32
  lower-case hex digits), unless the caller says the place holds a digest (`sha256`, `git_sha`);
- a base64/URL-safe token of 32+ characters mixing upper and lower case (and maybe digits)
  with at least 4 bits per character, or mixing lower case and digits with at least 3.5.

Entropy is Shannon entropy of the token's characters; a repeated or dictionary-like token stays
below the bar, a random key is above it.

A token made of words (`Flights_4_SearchRoundtripFlights`, `bom_api_BomApi_export_project`,
`SQLCompletionAnalyzer_makeProposalsFromObject`, `Http2TestExchangeImpl`,
`wp-content/uploads/Home-Interior-Design-Hd-Wallpaper`) is an identifier or a path, not a key,
even when it is long and scores high entropy: between its separators (`_ - / + =`) each piece
is a lower-case or Capitalized word followed by Capitalized words, acronyms of two to five
capitals each followed by a word, a digit or the end, and runs of up to four digits (or is
digits alone), and its words (`Search`, `SQL`, `4`) average 4 characters or more. A random key
is not: its characters change between upper case, lower case and digits about every second
character (its words average 1.9 characters), and fewer than one random 32-character token in
10,000 passes for words (`made_of_words`; 48 of a million base62 tokens, 12 of a million
URL-safe ones when measured; tests/generator/checks/test_secret_shapes.py holds it under one
in 10,000). After `Bearer`, words in one case joined by `_` or `-` (`your_api_key_here`) are a
placeholder.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator

REDACTED = "[redacted]"
_PREFIX_RULES = (
    r"\bsk-[A-Za-z0-9_-]{16,}", r"\b[sr]k_live_[A-Za-z0-9]{16,}", r"\bgh[pousr]_[A-Za-z0-9]{20,}",
    r"\bgithub_pat_[A-Za-z0-9_]{20,}", r"\bglpat-[A-Za-z0-9_-]{16,}",
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    r"\bAIza[0-9A-Za-z_-]{30,}", r"\bxox[abprs]-[A-Za-z0-9-]{10,}", r"\bhf_[A-Za-z0-9]{20,}",
    r"\bgsk_[A-Za-z0-9]{20,}", r"\br8_[A-Za-z0-9]{20,}", r"\bpplx-[A-Za-z0-9]{20,}",
    r"\bxai-[A-Za-z0-9]{20,}", r"\bnvapi-[A-Za-z0-9_-]{20,}", r"\bnpm_[A-Za-z0-9]{20,}",
    r"\bpypi-[A-Za-z0-9_-]{20,}", r"\bmlc_[A-Za-z0-9_-]{16,}",
    r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    r"\bBearer\s+[A-Za-z0-9._~+/=-]{16,}",
)
KEY_SHAPES = re.compile("|".join(f"(?:{rule})" for rule in _PREFIX_RULES))
PREFIXES = ("sk-", "k_live_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-",
             "AKIA", "ASIA", "AIza", "xox", "hf_", "gsk_", "r8_", "pplx-", "xai-", "nvapi-",
             "npm_", "pypi-", "mlc_", "eyJ", "Bearer")
TOKEN = re.compile(r"[A-Za-z0-9+/_=-]{32,}")
_HEX = re.compile(r"[0-9A-Fa-f]{32,}")
MIN_SHAPE_CHARS = 15  # the shortest rule above (`xoxb-` and ten more) matches no less
MIN_HEX_ENTROPY = 3.0
MIN_MIXED_ENTROPY = 4.0
MIN_LOWER_ENTROPY = 3.5
MIN_WORD_CHARS = 4.0
_SEPARATOR = re.compile(r"[-_/+=]+")
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_PLACEHOLDER = re.compile(r"(?:[a-z]+|[A-Z]+)(?:[-_](?:[a-z]+|[A-Z]+))+")
_ACRONYM = r"[A-Z]{2,5}(?=[A-Z][a-z]|[0-9]|$)"  # SQL in SQLCompletion, DMG, TV at the end
_WORDS = re.compile(rf"(?:[a-z]+|[A-Z][a-z]+|{_ACRONYM})"
                    rf"(?:[A-Z][a-z]+|{_ACRONYM}|[0-9]{{1,4}}(?![0-9]))*|[0-9]+")
_BEARER = re.compile(r"\bBearer\s+([A-Za-z0-9._~+/=-]{16,})")


def entropy(text: str) -> float:
    """Shannon entropy in bits per character."""
    if not text:
        return 0.0
    counts = Counter(text)
    return -sum(c / len(text) * math.log2(c / len(text)) for c in counts.values())


def made_of_words(token: str) -> bool:
    """Words, not a random key: every piece between separators is words (a lower-case or
    Capitalized word or an acronym, then Capitalized words, acronyms and short digit runs, or
    digits alone) and the words average MIN_WORD_CHARS or more (see the module's docstring)."""
    pieces = [p for p in _SEPARATOR.split(token) if p]
    if not pieces or not all(_WORDS.fullmatch(p) for p in pieces):
        return False
    words = _WORD.findall(token)
    return sum(map(len, words)) / len(words) >= MIN_WORD_CHARS


def has_key_shape(text: str) -> bool:
    """A well-known key prefix (a substring prefilter first: the regex is the slow part); a
    `Bearer` followed by a placeholder (`Bearer your_api_key_here`) is none."""
    if not any(prefix in text for prefix in PREFIXES):
        return False
    for match in KEY_SHAPES.finditer(text):
        bearer = _BEARER.match(text, match.start())
        if bearer is None or not _PLACEHOLDER.fullmatch(bearer.group(1)):
            return True
    return False


def hex_runs(text: str, token: re.Match[str]) -> Iterator[re.Match[str]]:
    """Runs of 32+ hex digits of one case inside a TOKEN match, not touching other letters or
    digits, random enough to be a key (one pass over the text finds the tokens; hex runs are
    looked for inside them only)."""
    for run in hex_shaped(text, token):
        if random_hex(run.group()):
            yield run


def hex_shaped(text: str, token: re.Match[str]) -> Iterator[re.Match[str]]:
    """hex_runs before the entropy test: the runs of 32+ hex digits of one case."""
    for run in _HEX.finditer(text, token.start(), token.end()):
        start, end = run.span()
        if (start > 0 and text[start - 1].isalnum()) or (end < len(text) and text[end].isalnum()):
            continue
        value = run.group()
        if value.islower() or value.isupper() or value.isdigit():
            yield run


def random_hex(value: str) -> bool:
    """A hex run random enough to be a key."""
    return entropy(value) >= MIN_HEX_ENTROPY


def secret_hex(text: str) -> list[str]:
    """Runs of 32+ hex digits random enough to be a key."""
    return [run.group() for token in TOKEN.finditer(text) for run in hex_runs(text, token)]


def is_hex_run(token: str) -> bool:
    """The whole token is 32+ hex digits of one case."""
    return bool(_HEX.fullmatch(token)) and (token.islower() or token.isupper() or
                                            token.isdigit())


def token_is_secret(token: str) -> bool:
    """A long base64-like token that mixes character classes with high entropy (a run of hex
    digits is judged by `secret_hex`, which knows about digests)."""
    if is_hex_run(token):
        return False
    if token.startswith(("/", "./", "~/")):  # a file path (`source.path` of an import)
        return False
    has_lower = any(c.islower() for c in token)
    has_digit = any(c.isdigit() for c in token)
    if has_lower and any(c.isupper() for c in token):  # digits or not: (52/62)^32, about
        # one random 32-character base62 key in 280, has none
        return entropy(token) >= MIN_MIXED_ENTROPY and not made_of_words(token)
    if not (has_lower and has_digit):
        return False
    if "-" in token or "_" in token or "/" in token:  # words joined by separators: an
        # identifier or a relative path, not a key
        return False
    return entropy(token) >= MIN_LOWER_ENTROPY


def secret_tokens(text: str) -> list[str]:
    """Base64-like tokens in `text` that look like keys."""
    return [token for token in TOKEN.findall(text) if token_is_secret(token)]


def looks_like_secret(text: str, digest: bool = False) -> bool:
    """True for a known key shape, a random hex run (unless `digest`: the place holds a hash),
    or a long random token."""
    if len(text) < MIN_SHAPE_CHARS:
        return False
    if has_key_shape(text) or secret_tokens(text):
        return True
    return not digest and bool(secret_hex(text))


def redact(text: str, known: Iterable[str] = ()) -> str:
    """`text` with every known secret (and every 8+ character piece of one), and anything
    credential-shaped, replaced by `[redacted]`."""
    keys = [k for k in known if k and len(k) >= 8]
    for key in keys:
        text = text.replace(key, REDACTED)
    if keys:
        def piece(match: re.Match[str]) -> str:
            return REDACTED if any(match.group(0) in key for key in keys) else match.group(0)

        text = re.sub(r"[A-Za-z0-9._~+/=-]{8,}", piece, text)
    text = KEY_SHAPES.sub(REDACTED, text)
    for found in {*secret_hex(text), *secret_tokens(text)}:
        text = text.replace(found, REDACTED)
    return text
