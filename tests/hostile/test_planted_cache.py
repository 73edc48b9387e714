"""Issue 21, "a planted build cache is published": the cache and its HMAC key sat in
`.cache/epbench-build/<sha256 of the results path>/` inside the checkout, so a commit could
carry a cache whose entries said provider "OpenAI" at 123,456 tokens/s, and a fresh clone's
`epbench build` published it; a result edited at the same size and mtime was served from its
stale entry. Now the cache lives outside the checkout and is keyed by content: the planted
folder (a forgery valid under today's format, digests and all, at the old place and at the
place an `XDG_CACHE_HOME` inside the checkout would name) publishes nothing, the same-size
edit is rebuilt, and `epbench validate` rejects the committed folder with one line."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pyarrow as pa
from attack import epbench, git, make_project, repository

from epbench.generator.build.build_cache import body_digest
from epbench.generator.build.cache_writer import wait_saved
from epbench.generator.build.cached_checks import cached_tables
from epbench.generator.downloads import read_table
from epbench.generator.tables import build_tables

FORGED_PROVIDER = "OpenAI (planted)"  # "OpenAI" alone is on every page: "OpenAI chat ..."
FORGED_TPS = 123456.789


def forge(folder: Path) -> int:
    """Every runs frame of the cache in `folder` rewritten to the forged provider and speed,
    every finding dropped, every digest made to match: what a forger who knows the format
    writes. Returns the number of forged rows."""
    forged = 0
    for shard in sorted(folder.glob("shard-??.json")):
        data = json.loads(shard.read_bytes().split(b"\n", 1)[1])
        for entry in data["entries"].values():
            entry["findings"] = []
        frames = data.get("frames")
        if isinstance(frames, dict):
            arrow = folder / f"{shard.stem}-runs.arrow"
            table = pa.ipc.open_file(pa.BufferReader(arrow.read_bytes())).read_all()
            n = table.num_rows
            for name, value in (("provider", FORGED_PROVIDER), ("max_system_tps", FORGED_TPS)):
                where = table.schema.get_field_index(name)
                table = table.set_column(where, name, pa.array([value] * n))
            sink = pa.BufferOutputStream()
            with pa.ipc.new_file(sink, table.schema) as writer:
                writer.write_table(table)
            raw = sink.getvalue().to_pybytes()
            arrow.write_bytes(raw)
            frames["runs"]["mac"] = body_digest(raw)
            forged += n
        body = json.dumps(data).encode()
        shard.write_bytes(body_digest(body).encode() + b"\n" + body)
    return forged


def plant(project: Path, folder: Path) -> None:
    """A genuine cache of the project's results written to `folder`, then forged."""
    cached_tables(project / "results", project, folder)
    wait_saved()
    assert forge(folder) > 0


def tree_digest(results: Path) -> str:
    return hashlib.sha256(os.path.abspath(results).encode()).hexdigest()[:16]


def build_env(tmp_path: Path, xdg: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("EPBENCH_CACHE_DIR", "GITHUB_ACTIONS", "RUNNER_TEMP")}
    return {**env, "XDG_CACHE_HOME": str(xdg), "HOME": str(tmp_path / "home")}


def published(project: Path) -> tuple[list[dict[str, object]], str]:
    """The runs download of the built site, and every text file of it joined."""
    site = project / "_site"
    text = "\n".join(p.read_text("utf-8", "replace") for p in site.rglob("*")
                     if p.is_file() and p.suffix in (".json", ".csv", ".html"))
    return read_table(site / "data", "runs"), text


def assert_only_the_committed_files(project: Path) -> list[dict[str, object]]:
    rows, text = published(project)
    assert rows, "the build published no run at all"
    assert FORGED_PROVIDER not in text and str(FORGED_TPS) not in text
    assert all(r["max_system_tps"] != FORGED_TPS for r in rows)
    committed = build_tables(project / "results", project).runs  # no cache at all
    assert sorted(str(r["run_id"]) for r in rows) == sorted(committed["run_id"].astype(str))
    by_id = committed.set_index("run_id")
    for row in rows:
        assert row["provider"] == by_id.loc[row["run_id"], "provider"]
    return rows


def test_a_planted_cache_publishes_nothing_and_a_same_size_edit_is_rebuilt(
        tmp_path: Path) -> None:
    project = make_project(tmp_path / "clone")
    results = project / "results"
    old_place = project / ".cache" / "epbench-build" / tree_digest(results)
    inside_xdg = project / ".cache" / "xdg"
    new_place_inside = inside_xdg / "epbench" / "build" / tree_digest(results)
    plant(project, old_place)
    plant(project, new_place_inside)
    # the control: read as a cache, the forgery would be published
    forged = cached_tables(results, project, new_place_inside)
    assert set(forged.runs["provider"]) == {FORGED_PROVIDER}
    plant(project, new_place_inside)  # (reading it rewrote nothing, but start from the forgery)

    outside = tmp_path / "xdg-outside"
    done = epbench("build", cwd=project, env=build_env(tmp_path, outside))
    assert done.returncode == 0, done.stderr[-2000:]
    assert_only_the_committed_files(project)
    assert any((outside / "epbench" / "build").iterdir())  # the cache went outside

    # a result edited at the same size and mtime: rebuilt, not served from its entry
    path = sorted(results.rglob("*.json"))[0]
    doc = json.loads(path.read_text())
    stat = os.stat(path)
    old = doc["submitter"]["relationship"]
    new = {"independent": "customer", "customer": "provider", "provider": "customer"}[old]
    text = path.read_text().replace(f'"relationship": "{old}"', f'"relationship": "{new}"', 1)
    text += " " * (stat.st_size - len(text.encode()))
    assert len(text.encode()) == stat.st_size
    path.write_text(text)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    done = epbench("build", cwd=project, env=build_env(tmp_path, outside))
    assert done.returncode == 0, done.stderr[-2000:]
    rows = assert_only_the_committed_files(project)
    assert {r["run_id"]: r["submitter_relationship"] for r in rows}[doc["run_id"]] == new

    # XDG_CACHE_HOME inside the checkout names the planted folder: it is not used
    done = epbench("build", cwd=project, env=build_env(tmp_path, inside_xdg))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "lies inside the project" in done.stderr
    assert_only_the_committed_files(project)


def test_validate_rejects_a_committed_cache_folder_with_one_line(tmp_path: Path) -> None:
    project = make_project(tmp_path / "repo")
    repository(project)
    git(project, "checkout", "-q", "-b", "planted")
    folder = project / ".cache" / "epbench-build" / "0123456789abcdef"
    folder.mkdir(parents=True)
    for name in ("shard-00.json", "shard-00.rows.json", "shard-00-runs.arrow", "key"):
        (folder / name).write_bytes(b"forged\n")
    git(project, "add", "-f", ".cache")
    git(project, "commit", "-q", "-m", "a cache")
    for args in (("validate",), ("validate", "--changed-since", "main")):
        done = epbench(*args, cwd=project)
        assert done.returncode == 1, done.stdout
        lines = [line for line in done.stdout.splitlines() if "file.build-state" in line]
        assert len(lines) == 1, done.stdout
        named = lines[0].split(":/")[0]  # relative, or absolute as --changed-since names files
        assert named in (".cache", str(project / ".cache")), lines[0]
        assert ".cache/ is committed" in lines[0]
        assert "4 files" in lines[0]
    git(project, "checkout", "-q", "main")
    done = epbench("validate", cwd=project)
    assert "file.build-state" not in done.stdout, done.stdout
