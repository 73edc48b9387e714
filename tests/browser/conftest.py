"""Fixtures for the browser tests: one built site (sample results, generated results and the
XSS payload result) served on loopback, and one headless Debian Chromium."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.harness import browser, chromium_path, serve
from tests.browser.site_data import make_project
from tests.conftest import need


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from generator.site import build_site

    project = make_project(tmp_path_factory.mktemp("browser-project"), generated=12)
    return build_site(project / "results", tmp_path_factory.mktemp("browser-out") / "_site",
                      project, base_url="")


@pytest.fixture(scope="session")
def site_url(built_site: Path) -> Iterator[str]:
    with serve(built_site) as base:
        yield base


# Module scope: Playwright's sync API keeps an event loop running in this thread while the
# browser is open, which must not outlive the browser tests.
@pytest.fixture(scope="module")
def chrome() -> Iterator[Any]:
    if chromium_path() is None:
        need("Debian chromium (/usr/bin/chromium) and the playwright package")
    with browser() as instance:
        yield instance
