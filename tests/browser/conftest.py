"""Fixtures for the browser tests: one built site (sample results, generated results and the
XSS payload result) served on loopback, and one headless Debian Chromium."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from epbench.core.provenance import ATTESTED, Provenance
from tests.browser.harness import browser, chromium_path, serve
from tests.browser.site_data import SELF_REPORTED_SUBMITTER, make_project
from tests.conftest import need


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, with every result but the self-reported copy counted as attested: no test
    here can sign a bundle for the public-good root (tests/generator/checks/test_provenance.py
    and the attestation tests check tiers); these check what the pages do with them."""
    import epbench.generator.validate
    from epbench.generator.site import build_site

    real = epbench.generator.validate.tier_of

    def tier_of(result: dict[str, Any], path: Path, digest: str, project: Any) -> Provenance:
        if (result.get("submitter") or {}).get("name") == SELF_REPORTED_SUBMITTER:
            return real(result, path, digest, project)
        return Provenance(ATTESTED, "signed by the browser tests' stand-in")

    project = make_project(tmp_path_factory.mktemp("browser-project"), generated=12,
                           self_reported=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(epbench.generator.validate, "tier_of", tier_of)
        return build_site(project / "results", tmp_path_factory.mktemp("browser-out") / "_site",
                          project, base_url="", incremental=False)


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
