"""The sha256 of a file's bytes, read in blocks: what the build cache keys entries by and what
an attestation bundle signs (one implementation for both)."""

from __future__ import annotations

import hashlib
from pathlib import Path

BLOCK = 1 << 20


def sha256_file(path: Path | str) -> str:
    """Hex sha256 of the file at `path` (OSError when it cannot be read)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()
