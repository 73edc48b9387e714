"""Finding 8: the privileged jobs (benchmark.yml holds the endpoint secrets and a write token,
pages.yml builds what the Pages token deploys) installed open-ended versions, so a hijacked
release of any dependency would have run with those credentials. They now install only what
.github/locks/privileged.txt pins, each file checked against its sha256, and epbench itself
without resolving anything (`--no-deps --no-build-isolation`). These tests read the
workflows and the lock; installing from it needs the network, so scripts/lock.sh documents how
it is made and the commit that made it says how it was checked."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests import workflow_steps

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / ".github" / "locks" / "privileged.txt"
PRIVILEGED = ("benchmark.yml", "epbench-run.yml", "pages.yml")
ALLOWED_INSTALLS = {
    ("install", "--require-hashes", "--no-deps", "-r", ".github/locks/privileged.txt"),
    ("install", "--no-deps", "--no-build-isolation", "-e", "."),
}


def pins() -> dict[str, tuple[str, list[str]]]:
    """name -> (version, hashes) from the lock."""
    text = LOCK.read_text().replace("\\\n", " ")
    out = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        match = re.match(r"^([A-Za-z0-9._-]+)==([^\s;]+)(?:\s*;[^-]*)?"
                         r"((?:\s+--hash=sha256:[0-9a-f]{64})+)$", line)
        assert match, f"not a pinned, hashed requirement: {line[:120]}"
        hashes = re.findall(r"sha256:([0-9a-f]{64})", match.group(3))
        out[canonicalize_name(match.group(1))] = (match.group(2), hashes)
    return out


@pytest.mark.parametrize("name", PRIVILEGED)
def test_every_install_in_a_privileged_workflow_is_from_the_hashed_lock(name: str) -> None:
    document = workflow_steps.load_workflow(name)
    installs = []
    for job in document["jobs"].values():
        for step in job.get("steps", []):
            for line in step.get("run", "").replace("\\\n", " ").splitlines():
                if "pip" not in line:
                    continue
                words = shlex.split(line)
                if "install" in words:
                    installs.append(tuple(words[words.index("install"):]))
    assert installs, name
    assert set(installs) <= ALLOWED_INSTALLS, set(installs) - ALLOWED_INSTALLS
    text = (workflow_steps.WORKFLOW_DIR / name).read_text()
    assert "pip install -e ." not in text and "pip install ." not in text


def test_every_package_in_the_lock_is_pinned_with_hashes() -> None:
    locked = pins()
    assert len(locked) >= 20
    assert all(hashes for _, hashes in locked.values())


def test_the_lock_satisfies_every_runtime_dependency_and_the_build_backend() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    locked = pins()
    wanted = [Requirement(r) for r in project["project"]["dependencies"]]
    wanted += [Requirement(r) for r in project["build-system"]["requires"]]
    wanted.append(Requirement("editables"))  # hatchling's editable install
    for requirement in wanted:
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{name} is not in the lock: run scripts/lock.sh"
        version = locked[name][0]
        assert requirement.specifier.contains(version, prereleases=True), (
            f"{name}=={version} does not satisfy {requirement}: run scripts/lock.sh")


def test_the_lock_says_how_it_is_made() -> None:
    assert "scripts/lock.sh" in LOCK.read_text()[:300]
    script = (ROOT / "scripts" / "lock.sh").read_text()
    assert "--generate-hashes" in script and ".github/locks/privileged.txt" in script
