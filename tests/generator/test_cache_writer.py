"""The build cache is written by a forked child: the parent goes on at once, waits for it
before the next build, and a writer that fails is reported, not fatal."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from epbench.generator.build.cache_writer import save_in_background, wait_saved


class SlowCache:
    def __init__(self, folder: Path, fail: bool = False) -> None:
        self.folder, self.fail = folder, fail

    def save(self) -> None:
        time.sleep(0.5)
        if self.fail:
            raise OSError("disk full")
        (self.folder / "shard-00.json").write_text("written by the child", encoding="utf-8")


def test_the_parent_goes_on_while_the_child_writes_and_waits_for_it(tmp_path: Path) -> None:
    start = time.monotonic()
    save_in_background(SlowCache(tmp_path))
    assert time.monotonic() - start < 0.4  # not waiting on the writer
    assert wait_saved()
    assert (tmp_path / "shard-00.json").read_text(encoding="utf-8") == "written by the child"
    assert wait_saved()  # nothing left to wait for


def test_a_writer_that_fails_is_a_warning_and_the_build_goes_on(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    save_in_background(SlowCache(tmp_path, fail=True))
    with caplog.at_level(logging.WARNING, logger="epbench.generator.build.cache_writer"):
        assert not wait_saved()
    assert "the cache was not written" in caplog.text
    assert not (tmp_path / "shard-00.json").exists()
