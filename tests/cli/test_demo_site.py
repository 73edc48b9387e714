"""What the demo says about its site: how to serve it on loopback only, and that a later
`epbench build` into the same folder replaces it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from epbench.cli import main
from epbench.demo import DEMO_MARK, serve_hint
from tests.conftest import ROOT


def test_the_demos_serve_hint_binds_the_server_to_loopback(tmp_path: Path) -> None:
    hint = serve_hint(tmp_path / "_site")
    assert "python -m http.server --bind 127.0.0.1 -d " in hint
    assert str(tmp_path / "_site") in hint


def test_the_demo_prints_the_loopback_hint() -> None:
    source = (ROOT / "epbench" / "demo.py").read_text(encoding="utf-8")
    assert "click.echo(serve_hint(site))" in source
    assert source.count("http.server") == source.count("http.server --bind 127.0.0.1") + 1


def _build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> str:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EPBENCH_CACHE_DIR", str(tmp_path.parent / f"{tmp_path.name}-cache"))
    (tmp_path / "results").mkdir(exist_ok=True)
    outcome = CliRunner().invoke(main, ["build", *args])
    assert outcome.exit_code == 0, outcome.output
    return outcome.output


def test_building_over_the_demos_site_says_in_one_line_that_it_replaces_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "_site"
    site.mkdir()
    (site / DEMO_MARK).write_text(str(tmp_path / "runs" / "demo-results"), encoding="utf-8")
    output = _build(tmp_path, monkeypatch)
    notes = [line for line in output.splitlines() if "the demo's site" in line]
    assert len(notes) == 1, output
    assert notes[0].startswith(f"epbench build: {site} held the demo's site")
    assert f"it now holds the site of {tmp_path / 'results'}" in notes[0]
    assert not (site / DEMO_MARK).exists()
    # said once: the folder is an ordinary site from then on
    assert "the demo's site" not in _build(tmp_path, monkeypatch)


def test_rebuilding_the_demos_own_results_says_nothing_about_the_demo(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "_site"
    site.mkdir()
    (site / DEMO_MARK).write_text(str(tmp_path / "results"), encoding="utf-8")
    assert "the demo's site" not in _build(tmp_path, monkeypatch)
