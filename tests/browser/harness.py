"""Serving a built site on loopback and driving Debian's Chromium with Playwright.

Used by the browser tests and by bench/site_scale.py. Every request the page makes is
recorded, with every console message, page error and dialog, so tests can assert that nothing
left the page's origin and nothing ran that should not have.
"""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
# A full-page screenshot of a long page on a loaded machine (3 pytest-xdist workers on 2 cores,
# each with its Chromium) took over Playwright's default 30 s once; the picture is what the test
# checks, not how fast it is taken.
SHOT_TIMEOUT_MS = 120_000
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium_path() -> str | None:
    """Debian's Chromium, or None when it (or Playwright) is missing."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return None
    found = shutil.which("chromium") or (CHROMIUM if Path(CHROMIUM).exists() else None)
    return found


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serve(folder: Path) -> Iterator[str]:
    """Serve `folder` on 127.0.0.1 (a free port); yields the base URL ending in '/'."""
    handler = functools.partial(_Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class PageLog:
    """What one page did: requests, console messages, page errors, dialogs."""

    requests: list[str] = field(default_factory=list)
    console: list[tuple[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        """Console errors and warnings, page errors and dialogs: all should be empty."""
        bad = [f"console.{kind}: {text}" for kind, text in self.console
               if kind in ("error", "warning")]
        return bad + [f"pageerror: {e}" for e in self.errors] + \
            [f"dialog: {d}" for d in self.dialogs]


@contextmanager
def browser() -> Iterator[Any]:
    """A headless Chromium (Debian's binary) through Playwright."""
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    if path is None:
        raise RuntimeError("chromium or playwright is missing")
    with sync_playwright() as pw:
        chrome = pw.chromium.launch(executable_path=path, args=LAUNCH_ARGS, headless=True)
        try:
            yield chrome
        finally:
            chrome.close()


def open_page(chrome: Any, accept_downloads: bool = False) -> tuple[Any, PageLog]:
    """A new page in a fresh context, with everything it does recorded in a PageLog."""
    context = chrome.new_context(accept_downloads=accept_downloads)
    page = context.new_page()
    log = PageLog()
    page.on("request", lambda r: log.requests.append(r.url))
    page.on("console", lambda m: log.console.append((m.type, m.text)))
    page.on("pageerror", lambda e: log.errors.append(str(e)))

    def on_dialog(dialog: Any) -> None:
        log.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    return page, log


@contextmanager
def page_opener(chrome: Any, ready: Callable[[Any], None]) -> Iterator[Callable[..., Any]]:
    """`open(url, width=1366, scheme="light")`: a page in a fresh context of that window width
    (844 px tall below 800 px wide, else 900) and colour scheme, loaded and `ready`; every
    context is closed at the end."""
    contexts: list[Any] = []

    def opener(url: str, width: int = 1366, scheme: str = "light") -> Any:
        context = chrome.new_context(viewport={"width": width, "height": 844 if width < 800
                                               else 900}, color_scheme=scheme)
        contexts.append(context)
        page = context.new_page()
        page.goto(url)
        ready(page)
        return page

    try:
        yield opener
    finally:
        for context in contexts:
            context.close()


def wait_for_board(page: Any) -> None:
    """Wait until the leaderboard has loaded its data and drawn its first render."""
    page.wait_for_function(
        "() => window.epbBoard && document.getElementById('epb-board')"
        " && (document.getElementById('epb-board').dataset.renders"
        " || document.getElementById('epb-board').dataset.error"
        " || document.getElementById('epb-board').dataset.chartError)",
        timeout=30000,
    )
