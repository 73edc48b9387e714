"""A page worker renders its rows a batch at a time: before the shell page exists it keeps
them, once the shell is there it writes each batch as it is rendered, and after a failed
build (an abort file instead of a shell) it writes nothing. Every way gives the same pages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from epbench.generator import run_pages
from epbench.generator.run_pages import SHELL_TITLE, Shell, _render_and_write, render_and_write
from tests.conftest import ROOT

SAMPLE = ROOT / "tests" / "data/results/alice/acme-llama-8b/" \
    "2026-11-20-chat-short-a1b2c3d4.json"
SHELL = Shell(f"<html><head><title>{SHELL_TITLE}</title></head><body>\n",
              f"\n<footer>{SHELL_TITLE}</footer></body></html>")


def rows(results: Path, count: int) -> list[dict]:
    doc = json.loads(SAMPLE.read_text(encoding="utf-8"))
    out = []
    for i in range(count):
        run_id = f"run-{i:04d}-abcdefgh"
        (results / "alice").mkdir(parents=True, exist_ok=True)
        (results / "alice" / f"{run_id}.json").write_text(json.dumps({**doc, "run_id": run_id}),
                                                          encoding="utf-8")
        out.append({"run_id": run_id, "result_path": f"results/alice/{run_id}.json",
                    "disclosure_score": 0.9, "rankable": True, "frontier": ["c1"]})
    return out


def pages(site: Path) -> dict[str, bytes]:
    return {str(p.relative_to(site)): p.read_bytes() for p in sorted(site.rglob("*"))
            if p.is_file()}


def shell_file(folder: Path) -> Path:
    path = folder / "shell"
    path.write_text(json.dumps({"head": SHELL.head, "tail": SHELL.tail}), encoding="utf-8")
    return path


def test_batches_written_once_the_shell_exists_are_the_pages_of_one_pass(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = rows(tmp_path / "results", 5)
    assert render_and_write(made, tmp_path / "results", tmp_path / "one", SHELL) == 5
    monkeypatch.setattr(run_pages, "_BATCH", 2)
    calls: list[int] = []
    write = run_pages._write_pages_out
    monkeypatch.setattr(run_pages, "_write_pages_out",
                        lambda bodies, *a: calls.append(len(bodies)) or write(bodies, *a))
    assert _render_and_write(made, tmp_path / "results", tmp_path / "batched",
                             shell_file(tmp_path)) == 5
    assert calls == [2, 2, 1, 0]  # each batch as it is rendered
    assert pages(tmp_path / "batched") == pages(tmp_path / "one")
    assert len(pages(tmp_path / "one")) == 10  # a page and a raw copy per result


def test_a_worker_keeps_its_pages_until_the_shell_exists_and_writes_none_after_an_abort(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = rows(tmp_path / "results", 3)
    monkeypatch.setattr(run_pages, "_BATCH", 1)
    missing = tmp_path / "never"
    missing.with_suffix(".abort").write_text("", encoding="utf-8")
    assert _render_and_write(made, tmp_path / "results", tmp_path / "aborted", missing) == 0
    assert not (tmp_path / "aborted").exists()
    late = tmp_path / "late"
    slept: list[float] = []

    def shell_appears(seconds: float) -> None:  # the shell comes while the worker waits
        slept.append(seconds)
        shell_file(tmp_path).replace(late)

    monkeypatch.setattr(run_pages.time, "sleep", shell_appears)
    assert _render_and_write(made, tmp_path / "results", tmp_path / "waited", late) == 3
    assert slept == [0.05]
    render_and_write(made, tmp_path / "results", tmp_path / "one", SHELL)
    assert pages(tmp_path / "waited") == pages(tmp_path / "one")
