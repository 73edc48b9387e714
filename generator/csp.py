"""The site's Content-Security-Policy: one policy for every page, whose `script-src` gets the
sha256 of exactly that page's own inline scripts once the page is built (no
'unsafe-inline', no 'unsafe-eval'; SITE_DESIGN.md says why each source is there)."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

HASHES_TOKEN = "EPB-SCRIPT-HASHES"
CSP = (
    "default-src 'self'; "
    f"script-src 'self' {HASHES_TOKEN}; "
    "style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; "
    "font-src 'self'; "
    "connect-src 'self'; "
    "worker-src 'self' blob:; "
    "object-src 'none'; "
    "base-uri 'self'; "
    "form-action 'self'"
)

_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)


def script_hashes(html: str) -> list[str]:
    """CSP sources for every inline script of a page ('sha256-...')."""
    hashes = set()
    for match in _INLINE_SCRIPT.finditer(html):
        digest = hashlib.sha256(match.group(1).encode("utf-8")).digest()
        hashes.add(f"'sha256-{base64.b64encode(digest).decode('ascii')}'")
    return sorted(hashes)


def secure_html(html: str) -> str:
    """Put the hashes of the page's own inline scripts into its CSP meta tag."""
    return html.replace(HASHES_TOKEN, " ".join(script_hashes(html)))


def secure_pages(out_dir: Path) -> None:
    """Fill the policy of every built page under `out_dir`."""
    for path in out_dir.rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        if HASHES_TOKEN in text:
            path.write_text(secure_html(text), encoding="utf-8")
