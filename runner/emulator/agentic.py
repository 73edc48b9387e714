"""Hosting the agentic player: load the workloads it can play and ask it for scripts.

The player itself (`epbench.runner.emulator.agentic_play.AgenticPlayer`) belongs to the agentic
executor's side; the emulator only hosts it. When it cannot be imported, or it returns None,
or it fails on a request, the emulator answers with plain text: a request with `tools` never
breaks the server.
"""

from __future__ import annotations

import importlib
import logging
import sys
from pathlib import Path
from typing import Any, Protocol

from epbench.core.documents import load_document
from epbench.core.errors import EpbenchError
from epbench.core.paths import workloads_dir
from epbench.runner.emulator.script import Script

log = logging.getLogger("epbench.emulator")
WORKLOAD_SUFFIXES = (".yaml", ".yml", ".json")


class Player(Protocol):
    """What the emulator needs from an agentic player."""

    def play(self, request_body: dict[str, Any]) -> Script | None: ...


def load_workloads(dirs: list[Path] | None) -> list[dict[str, Any]]:
    """Agentic workload documents in these folders (default: the shipped workloads/agentic/).

    Files that are not agentic workloads, or cannot be loaded, are skipped with a warning.
    """
    folders = dirs if dirs else [workloads_dir() / "agentic"]
    found: list[dict[str, Any]] = []
    for folder in folders:
        folder = Path(folder)
        paths = [folder] if folder.is_file() else sorted(folder.glob("*"))
        for path in paths:
            if path.suffix not in WORKLOAD_SUFFIXES or not path.is_file():
                continue
            try:
                document = load_document(path)
            except EpbenchError as exc:
                print(f"epbench emulator: skipping {exc}", file=sys.stderr)
                continue
            if _is_agentic(document):
                found.append(document)
    return found


def _is_agentic(document: Any) -> bool:
    if not isinstance(document, dict):
        return False
    if document.get("kind") == "agentic-workload":
        return True
    if "$schema" not in document:
        return False  # decided without importing jsonschema (slow), the common case
    from epbench.core.schema import kind_of

    return kind_of(document) == "agentic-workload"


def make_player(
    settings: dict[str, Any], seed: int, dirs: list[Path] | None
) -> Player | None:
    """An AgenticPlayer over the workloads, or None when the player module is not there."""
    try:
        module = importlib.import_module("epbench.runner.emulator.agentic_play")
    except ImportError:
        return None
    player_class = getattr(module, "AgenticPlayer", None)
    if player_class is None:
        return None
    player: Player = player_class(load_workloads(dirs), dict(settings), seed)
    return player


def play(player: Player | None, body: dict[str, Any]) -> Script | None:
    """The player's script for a request with tools, or None (answer with text)."""
    if player is None or not body.get("tools"):
        return None
    try:
        script = player.play(body)
    except Exception:  # a player bug must not take the server down; it is logged
        log.exception("agentic player failed on a request; answering with text")
        return None
    return script if isinstance(script, Script) else None
