"""A result is for an endpoint epbench knows, as that endpoint's file described it on the run's
date: provider, model name and version, api, division, region, the base URL's host, and the
price card in force that day (endpoint files keep their price history, so an old result still
matches after a price change).

The endpoint file is `endpoints/<id>.yaml` of the project the result sits in (a pull request
that adds a result for a new endpoint adds that file too), else the one shipped with epbench.
The check applies to results inside a results/ tree (what is submitted and published); a run
folder's result.json was written from whatever endpoint file the run was given.
Imported results are left to their importer's `source.unmapped`: another tool's output has
no endpoint file to match.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from epbench.core.documents import DocumentError, load_document
from epbench.core.findings import Finding
from epbench.core.paths import shipped
from epbench.core.pricing import card_on
from epbench.core.schema import check_schema, kind_of
from epbench.generator.checks.base import Subject, check, on_result
from epbench.generator.checks.date import run_date
from epbench.generator.checks.layout import results_root

UNKNOWN = check(
    "endpoint.unknown", "reject", "the result's endpoint id has a file under endpoints/",
    "add endpoints/<id>.yaml in the same pull request (or run against an endpoint file that "
    "is there)",
)
MISMATCH = check(
    "endpoint.identity", "reject",
    "the result's endpoint block matches endpoints/<id>.yaml as of the run's date",
    "run against the endpoint file as it is in endpoints/ (when the endpoint changed, add its "
    "new price card to the file's pricing history rather than editing the result)",
)
ONE_CARD = check(
    "endpoint.pinned-card", "reject", "a result pins one price card, not a price history",
    "re-run with `epbench run`, which pins the card in force on the run's date",
)

_FIELDS = (("provider",), ("model", "name"), ("model", "version"), ("api",), ("division",),
           ("region",))


class EndpointIndex:
    """The endpoint files of one project (then the shipped ones), loaded once each."""

    def __init__(self, project: Path) -> None:
        self.project = project
        self._docs: dict[str, dict[str, Any] | None] = {}

    def get(self, endpoint_id: str) -> dict[str, Any] | None:
        if endpoint_id not in self._docs:
            self._docs[endpoint_id] = self._load(endpoint_id)
        return self._docs[endpoint_id]

    def _load(self, endpoint_id: str) -> dict[str, Any] | None:
        for folder in (self.project / "endpoints", shipped("endpoints")):
            for suffix in (".yaml", ".yml", ".json"):
                path = folder / f"{endpoint_id}{suffix}"
                if not path.is_file():
                    continue
                try:
                    doc = load_document(path)
                except DocumentError:
                    return None
                if kind_of(doc) != "endpoint" or check_schema(doc, "endpoint", str(path)):
                    return None
                return doc if isinstance(doc, dict) else None
        return None


_INDEXES: dict[Path, EndpointIndex] = {}


def index_for(project: Path) -> EndpointIndex:
    if project not in _INDEXES:
        _INDEXES[project] = EndpointIndex(project)
    return _INDEXES[project]


def _get(doc: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = doc
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _host(url: Any) -> str | None:
    try:
        return urlsplit(str(url)).hostname
    except ValueError:
        return None


def _same_card(a: dict[str, Any], b: dict[str, Any]) -> str | None:
    """The first key where two price cards differ, or None."""
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key), b.get(key)
        if isinstance(x, int | float) and isinstance(y, int | float):
            if not math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12):
                return key
        elif x != y:
            return key
    return None


def check_endpoint_identity(result: dict[str, Any], index: EndpointIndex,
                            file: str) -> list[Finding]:
    endpoint = result["endpoint"]
    if isinstance(endpoint.get("pricing"), list):
        return [ONE_CARD.at(file, "/endpoint/pricing", "the result carries a price history")]
    known = index.get(endpoint["id"])
    if known is None:
        return [UNKNOWN.at(file, "/endpoint/id",
                           f"no endpoints/{endpoint['id']}.yaml (nor a shipped one)")]
    for path in _FIELDS:
        if _get(endpoint, path) != _get(known, path):
            pointer = "/endpoint/" + "/".join(path)
            return [MISMATCH.at(file, pointer,
                                f"{'.'.join(path)} is {_get(endpoint, path)!r} but endpoints/"
                                f"{endpoint['id']}.yaml says {_get(known, path)!r}")]
    if _host(endpoint.get("base_url")) != _host(known.get("base_url")):
        return [MISMATCH.at(file, "/endpoint/base_url",
                            f"the base URL's host is {_host(endpoint.get('base_url'))!r} but "
                            f"endpoints/{endpoint['id']}.yaml says "
                            f"{_host(known.get('base_url'))!r}")]
    day = run_date(result)
    card = card_on(known["pricing"], day)
    pinned = endpoint.get("pricing") or {}
    if card is None:
        return [MISMATCH.at(file, "/endpoint/pricing",
                            f"endpoints/{endpoint['id']}.yaml has no price card in force on {day}")]
    key = _same_card(pinned, card)
    if key is not None:
        return [MISMATCH.at(file, f"/endpoint/pricing/{key}",
                            f"pricing.{key} is {pinned.get(key)!r} but the card in force on {day} "
                            f"in endpoints/{endpoint['id']}.yaml says {card.get(key)!r}")]
    return []


@on_result(180, needs_index=True)
def _on_result(s: Subject) -> list[Finding]:
    if s.path is None or results_root(s.path) is None:  # only what is submitted, or published
        return []
    endpoints = index_for(s.index.project)
    # an imported result may name an endpoint of its own, but one that names a known endpoint
    # is held to its file like any other (else it could speak for it)
    if s.imported and endpoints.get(s.doc["endpoint"]["id"]) is None:
        return []
    return check_endpoint_identity(s.doc, endpoints, s.file)
