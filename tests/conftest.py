"""Shared test helpers.

`need(reason)` is how a test says that what it needs (a server, a browser, a build) is missing:
it skips on a laptop, and fails under CI=true, where a missing dependency is a defect of the
CI setup and must not pass as a green run.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def need(reason: str) -> None:
    """Skip locally, fail in CI: what the test needs is missing."""
    if IN_CI:
        pytest.fail(f"required for this test under CI=true: {reason}")
    pytest.skip(reason)


@pytest.fixture
def repo_root() -> Path:
    return ROOT


@pytest.fixture(autouse=True)
def _fresh_recompute_cache(tmp_path_factory: pytest.TempPathFactory,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test validates cold: recomputations remembered by one test (or by the developer's
    own ~/.cache) must not hide a problem from another."""
    monkeypatch.setenv("EPBENCH_CACHE_DIR", str(tmp_path_factory.mktemp("epbench-cache")))


def pytest_collection_finish(session: pytest.Session) -> None:
    """When a test that needs vLLM will run (it uses the `vllm_url` fixture), its virtualenv
    (a 3.4 GB pip install, 1.5-11 min here) and tiny model are built in a background thread
    from now on, while the other tests run; tests/test_vllm.py sorts near the end."""
    if any("vllm_url" in getattr(item, "fixturenames", ()) for item in session.items):
        from tests.vllm_fixture import prepare_in_background

        prepare_in_background()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A background vLLM build still running when the session ends is stopped by its PID."""
    module = sys.modules.get("tests.vllm_env")
    if module is not None:
        module.stop_background()
