"""The incremental build: a second build checks no unchanged result (it hashes each one whose
stat has not settled: the cache is keyed by content), picks up a changed, an added and a
removed one, and one edited at the same size and mtime, ignores a damaged cache (entries, rows
or their column-wise frames) or one from another epbench version, and renders only the result
pages whose inputs changed; an incremental build gives the same site as a full one and
rewrites only the download parts of a new result's day. The cache lives outside the project."""

from __future__ import annotations

import gzip
import json
import random
import shutil
from datetime import date
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import epbench.generator.build.build_cache as build_cache
import epbench.generator.validate as validate
from epbench.generator.build.build_cache import default_folder
from epbench.generator.build.cached_checks import cached_tables
from epbench.generator.downloads import read_table
from epbench.generator.site import build_site
from epbench.generator.tables import TABLE_NAMES, Tables, build_tables
from tests.browser.site_data import ENDPOINTS, make_project, result_path, serving_result


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One project for the module: its 20 journaled results are made and summarized once
    (about 2 CPU-s), not for each test."""
    return make_project(tmp_path_factory.mktemp("made") / "p", generated=20)


@pytest.fixture
def project(made: Path, tmp_path: Path) -> Path:
    """A test's own copy of the module's project (the tests change it), with its files'
    times: a build cache is keyed by the results tree's path, so no two tests share one."""
    return Path(shutil.copytree(made, tmp_path / "p", symlinks=True))


