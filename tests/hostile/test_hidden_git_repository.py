"""Finding 1: a pull request hides a git repository in workloads/serving/ whose config names a
program (`gpg.program`, run by `git log` when `log.showSignature` is on and a commit carries a
signature). A result pinned to an older version of a workload makes the validator read that
workload's git history; git run from the workload's folder would find the hidden repository
and run the program. The attack is built for real, shown to work on a plain `git log` from
that folder, and then must do nothing through `epbench validate` or `epbench build`."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

from attack import SERVICED, epbench, git, git_env, make_project, repository

from epbench.generator.validate import validate_paths

PAYLOAD = "#!/bin/sh\necho pwned >> \"$(dirname \"$0\")/../../PWNED\"\nexit 1\n"
SIGNATURE = ("gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n"
             " -----END PGP SIGNATURE-----\n")


def hidden_repository(project: Path, scratch: Path) -> None:
    """Plant HEAD, objects/, refs/, config and pwn.sh in workloads/serving/: a bare
    repository with one signed commit touching chat-short.yaml, whose config runs pwn.sh."""
    work = scratch / "forge"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    (work / "chat-short.yaml").write_text("id: chat-short\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "forged")
    commit = git(work, "cat-file", "commit", "HEAD")
    head, _, message = commit.partition("\n\n")
    signed = f"{head}\n{SIGNATURE}\n{message}"
    sha = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--stdin"], cwd=work,
                         input=signed, capture_output=True, text=True, check=True,
                         env=git_env(work)).stdout.strip()
    git(work, "update-ref", "refs/heads/main", sha)
    serving = project / "workloads" / "serving"
    for name in ("HEAD", "objects", "refs"):
        source = work / ".git" / name
        if source.is_dir():
            shutil.copytree(source, serving / name, dirs_exist_ok=True)
        else:
            shutil.copy(source, serving / name)
    (serving / "config").write_text(
        "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
        "[log]\n\tshowSignature = true\n[gpg]\n\tprogram = ./pwn.sh\n")
    (serving / "pwn.sh").write_text(PAYLOAD)
    (serving / "pwn.sh").chmod(0o755)


def pinned_to_an_older_workload(tmp_path: Path) -> Path:
    """A committed project whose result ran v1 of chat-short, which is now at v2."""
    project = repository(make_project(tmp_path / "project"))
    workload = project / "workloads" / "serving" / "chat-short.yaml"
    old_sha = hashlib.sha256(workload.read_bytes()).hexdigest()
    workload.write_text("id: chat-short\nversion: 2\n")
    git(project, "commit", "-q", "-am", "chat-short v2")
    result = project / "results" / SERVICED
    doc = json.loads(result.read_text())
    assert doc["workload"]["sha256"] == old_sha
    return project


def test_the_forged_repository_is_a_real_attack_on_git_run_from_the_workload_folder(
    tmp_path: Path,
) -> None:
    project = pinned_to_an_older_workload(tmp_path)
    hidden_repository(project, tmp_path)
    serving = project / "workloads" / "serving"
    subprocess.run(["git", "log", "--format=%H", "--", "chat-short.yaml"], cwd=serving,
                   capture_output=True, env=git_env(tmp_path), timeout=60, check=False)
    assert (project / "PWNED").exists(), "the forged repository no longer triggers gpg.program"


def test_validate_and_build_never_run_the_hidden_repositorys_program(tmp_path: Path) -> None:
    project = pinned_to_an_older_workload(tmp_path)
    hidden_repository(project, tmp_path)
    marker = project / "PWNED"

    done = epbench("validate", ".", "--format", "json", cwd=project)
    assert not marker.exists(), "epbench validate ran the hidden repository's gpg.program"
    report = json.loads(done.stdout)
    assert done.returncode == 1
    by_file = {(project / f["file"]).relative_to(project).as_posix(): f["check"]
               for f in report["findings"]}
    assert by_file["workloads/serving/HEAD"] == "file.unknown"
    assert by_file["workloads/serving/config"] == "file.unknown"
    assert by_file["workloads/serving/pwn.sh"] == "file.unknown"
    assert any(name.startswith("workloads/serving/objects/") for name in by_file)
    assert any(name.startswith("workloads/serving/refs/") for name in by_file)
    # the older workload version is still found in the real repository's history
    assert "workload.sha256" not in {f["check"] for f in report["findings"]}

    built = epbench("build", "--out", str(tmp_path / "site"), cwd=project)
    assert not marker.exists(), "epbench build ran the hidden repository's gpg.program"
    assert built.returncode == 0, built.stderr[-2000:]


def test_a_result_is_still_matched_against_its_workloads_real_history(tmp_path: Path) -> None:
    project = pinned_to_an_older_workload(tmp_path)
    report = validate_paths([project / "results" / SERVICED])
    assert "workload.sha256" not in {f.check for f in report.findings}
