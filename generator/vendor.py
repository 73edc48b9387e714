"""Vendoring the Vega, Vega-Lite and vega-embed JavaScript into the site at build time.

The bundle comes from the installed `vl-convert-python` package (`vl_convert.javascript_bundle`),
which carries the libraries inside its wheel: nothing is fetched from a CDN, at build time or in
the reader's browser. Bundling takes a few seconds, so the result is cached per vl-convert
version under the user's cache folder.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

BUNDLE_NAME = "vega-bundle.js"
# Puts the libraries on window (vl-convert's default does the same). Its `window.vega` is not
# the Vega module in this bundle; the board uses each View's own changeset() instead.
_SNIPPET = "window.vegaEmbed = vegaEmbed; window.vega = vega; window.vegaLite = vegaLite;"


@dataclass(frozen=True)
class VegaBundle:
    """The vendored bundle: where it was written and which library versions it holds."""

    path: Path
    vega: str
    vega_lite: str
    vega_embed: str
    sha256: str


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "epbench"


def _versions() -> tuple[str, str, str]:
    import vl_convert as vlc

    vega_lite = vlc.get_vegalite_versions()[-1]
    return vlc.get_vega_version(), vega_lite, vlc.get_vega_embed_version()


def bundle_text() -> str:
    """The bundle's JavaScript (cached on disk per library versions)."""
    import vl_convert as vlc

    vega, vega_lite, embed = _versions()
    cache = _cache_dir() / f"vega-{vega}-vl-{vega_lite}-embed-{embed}.js"
    if cache.is_file():
        return cache.read_text(encoding="utf-8")
    text: str = vlc.javascript_bundle(_SNIPPET, vl_version=vega_lite)
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(cache)
    except OSError:
        pass  # a read-only home only costs the next build a few seconds
    return text


def vendor_vega(dest_dir: Path) -> VegaBundle:
    """Write the bundle as `dest_dir/vega-bundle.js` and say which versions it holds."""
    text = bundle_text()
    dest_dir.mkdir(parents=True, exist_ok=True)
    path = dest_dir / BUNDLE_NAME
    path.write_text(text, encoding="utf-8")
    vega, vega_lite, embed = _versions()
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return VegaBundle(path=path, vega=vega, vega_lite=vega_lite, vega_embed=embed, sha256=digest)