class Reads:
    """Counts the result files the validator checks and the files the cache hashes."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.checked: list[str] = []
        self.hashed: list[str] = []
        check, sha = validate.check_file, build_cache.sha256_file

        def counting_check(path: Path, *args: object, **kwargs: object) -> validate.Checked:
            self.checked.append(Path(path).name)
            return check(path, *args, **kwargs)  # type: ignore[arg-type]

        def counting_sha(path: Path) -> str:
            self.hashed.append(Path(path).name)
            return sha(path)

        monkeypatch.setattr(validate, "check_file", counting_check)
        monkeypatch.setattr(build_cache, "sha256_file", counting_sha)

    def clear(self) -> None:
        self.checked.clear()
        self.hashed.clear()


def assert_same_tables(a: Tables, b: Tables) -> None:
    for name in TABLE_NAMES:
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name))
    assert sorted(f.line() for f in a.report.findings) == \
        sorted(f.line() for f in b.report.findings)


def folder_of(project: Path) -> Path:
    folder = default_folder(project, project / "results")
    assert folder is not None
    return folder


def cached(project: Path) -> Tables:
    return cached_tables(project / "results", project, folder_of(project))


def every_file(project: Path) -> list[str]:
    return sorted(p.name for p in (project / "results").rglob("*") if p.is_file())


def test_a_second_build_checks_no_unchanged_result_and_gives_the_same_tables(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads = Reads(monkeypatch)
    first = cached(project)
    assert len(reads.checked) > 20
    reads.clear()
    second = cached(project)
    assert reads.checked == []
    assert sorted(reads.hashed) == every_file(project)  # each result and journal, by content
    assert_same_tables(second, build_tables(project / "results", project))
    assert_same_tables(second, first)


def test_a_result_edited_at_the_same_size_and_mtime_is_checked_again(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    reads = Reads(monkeypatch)
    cached(project)
    path = sorted(p for p in (project / "results").rglob("*.json") if "alice" in p.parts)[0]
    before = os.stat(path)
    doc = json.loads(path.read_text())
    old = doc["submitter"]["relationship"]
    new = "provider" if old != "provider" else "customer"
    text = path.read_text().replace(f'"relationship": "{old}"', f'"relationship": "{new}"', 1)
    text = text.replace(" ", "", len(new) - len(old)) if len(new) > len(old) else \
        text + " " * (len(old) - len(new))  # the same number of bytes
    path.write_text(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    reads.clear()
    tables = cached(project)
    assert reads.checked == [path.name]
    row = tables.runs.set_index("run_id").loc[doc["run_id"]]
    assert row["submitter_relationship"] == new
    assert_same_tables(tables, build_tables(project / "results", project))


def test_a_settled_file_is_not_hashed_again_and_an_edit_at_the_same_size_and_mtime_still_is(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    # the project's files were written moments ago: count them as settled (ctime long past)
    monkeypatch.setattr(build_cache, "SETTLED_NS", -3600 * 10**9)
    reads = Reads(monkeypatch)
    first = cached(project)
    reads.clear()
    second = cached(project)
    assert reads.checked == [] and reads.hashed == []  # their stats stand for their bytes
    assert_same_tables(second, first)
    path = sorted(p for p in (project / "results").rglob("*.json") if "alice" in p.parts)[0]
    before = os.stat(path)
    text = path.read_text()
    doc = json.loads(text)
    path.write_text(text.replace(doc["run_id"], doc["run_id"][::-1], 1))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    reads.clear()
    third = cached(project)
    assert reads.checked == [path.name] and path.name in reads.hashed
    assert doc["run_id"] not in set(third.runs["run_id"])  # not served from its old entry


def test_a_file_rewritten_with_the_same_bytes_is_hashed_once_then_trusted(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build_cache, "SETTLED_NS", -3600 * 10**9)
    reads = Reads(monkeypatch)
    first = cached(project)
    for path in (project / "results").rglob("*"):
        if path.is_file():
            path.write_bytes(path.read_bytes())  # new mtime and ctime, as a fresh clone has
    reads.clear()
    cached(project)
    assert reads.checked == [] and sorted(reads.hashed) == every_file(project)
    reads.clear()
    third = cached(project)  # the new stats were recorded with the entries
    assert reads.checked == [] and reads.hashed == []
    assert_same_tables(third, first)


def test_a_file_changed_in_the_second_before_a_build_is_hashed_by_the_next_one(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads = Reads(monkeypatch)  # SETTLED_NS as shipped: these files were written just now
    cached(project)
    reads.clear()
    cached(project)
    assert reads.checked == [] and sorted(reads.hashed) == every_file(project)


def test_the_cache_lives_outside_the_project(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    results = project / "results"
    monkeypatch.delenv("EPBENCH_CACHE_DIR")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    folder = default_folder(project, results)
    assert folder is not None and folder.parent == tmp_path / "xdg" / "epbench" / "build"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("RUNNER_TEMP", str(tmp_path / "runner-temp"))
    folder = default_folder(project, results)
    assert folder is not None and folder.parent == tmp_path / "runner-temp" / "epbench" / "build"
    monkeypatch.delenv("GITHUB_ACTIONS")
    monkeypatch.setenv("XDG_CACHE_HOME", str(project / ".cache"))  # a folder a commit can fill
    assert default_folder(project, results) is None


def change_one_remove_one(results: Path) -> tuple[Path, dict[str, Any], Path, str]:
    """Edit one of alice's results (relationship: customer) and delete another with its
    journal: (changed file, its new document, removed file, removed run id)."""
    files = sorted(p for p in results.rglob("*.json") if "alice" in p.parts)
    changed, removed = files[0], files[1]
    doc = json.loads(changed.read_text())
    doc["submitter"]["relationship"] = "customer"
    changed.write_text(json.dumps(doc))
    removed_id = json.loads(removed.read_text())["run_id"]
    removed.unlink()
    removed.with_suffix(".events.jsonl.gz").unlink(missing_ok=True)  # and its journal
    return changed, doc, removed, removed_id


def test_a_changed_an_added_and_a_removed_result_are_picked_up(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads = Reads(monkeypatch)
    cached(project)
    results = project / "results"
    changed, doc, _removed, removed_id = change_one_remove_one(results)
    new = serving_result(9001, ENDPOINTS[0], date(2026, 10, 1), "eu-west", "alice",
                         random.Random(9001))
    added = result_path(results, new)
    added.parent.mkdir(parents=True, exist_ok=True)
    added.write_text(json.dumps(new))
    reads.clear()
    tables = cached(project)
    assert sorted(reads.checked) == sorted([changed.name, added.name])
    assert_same_tables(tables, build_tables(results, project))
    assert new["run_id"] in set(tables.runs["run_id"])
    assert removed_id not in set(tables.runs["run_id"])
    row = tables.runs.set_index("run_id").loc[doc["run_id"]]
    assert row["submitter_relationship"] == "customer"


def test_a_touched_but_unchanged_result_is_hashed_not_checked(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads = Reads(monkeypatch)
    cached(project)
    path = next((project / "results").rglob("*.json"))
    path.write_bytes(path.read_bytes())  # same bytes, new mtime
    reads.clear()
    cached(project)
    assert reads.checked == [] and path.name in reads.hashed


@pytest.mark.parametrize("part", ["entries", "rows", "frames"])
def test_a_damaged_cache_part_is_ignored(project: Path, monkeypatch: pytest.MonkeyPatch,
                                          part: str) -> None:
    reads = Reads(monkeypatch)
    cached(project)
    total = len(reads.checked)
    results = project / "results"
    folder = folder_of(project)
    shard = max(folder.glob("shard-??.json"), key=lambda p: p.stat().st_size)
    mac, body = shard.read_bytes().split(b"\n", 1)
    data = json.loads(body)
    number = shard.name[len("shard-"):len("shard-00")]
    if part == "entries":  # a rejected file would pass
        for entry in data["entries"].values():
            entry["findings"] = []
        shard.write_bytes(mac + b"\n" + json.dumps(data).encode())
    elif part == "rows":  # a forged run id, read once a file of the shard changes
        rows_file = folder / f"shard-{number}.rows.json"
        rows_mac, rows_body = rows_file.read_bytes().split(b"\n", 1)
        rows = json.loads(rows_body)
        first = next(iter(rows["entries"].values()))
        first[0][0][0] = "forged-run-id"
        rows_file.write_bytes(rows_mac + b"\n" + json.dumps(rows).encode())
        other = sorted(rel for rel in data["entries"] if rel not in rows["entries"]
                       or rows["entries"][rel] is not first)[0]
        doc = json.loads((results / other).read_text())
        doc["submitter"]["relationship"] = "customer"
        (results / other).write_text(json.dumps(doc))
    else:  # the column-wise rows
        frame = folder / f"shard-{number}-runs.arrow"
        raw = bytearray(frame.read_bytes())
        raw[len(raw) // 2] ^= 0xFF
        frame.write_bytes(bytes(raw))
    reads.clear()
    tables = cached(project)
    # entries: that shard's files again; rows: the changed file, then (the shard's rows
    # being altered) every file again; frames: every file again
    expected = {"entries": len(data["entries"]), "rows": total + 1, "frames": total}[part]
    assert len(reads.checked) == expected
    assert "forged-run-id" not in set(tables.runs["run_id"])
    assert_same_tables(tables, build_tables(results, project))


def test_a_cache_from_another_epbench_version_is_ignored(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads = Reads(monkeypatch)
    first = cached(project)
    count = len(reads.checked)
    monkeypatch.setattr(build_cache, "__version__", "0.0.0-other")
    reads.clear()
    assert_same_tables(cached(project), first)
    assert len(reads.checked) == count


def test_an_edited_endpoint_file_invalidates_the_cache(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads = Reads(monkeypatch)
    cached(project)
    count = len(reads.checked)
    endpoint = next((project / "endpoints").glob("*.yaml"))
    endpoint.write_text(endpoint.read_text() + "\n# edited\n")
    reads.clear()
    cached(project)
    assert len(reads.checked) == count


def test_only_result_pages_whose_inputs_changed_are_rendered_again(project: Path,
                                                                    tmp_path: Path) -> None:
    results, out = project / "results", tmp_path / "_site"
    build_site(results, out, project, "")
    pages = {p.parent.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*/index.html")}
    assert len(pages) > 20
    journals = {p: p.stat().st_mtime_ns for p in (out / "results").rglob("*.events.jsonl.gz")}
    assert len(journals) >= 10  # each journaled result's, beside its raw copy, byte for byte
    assert all(p.read_bytes() == (results / p.relative_to(out / "results")).read_bytes()
               for p in journals)
    _changed, doc, removed, removed_id = change_one_remove_one(results)
    build_site(results, out, project, "")
    gone = (out / "results" / removed.relative_to(results)).with_suffix(".events.jsonl.gz")
    assert gone in journals and not gone.exists()  # dropped with its result
    kept = [p for p in journals if p.exists()]
    assert kept and all(p.stat().st_mtime_ns == journals[p] for p in kept  # not copied again
                        if doc["run_id"][:8] not in p.name)
    after = {p.parent.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*/index.html")}
    assert removed_id not in after
    assert not (out / "results" / removed.relative_to(results)).exists()
    assert after[doc["run_id"]] != pages[doc["run_id"]]
    assert "customer" in (out / "runs" / doc["run_id"] / "index.html").read_text()
    same = [r for r in after if r != doc["run_id"]]
    assert same and all(after[r] == pages[r] for r in same)
    assert (out / "index.html").is_file() and (out / "data" / "view" / "runs.json").is_file()


def _files(site: Path) -> dict[str, bytes]:
    """Every file of a built site; the gzip copy of the sitemap by its content (gzip stamps
    the time it was written)."""
    out = {}
    for path in sorted(p for p in site.rglob("*") if p.is_file()):
        data = path.read_bytes()
        out[path.relative_to(site).as_posix()] = \
            gzip.decompress(data) if path.name.endswith(".gz") else data
    return out


def test_an_incremental_build_gives_the_same_site_as_a_full_build(project: Path,
                                                                   tmp_path: Path) -> None:
    results, out = project / "results", tmp_path / "_site"
    build_site(results, out, project, "")
    change_one_remove_one(results)
    new = serving_result(9002, ENDPOINTS[1], date(2026, 10, 2), "eu-west", "alice",
                         random.Random(9002))
    added = result_path(results, new)
    added.parent.mkdir(parents=True, exist_ok=True)
    added.write_text(json.dumps(new))
    build_site(results, out, project, "")
    full = build_site(results, tmp_path / "full", project, "", incremental=False)
    incremental, whole = _files(out), _files(full)
    assert sorted(incremental) == sorted(whole)
    assert [name for name in incremental if incremental[name] != whole[name]] == []
    assert new["run_id"] in {r["run_id"] for r in read_table(out / "data", "runs")}


def test_one_new_result_rewrites_only_the_download_parts_of_its_day(project: Path,
                                                                     tmp_path: Path) -> None:
    results, out = project / "results", tmp_path / "_site"
    build_site(results, out, project, "")
    data = out / "data"
    before = {p.relative_to(data).as_posix(): p.stat().st_mtime_ns
              for p in data.rglob("*") if p.is_file() and "view" not in p.parts}
    day = date(2026, 10, 3)
    new = serving_result(9003, ENDPOINTS[2], day, "eu-west", "bob", random.Random(9003))
    added = result_path(results, new)
    added.parent.mkdir(parents=True, exist_ok=True)
    added.write_text(json.dumps(new))
    build_site(results, out, project, "")
    after = {p.relative_to(data).as_posix(): p.stat().st_mtime_ns
             for p in data.rglob("*") if p.is_file() and "view" not in p.parts}
    changed = sorted(name for name in after if before.get(name) != after[name])
    dated = [f"{t}/{day.isoformat()}.{ext}" for t in ("history", "points", "runs")
             for ext in ("csv", "json")]
    assert changed == sorted([*dated, "endpoints.csv", "endpoints.json", "index.json"])
    assert any(p.startswith("runs/") for p in before)  # other days' parts were kept


def test_an_entry_json_cannot_carry_is_dropped_when_saved_and_the_others_are_kept(
        tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    cache = build_cache.BuildCache.open(folder, tmp_path)
    for name in ("good", "bad"):
        (tmp_path / "u" / "e").mkdir(parents=True, exist_ok=True)
        (tmp_path / "u" / "e" / f"{name}.json").write_text("{}")
    fine = build_cache.Stamp([2, 1], sha=build_cache.sha256_file(tmp_path / "u/e/good.json"))
    cache.store("u/e/good.json", fine, "result", [], "good-run-0001", {},
                [[["x", 1.5]], [], [], None])
    cache.store("u/e/bad.json", fine, "result", [], "bad-run-00001", {},
                [[["x", float("nan")]], [], [], None])  # NaN: JSON cannot carry it exactly
    cache.save()
    again = build_cache.BuildCache.open(folder, tmp_path)
    _, good = again.stamp(tmp_path / "u/e/good.json", "u/e/good.json", [2, 1], journal=False)
    _, bad = again.stamp(tmp_path / "u/e/bad.json", "u/e/bad.json", [2, 1], journal=False)
    assert good is not None and good["run_id"] == "good-run-0001"
    assert bad is None
    number = build_cache.shard_of("u/e/good.json")
    assert again.rows_of(number)["u/e/good.json"] == [[["x", 1.5]], [], [], None]


def test_shards_the_cache_holds_nothing_of_are_checked_and_written_by_workers(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    import epbench.generator.build.cached_checks as cached_checks
    import epbench.generator.build.cold_shards as cold_shards

    monkeypatch.setattr(cached_checks, "POOL_MIN_FILES", 1)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    shards: list[int] = []
    run = cold_shards.check_shards

    def counting(reuse: Any, tasks: list[Any], *args: Any) -> Any:
        shards.extend(task.number for task in tasks)
        return run(reuse, tasks, *args)

    monkeypatch.setattr(cached_checks, "check_shards", counting)
    results = project / "results"
    first = cached(project)  # a full build: every shard is new
    assert len(shards) > 10
    assert_same_tables(first, build_tables(results, project))
    reads = Reads(monkeypatch)
    shards.clear()
    assert_same_tables(cached(project), first)  # the workers' shards read back from disk
    assert reads.checked == [] and shards == []
    changed, _doc, _removed, removed_id = change_one_remove_one(results)
    again = cached(project)
    assert reads.checked == [changed.name] and shards == []  # a shard with entries: as before
    assert_same_tables(again, build_tables(results, project))
    assert removed_id not in set(again.runs["run_id"])


def test_an_edited_result_page_template_changes_the_build_context(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    real = build_cache.shipped
    site = tmp_path / "site"
    shutil.copytree(real("site") / "templates", site / "templates")
    monkeypatch.setattr(build_cache, "shipped", lambda name: site if name == "site" else real(name))
    before = build_cache.context_digest(tmp_path)
    assert build_cache.context_digest(tmp_path) == before
    template = site / "templates" / "result.html.j2"
    template.write_text(template.read_text() + "\n", encoding="utf-8")
    assert build_cache.context_digest(tmp_path) != before  # kept result pages are rendered again


def test_a_changed_shell_page_renders_every_kept_result_page_again(project: Path,
                                                                  tmp_path: Path) -> None:
    results, out = project / "results", tmp_path / "_site"
    build_site(results, out, project, "")
    page = next((out / "runs").glob("*/index.html"))
    assert "https://example.org/bench/" not in page.read_text(encoding="utf-8")
    build_site(results, out, project, "https://example.org/bench/")  # a new canonical link
    assert "https://example.org/bench/runs/" in page.read_text(encoding="utf-8")
    full = build_site(results, tmp_path / "full", project, "https://example.org/bench/",
                      incremental=False)
    incremental, whole = _files(out), _files(full)
    assert sorted(incremental) == sorted(whole)
    assert [name for name in incremental if incremental[name] != whole[name]] == []


def test_an_attestation_bundle_added_or_removed_beside_a_cached_result_checks_it_again(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache learns of a bundle from its folder's listing (no stat of each result's
    would-be bundle): one that appears, or goes, makes its result's entry stale."""
    from epbench.core.provenance import BUNDLE_SUFFIX

    reads = Reads(monkeypatch)
    cached(project)
    path = next((project / "results").rglob("*.json"))
    bundle = path.with_name(path.stem + BUNDLE_SUFFIX)
    bundle.write_text('{"not": "a real bundle"}', encoding="utf-8")
    reads.clear()
    cached(project)
    assert reads.checked == [path.name] and bundle.name in reads.hashed
    bundle.unlink()
    reads.clear()
    cached(project)
    assert reads.checked == [path.name]
    reads.clear()
    cached(project)
    assert reads.checked == []


