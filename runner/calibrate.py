"""Prompt lengths that hold: fit the endpoint's words-to-tokens ratio before the first point.

A workload asks for input lengths in tokens, but the runner has no tokenizer (nothing may be
downloaded at run time) and every endpoint counts tokens its own way: 128 seeded words are
167 tokens to the emulator and about 690 to a character-level vocabulary. So before the first
point the runner sends probe prompts (the workload's system prompt plus seeded words, at a few
lengths, not streamed, `max_tokens: 1`), reads `usage.prompt_tokens` and fits

    tokens = overhead + tokens_per_word * words        (least squares)

`overhead` holds the chat template and the system prompt. A request for n tokens then sends
round((n - overhead) / tokens_per_word) words (at least one). The fit is kept in the run
folder (calibration.json), so `--resume` rebuilds exactly the same prompts. An endpoint that
reports no usage even without streaming gets `source: none`: one word per requested token,
and the result says so.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from epbench.runner.client import EndpointClient
from epbench.runner.prompts import messages

PROBE_WORDS = (8, 24, 64, 160)
PROBES_PER_LENGTH = 2


@dataclass(frozen=True)
class Calibration:
    """The fit: `source` "usage" (fitted) or "none" (one word per token)."""

    source: str = "none"
    tokens_per_word: float = 1.0
    overhead_tokens: float = 0.0
    probes: int = 0

    def words_for(self, tokens: int) -> int:
        """How many words make a prompt of `tokens` tokens for this endpoint."""
        if self.source != "usage":
            return max(1, tokens)
        return max(1, round((tokens - self.overhead_tokens) / self.tokens_per_word))

    def words_within(self, tokens: int) -> int:
        """How many words make `tokens` tokens inside a prompt (no template overhead)."""
        if self.source != "usage":
            return max(1, tokens)
        return max(1, round(tokens / self.tokens_per_word))

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["tokens_per_word"] = round(self.tokens_per_word, 6)
        out["overhead_tokens"] = round(self.overhead_tokens, 6)
        return out

    @staticmethod
    def from_json(doc: dict[str, Any]) -> Calibration:
        return Calibration(
            source=str(doc.get("source", "none")),
            tokens_per_word=float(doc.get("tokens_per_word", 1.0)),
            overhead_tokens=float(doc.get("overhead_tokens", 0.0)),
            probes=int(doc.get("probes", 0)),
        )


def fit(samples: list[tuple[int, int]]) -> tuple[float, float] | None:
    """(overhead, tokens_per_word) by least squares over (words, tokens), or None."""
    if len(samples) < 2:
        return None
    n = len(samples)
    mx = sum(w for w, _ in samples) / n
    my = sum(t for _, t in samples) / n
    sxx = sum((w - mx) ** 2 for w, _ in samples)
    if sxx == 0:
        return None
    slope = sum((w - mx) * (t - my) for w, t in samples) / sxx
    if slope <= 0:
        return None
    return my - slope * mx, slope


async def calibrate(
    client: EndpointClient,
    model: str,
    seed: int,
    system_prompt: str | None,
    max_words: int | None = None,
) -> Calibration:
    """Probe the endpoint (non-streamed, `max_tokens: 1`) and fit its words-to-tokens ratio."""
    lengths = [w for w in PROBE_WORDS if max_words is None or w <= max_words] or [8, 16]
    samples: list[tuple[int, int]] = []
    for words in lengths:
        for k in range(PROBES_PER_LENGTH):
            body = {
                "model": model,
                "messages": messages(seed, f"p{words}-{k:05d}", words, system_prompt),
                "max_tokens": 1,
                "stream": False,
            }
            res = await client.chat(body, request_id=f"calibrate-{words}-{k}")
            if res.input_source == "usage" and res.input_tokens is not None:
                samples.append((words, res.input_tokens))
    line = fit(samples)
    if line is None:
        return Calibration(source="none", probes=len(samples))
    overhead, per_word = line
    return Calibration("usage", per_word, overhead, len(samples))


def save(run_dir: Path, calibration: Calibration, name: str) -> None:
    (run_dir / name).write_text(json.dumps(calibration.to_json(), indent=1) + "\n")


def load(run_dir: Path, name: str) -> Calibration | None:
    path = run_dir / name
    if not path.is_file():
        return None
    return Calibration.from_json(json.loads(path.read_text(encoding="utf-8")))
