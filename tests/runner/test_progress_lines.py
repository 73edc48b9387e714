"""Progress without a terminal never goes quiet, says "interrupted" when Ctrl-C ends a point,
counts trials and requests apart, and counts what earlier sessions of a resumed run did."""

from __future__ import annotations

import asyncio
import time

import pytest

from epbench.runner import progress
from epbench.runner.progress import PointProgress

OK = {"class": "ok", "t_send_ns": 0, "t_first_ns": 20_000_000}


def test_a_line_comes_at_least_every_5_s_while_no_request_finishes(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert progress.QUIET_S <= 5.0
    monkeypatch.setattr(progress, "QUIET_S", 0.6)  # the same rule, faster
    bar = PointProgress("chat-short c1", 34, "lines")
    time.sleep(1.5)
    bar.close()
    lines = capsys.readouterr().err.splitlines()
    assert any(": running, 0/34 requests" in line for line in lines), lines
    assert lines[-1].startswith("epbench: chat-short c1: done, 0/34 requests")


def test_ctrl_c_ends_a_point_with_interrupted_not_done(capsys: pytest.CaptureFixture[str]):
    bar = PointProgress("chat-short c1", 34, "lines")
    for _ in range(11):
        bar.update(OK)
    with pytest.raises(KeyboardInterrupt):
        try:
            raise KeyboardInterrupt
        finally:
            bar.close()
    err = capsys.readouterr().err
    assert "interrupted, 11/34 requests" in err and "done" not in err


def test_a_cancelled_point_says_interrupted(capsys: pytest.CaptureFixture[str]) -> None:
    async def point() -> None:
        bar = PointProgress("w c4", 8, "lines")
        try:
            await asyncio.sleep(10)
        finally:
            bar.close()

    async def go() -> None:
        task = asyncio.create_task(point())
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    assert "w c4: interrupted, 0/8 requests" in capsys.readouterr().err


def test_agentic_progress_counts_trials_and_the_requests_they_sent_apart(
        capsys: pytest.CaptureFixture[str]) -> None:
    bar = PointProgress("weather-single-call", 6, "lines", unit="trials")
    for sent in (4, 4, 3, 5, 4, 4):
        bar.update({"class": "ok", "requests": sent})
    bar.close()
    assert "done, 6/6 trials (24 requests), 0 ended in an error" in capsys.readouterr().err


def test_counts_after_a_resume_include_the_earlier_sessions(
        capsys: pytest.CaptureFixture[str]) -> None:
    bar = PointProgress("chat-short c1", 8, "lines", done_before=6)
    bar.update(OK)
    bar.update(OK)
    bar.close()
    assert "done, 8/8 requests" in capsys.readouterr().err
    agentic = PointProgress("retail-refund", 8, "lines", done_before=6, unit="trials",
                            requests_before=20)
    agentic.update({"class": "ok", "requests": 3})
    agentic.close()
    assert "done, 7/8 trials (23 requests)" in capsys.readouterr().err
