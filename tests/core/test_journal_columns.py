"""A journal's request lines held as columns (epbench.core.journal_columns) read back as the
lines they were, and the one summarizer gives the same figures from them as from dicts."""

from __future__ import annotations

import random
from array import array
from pathlib import Path
from typing import Any

import orjson
import pytest

from epbench.core import evidence
from epbench.core.journal_columns import Requests, Row
from epbench.core.runspec import PointSpec, RunSpec
from epbench.core.summary import summarize_run

MS = 1_000_000


def request(seq: int, point: str = "c1", **extra: Any) -> dict[str, Any]:
    t = 10_000 * MS + seq * 400 * MS
    line: dict[str, Any] = {
        "request_id": f"{point}-{seq:05d}", "point": point, "seq": seq, "warmup": seq == 0,
        "t_scheduled_ns": None, "t_send_ns": t, "t_first_ns": t + 30 * MS,
        "t_first_answer_ns": t + 30 * MS, "t_last_ns": t + 200 * MS, "t_done_ns": t + 201 * MS,
        "input_tokens": 60 + seq % 7, "input_source": "usage", "input_requested": 64,
        "output_tokens": 32, "token_source": "usage", "reasoning_tokens": None,
        "status": 200, "class": "ok", "error": None,
        "itl_us": [random.Random(seq).randint(0, 9000) for _ in range(31)],
        "attempts": 1, "retry_s": 0.0, "retry_tokens": 0,
        "response_id": f"chatcmpl-{seq:024x}", "server_headers": {"server": "vllm"},
        "content_bytes": 180, "tool_calls": 0, "sse_events": 34,
    }
    line.update(extra)
    return line


def test_a_row_reads_back_every_key_and_value_of_its_line() -> None:
    table = Requests()
    line = request(3)
    row = table.append(line)
    assert {**row, "itl_us": list(row["itl_us"])} == line
    assert set(row) == set(line)
    assert len(row) == len(line)
    assert row["t_scheduled_ns"] is None
    assert row["retry_s"] == 0.0 and type(row["retry_s"]) is float
    assert row["warmup"] is False


def test_inter_token_gaps_come_back_as_the_smallest_integer_array_that_holds_them() -> None:
    table = Requests()
    for gaps, code in (([0, 0, 255, 3], "B"), ([0, 9000, 65535], "H"), ([5, 70_000], "i"),
                       ([-1, 4000], "i"), ([1, 2**40, 3], "q"), ([], "B")):
        row = table.append(request(1, itl_us=gaps))
        assert isinstance(row["itl_us"], array) and row["itl_us"].typecode == code
        assert list(row["itl_us"]) == gaps


def test_gaps_that_are_not_plain_integers_are_kept_as_they_are() -> None:
    table = Requests()
    table.append(request(0))
    for odd in ([1, 2.5], [True, 2], [2**70], "fast", None):
        assert table.append(request(1, itl_us=odd))["itl_us"] == odd


def test_a_key_one_line_lacks_is_absent_from_its_row_only() -> None:
    table = Requests()
    first = table.append({k: v for k, v in request(0).items() if k != "response_id"})
    second = table.append(request(1))
    assert "response_id" not in first
    assert first.get("response_id", "none") == "none"
    with pytest.raises(KeyError):
        first["response_id"]
    assert second["response_id"] == request(1)["response_id"]
    assert "response_id" in second


def test_a_value_of_an_unexpected_type_is_kept_as_it_is() -> None:
    table = Requests()
    table.append(request(0))
    line = request(1, t_send_ns=1.5, status=True, error="boom", output_tokens=-(2**63))
    line["seq"] = "one"
    row = table.append(line)
    assert row["t_send_ns"] == 1.5 and type(row["t_send_ns"]) is float
    assert row["seq"] == "one"
    assert row["status"] is True
    assert row["error"] == "boom"
    assert row["output_tokens"] == -(2**63)


def test_a_line_whose_first_value_is_none_still_stores_later_integers_as_integers() -> None:
    table = Requests()
    table.append(request(0, t_first_ns=None, itl_us=None, **{"class": "error"}))
    row = table.append(request(1))
    assert row["t_first_ns"] == request(1)["t_first_ns"]
    assert list(row["itl_us"]) == request(1)["itl_us"]
    assert table.append(request(2, itl_us=None))["itl_us"] is None


def test_setting_a_key_on_a_row_changes_that_row_alone() -> None:
    table = Requests()
    rows = [table.append(request(i)) for i in range(3)]
    rows[1]["_session"] = 2
    assert rows[1]["_session"] == 2
    assert "_session" not in rows[0] and "_session" not in rows[2]
    del rows[1]["_session"]
    assert "_session" not in rows[1]


def test_a_rows_header_block_reads_back_as_its_own_copy() -> None:
    table = Requests()
    a, b = table.append(request(0)), table.append(request(1, server_headers={"x-id": "r1"}))
    first = a["server_headers"]
    first["server"] = "changed"
    assert a["server_headers"] == {"server": "vllm"}
    assert b["server_headers"] == {"x-id": "r1"}
    assert table.append(request(2))["server_headers"] == {"server": "vllm"}


def journal(tmp_path: Path) -> tuple[Path, bytes, RunSpec]:
    spec = RunSpec(pattern="concurrency", seed=5,
                   points=[PointSpec(id="c1", index=0, concurrency=1),
                           PointSpec(id="c2", index=1, concurrency=2)],
                   slo={"ttft_ms": 2000.0, "tpot_ms": 50.0})
    lines: list[dict[str, Any]] = [{"type": "run", "spec": spec.to_json()},
                                   {"type": "session", "t_ns": 9_000 * MS, "at": "x"}]
    lines += [request(i, "c1") for i in range(40)]
    lines.append({"type": "session", "t_ns": 40_000 * MS, "at": "y"})
    lines += [request(i, "c2", **({"class": "timeout", "t_first_ns": None} if i % 9 == 4
                                  else {})) for i in range(40)]
    data = b"".join(orjson.dumps(x) + b"\n" for x in lines)
    path = tmp_path / "events.jsonl"
    path.write_bytes(data)
    return path, data, spec


def test_the_summarizer_gives_the_same_figures_from_rows_as_from_dicts(tmp_path: Path) -> None:
    path, data, spec = journal(tmp_path)
    loaded = evidence.load(path, evidence.describe(data))
    assert any(isinstance(r, Row) for r in loaded)
    from_rows = summarize_run(spec, loaded)
    from_dicts = summarize_run(spec, [orjson.loads(x) for x in data.splitlines()])
    assert from_rows == from_dicts
    assert from_rows["points"][1]["itl_ms"]["n"] > 0


def test_a_last_line_without_a_newline_counts_toward_the_plans_request_bound(
        tmp_path: Path) -> None:
    path, data, _ = journal(tmp_path)
    cut = data.rstrip(b"\n")
    path.write_bytes(cut)
    with pytest.raises(evidence.EvidenceError, match="more request lines than the 79"):
        evidence.load(path, evidence.describe(cut), max_requests=79)
    assert len(evidence.load(path, evidence.describe(cut), max_requests=80)) == len(
        data.splitlines())
