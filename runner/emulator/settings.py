"""The emulator's settings: the `emulator:` block of an endpoint file, as typed dataclasses.

`load_endpoint(path)` reads an endpoint file with the safe loader, checks it against
`schemas/endpoint.schema.json` and returns the document and its settings; every problem is one
`InputError` line naming the file and the JSON pointer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from epbench.core.documents import load_document
from epbench.core.errors import InputError
from epbench.core.findings import problems_text
from epbench.runner.emulator.prefix_cache import DEFAULT_BLOCK_TOKENS, DEFAULT_CAPACITY_BLOCKS

DEFAULT_MAX_TOKENS = 256  # a request without max_tokens and no output_tokens distribution


@dataclass(frozen=True)
class Distribution:
    """A seeded draw: fixed, uniform, normal or lognormal, clipped to [min, max]."""

    kind: str = "fixed"
    value: float = 0.0
    mean: float = 0.0
    stddev: float = 0.0
    low: float | None = None
    high: float | None = None

    @classmethod
    def from_block(cls, block: dict[str, Any]) -> Distribution:
        return cls(
            kind=block["distribution"],
            value=float(block.get("value", block.get("mean", 0.0))),
            mean=float(block.get("mean", block.get("value", 0.0))),
            stddev=float(block.get("stddev", 0.0)),
            low=block.get("min"),
            high=block.get("max"),
        )


@dataclass(frozen=True)
class FaultSettings:
    """Per-request fault probabilities (each in [0, 1]) and the token-bucket rate limit."""

    rate_limit_rpm: float = 0.0
    http_5xx: float = 0.0
    drop_mid_stream: float = 0.0
    malformed_sse: float = 0.0
    stream_error: float = 0.0
    empty_choices: float = 0.0
    stall: float = 0.0
    stall_s: float = 0.0
    overloaded: float = 0.0


@dataclass(frozen=True)
class EmulatorSettings:
    """How the emulated batching server behaves; see DESIGN.md for the timing model."""

    seed: int = 0
    model_name: str = "emulated"
    slots: int = 8
    ttft_ms: float = 0.0
    prefill_ms_per_1k_tokens: float = 0.0
    tpot_ms: float = 0.0
    tpot_growth: float = 0.0
    jitter: float = 0.0
    output_tokens: Distribution | None = None
    chars_per_token: float = 4.0
    reasoning_tokens: int = 0
    prompt_cache: bool = False
    cache_block_tokens: int = DEFAULT_BLOCK_TOKENS
    prompt_cache_blocks: int = DEFAULT_CAPACITY_BLOCKS
    faults: FaultSettings = field(default_factory=FaultSettings)
    agentic: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_block(cls, block: dict[str, Any], model_name: str = "emulated") -> EmulatorSettings:
        """Settings from an `emulator:` block that has passed the schema."""
        faults = block.get("faults") or {}
        dist = block.get("output_tokens")
        return cls(
            seed=int(block.get("seed", 0)),
            model_name=str(block.get("model_name", model_name)),
            slots=int(block.get("slots", 8)),
            ttft_ms=float(block.get("ttft_ms", 0.0)),
            prefill_ms_per_1k_tokens=float(block.get("prefill_ms_per_1k_tokens", 0.0)),
            tpot_ms=float(block.get("tpot_ms", 0.0)),
            tpot_growth=float(block.get("tpot_growth", 0.0)),
            jitter=float(block.get("jitter", 0.0)),
            output_tokens=Distribution.from_block(dist) if dist else None,
            chars_per_token=float(block.get("chars_per_token", 4.0)),
            reasoning_tokens=int(block.get("reasoning_tokens", 0)),
            prompt_cache=bool(block.get("prompt_cache", False)),
            cache_block_tokens=int(block.get("cache_block_tokens", DEFAULT_BLOCK_TOKENS)),
            prompt_cache_blocks=int(block.get("prompt_cache_blocks", DEFAULT_CAPACITY_BLOCKS)),
            faults=FaultSettings(**{k: float(v) for k, v in faults.items()}),
            agentic=dict(block.get("agentic") or {}),
        )


def settings_from_endpoint(document: Any, file: str) -> EmulatorSettings:
    """Check an endpoint document and return its emulator settings (InputError, one line)."""
    from epbench.core.schema import check_schema  # jsonschema is slow to import; only when checking

    findings = check_schema(document, "endpoint", file)
    if findings:
        raise InputError(problems_text(findings))
    return settings_from_block(document, file)


def settings_from_block(document: dict[str, Any], file: str) -> EmulatorSettings:
    """The emulator settings of an endpoint document that has already passed the schema."""
    block = document.get("emulator")
    if not isinstance(block, dict):
        raise InputError(
            f"{file}: no `emulator:` block -- the emulator needs an endpoint file with one "
            "(see endpoints/emulator.yaml)"
        )
    model = document.get("model") or {}
    return EmulatorSettings.from_block(block, model_name=str(model.get("name", "emulated")))


def load_endpoint(path: Path) -> tuple[dict[str, Any], EmulatorSettings]:
    """Read an endpoint file and return (document, emulator settings); InputError if unusable."""
    if not Path(path).is_file():
        raise InputError(
            f"{path}: endpoint file not found -- give a path or an id under endpoints/"
        )
    document = load_document(path)
    return document, settings_from_endpoint(document, str(path))
