"""Shared test helpers.

`need(reason)` is how a test says that what it needs (a server, a browser, a build) is missing:
it skips on a laptop, and fails under CI=true, where a missing dependency is a defect of the
CI setup and must not pass as a green run.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


@pytest.fixture(scope="session")
def vllm_timing_url() -> Iterator[str]:
    """One vLLM server with the 43 M-parameter timing model and prefix caching on, for the
    tests that time it (conversations, the Mooncake replay): started once a session, not once
    a test (a start is 45-160 s here). Tests read its counters as deltas."""
    from tests.vllm_fixture import vllm_server

    with vllm_server(size="timing") as base_url:
        yield base_url


# ------------------------------------------------------------------ servers built in the background
# The real servers that have virtualenvs of their own (tests/server_envs.py) are built while the
# other tests run: a test on one carries `@pytest.mark.built_server("llama")` (the name of its
# ServerEnv in lower case: LLAMA here, VLLM in tests/vllm_env.py); collection starts the builds
# the collected tests need, so a fresh machine's compile overlaps the rest of the suite.
#
# Where those tests run in the order:
# - in one process (`pytest`), last: the builds then have the whole suite's time;
# - in parallel (`pytest -n 3`, the README's command), vLLM's first, llama's last. vLLM's is the
#   longest path of a fresh run (its virtualenv, then three servers that each take a minute
#   to start), so a worker takes it at once and waits for its build while the others run the
#   rest; llama.cpp's compile then has until the end.
def _built_servers(item: pytest.Item) -> set[str]:
    return {str(arg) for mark in item.iter_markers("built_server") for arg in mark.args}


FIRST_WHEN_PARALLEL = ("vllm",)
BUILT_SERVER_TIMEOUT_S = 1800


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    from tests import server_envs

    needed = {item.nodeid: _built_servers(item) for item in items}
    wanted = set().union(*needed.values()) if needed else set()
    for name in sorted(wanted):
        if name == "vllm":  # its virtualenv, then the tiny model (tests/vllm_fixture.py)
            from tests.vllm_fixture import prepare_in_background

            prepare_in_background()
        else:
            getattr(server_envs, name.upper()).prebuild()
    if not wanted:
        return
    for item in items:  # the first test on a server may wait for its build: minutes more
        if needed[item.nodeid]:
            item.add_marker(pytest.mark.timeout(BUILT_SERVER_TIMEOUT_S))
    parallel = hasattr(config, "workerinput")  # a pytest-xdist worker: every one sorts alike

    def place(item: pytest.Item) -> int:
        servers = needed[item.nodeid]
        if not servers:
            return 1
        return 0 if parallel and servers & set(FIRST_WHEN_PARALLEL) else 2

    items.sort(key=place)  # stable: the collection order within each place


# Test modules that must share one worker: the vLLM modules share the session's timing server
# (`vllm_timing_url`), started once (a start is a minute under load). Every other module is a
# scope of its own, as with `--dist loadfile`.
SHARED_SCOPES = {"tests/servers/test_*vllm*.py": "vllm servers"}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under `pytest -n N`: modules dealt to workers in the collection order above (not
    xdist's default of the modules with the most tests first, which dealt vLLM's late), the
    next to the first worker with at most two tests left, the modules of SHARED_SCOPES
    together."""
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False

    class ModuleScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            for pattern, scope in SHARED_SCOPES.items():
                if fnmatch.fnmatch(module, pattern):
                    return scope
            return module

    return ModuleScheduling(config, log)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Builds still running when the session ends are stopped by their PIDs (they are redone
    next time), except in a pytest-xdist worker whose run was not interrupted: it may have
    finished its share while another worker's test waits for the build it holds, so it waits
    for the build instead."""
    server_envs = sys.modules.get("tests.server_envs")
    if server_envs is None:
        return
    if hasattr(session.config, "workerinput") and exitstatus != pytest.ExitCode.INTERRUPTED:
        server_envs.join_all()
    else:
        server_envs.stop_all()