def test_the_build_context_is_made_from_the_code_of_the_checks_and_the_rows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Two package moves once left the context reading no code at all: an upgraded epbench
    # then reused outcomes and rows its old code had made.
    names = [name for name, _ in build_cache.code_files()]
    for module in ("epbench/core/strict_json.py", "epbench/generator/tables.py",
                   "epbench/generator/checks/__init__.py",
                   "epbench/generator/build/build_cache.py"):
        assert module in names
    code = tmp_path / "tables.py"
    code.write_text("RULES = 1\n", encoding="utf-8")
    monkeypatch.setattr(build_cache, "code_files", lambda: [("epbench/generator/tables.py", code)])
    before = build_cache.context_digest(tmp_path)
    code.write_text("RULES = 2\n", encoding="utf-8")
    assert build_cache.context_digest(tmp_path) != before


def test_the_split_shared_with_a_forked_process_records_what_that_process_found(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    import epbench.generator.build.cached_checks as cached_checks
    from epbench.generator.build.cache_writer import wait_saved

    monkeypatch.setattr(cached_checks, "SPLIT_FORK_MIN", 2)  # every split forks
    monkeypatch.setattr(build_cache, "SETTLED_NS", -3600 * 10**9)
    reads = Reads(monkeypatch)
    first = cached(project)
    for path in (project / "results").rglob("*"):
        if path.is_file():
            path.write_bytes(path.read_bytes())  # new stats: each entry is to be re-recorded
    second = cached(project)
    assert_same_tables(second, first)
    wait_saved()
    cache = build_cache.BuildCache.open(folder_of(project), project)
    cache.read_shards()
    results = project / "results"
    entries = {rel: entry for shard in cache.shards.values() for rel, entry in shard.items()}
    assert len(entries) == len(list(results.rglob("*.json")))
    for rel, entry in entries.items():  # the forked half's new stats too
        assert entry["stat"] == build_cache.stat_key(os.lstat(results / rel)), rel
    last = sorted(results.rglob("*.json"))[-1]  # in the half the forked process looks at
    before = os.stat(last)
    text = last.read_text()
    doc = json.loads(text)
    last.write_text(text.replace(doc["run_id"], doc["run_id"][::-1], 1))
    os.utime(last, ns=(before.st_atime_ns, before.st_mtime_ns))
    reads.clear()
    third = cached(project)
    assert reads.checked == [last.name]
    assert doc["run_id"] not in set(third.runs["run_id"])
    assert_same_tables(third, build_tables(results, project))
