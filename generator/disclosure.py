"""How reproducible a result is: the share of the fields a reader needs that it discloses.

The fields are what someone needs to repeat the run: the model and its version or snapshot,
where the endpoint serves from and where the client ran, the sampling parameters and max
tokens, the rate-limit tier (serviced) or the hardware and engine (self-hosted), the harness
version and git sha, the workload id, version and sha256, the dates, and who submitted it.
score = fields present / fields that apply. It is stored with each row of the tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any


@dataclass(frozen=True)
class DisclosureField:
    """One reproducibility field: its name, a JSON pointer into the result, and whether set."""

    name: str
    pointer: str
    present: bool


@dataclass(frozen=True)
class Disclosure:
    """The disclosure score of one result, field by field."""

    score: float
    fields: tuple[DisclosureField, ...]

    @property
    def missing(self) -> list[str]:
        return [f.name for f in self.fields if not f.present]

    @property
    def present(self) -> list[str]:
        return [f.name for f in self.fields if f.present]

    def to_dict(self) -> dict[str, object]:
        return {"score": self.score, "fields": {f.name: f.present for f in self.fields}}


def _get(doc: Any, pointer: str) -> Any:
    for part in _parts(pointer):
        if not isinstance(doc, dict):
            return None
        doc = doc.get(part)
    return doc


@cache
def _parts(pointer: str) -> tuple[str, ...]:
    return tuple(pointer.strip("/").split("/"))


def _given(value: Any) -> bool:
    if isinstance(value, str):
        return bool(value.strip())
    return value is not None


# (name, pointer or pointers of which any one suffices)
_COMMON: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("model_name", ("/endpoint/model/name",)),
    ("model_version", ("/endpoint/model/version", "/endpoint/model/snapshot_date")),
    ("endpoint_region", ("/endpoint/region",)),
    ("client_region", ("/client/region",)),
    ("temperature", ("/settings/temperature",)),
    ("top_p", ("/settings/top_p",)),
    ("max_tokens", ("/settings/max_tokens",)),
    ("harness_version", ("/harness/version",)),
    ("harness_git_sha", ("/harness/git_sha",)),
    ("workload_id", ("/workload/id",)),
    ("workload_version", ("/workload/version",)),
    ("workload_sha256", ("/workload/sha256",)),
    ("started_at", ("/started_at",)),
    ("finished_at", ("/finished_at",)),
    ("submitter", ("/submitter/name",)),
    ("submitter_relationship", ("/submitter/relationship",)),
    ("submitter_contact", ("/submitter/contact",)),
)
_SERVICED = (("rate_limit_tier", ("/endpoint/rate_limits/tier",)),)
_SELF_HOSTED = (
    ("hardware", ("/endpoint/hardware/accelerator",)),
    ("engine", ("/endpoint/hardware/engine",)),
)


def disclosure(result: dict[str, Any]) -> Disclosure:
    """Which reproducibility fields the result carries, and their share (0..1)."""
    division = _get(result, "/endpoint/division")
    fields = tuple(
        DisclosureField(name, pointer, _any_given(result, paths))
        for name, pointer, paths in _wanted(
            division if division in ("serviced", "self-hosted") else None)
    )
    score = sum(f.present for f in fields) / len(fields)
    return Disclosure(round(score, 4), fields)


@cache
def _wanted(division: str | None) -> tuple[tuple[str, str, tuple[tuple[str, ...], ...]], ...]:
    """The fields that apply to a division: name, first pointer, every pointer's parts."""
    wanted = list(_COMMON)
    if division == "serviced":
        wanted += _SERVICED
    elif division == "self-hosted":
        wanted += _SELF_HOSTED
    return tuple((name, pointers[0], tuple(_parts(p) for p in pointers))
                 for name, pointers in wanted)


def _any_given(doc: Any, paths: tuple[tuple[str, ...], ...]) -> bool:
    """_given(_get(doc, pointer)) for any of the pointers (as parts), in one loop."""
    for parts in paths:
        value = doc
        for part in parts:
            if not isinstance(value, dict):
                value = None
                break
            value = value.get(part)
        if _given(value):
            return True
    return False
