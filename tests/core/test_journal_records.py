"""The journal's record types (epbench.core.journal_records), its one writer and reader
(epbench.core.journal_file) and its one decoder (epbench.core.strict_json)."""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import orjson
import pytest

from epbench.core import journal_lines
from epbench.core.errors import RunError
from epbench.core.journal_file import Journal, JournalLineError, read_lines
from epbench.core.journal_records import (
    RUN_JOURNAL,
    SUFFIX,
    AgenticRequestLine,
    RequestLine,
    TrialLine,
    run_line,
    session_line,
)
from epbench.core.strict_json import Refused, decode, loads_text
from epbench.runner.plan import PlannedRequest
from epbench.runner.response import ChatResponse
from epbench.runner.run_folder import JOURNAL_FILE
from epbench.runner.runner import make_record


def _request_line() -> RequestLine:
    req = PlannedRequest("c1-00003", "c1", 3, False, 64)
    res = ChatResponse()
    res.t_send_ns, res.t_done_ns, res.status = 1_000, 9_000, 200
    return make_record(req, res, None, 1, 0.0, 0)


def test_the_runner_writes_request_lines_holding_exactly_the_request_line_type_keys() -> None:
    assert set(_request_line()) == set(RequestLine.__required_keys__)
    # a trace request also says how many output tokens it asked for
    req = PlannedRequest("trace-00003", "trace", 3, False, 64, 0.25, max_tokens=12)
    res = ChatResponse()
    res.t_send_ns, res.t_done_ns, res.status = 1_000, 9_000, 200
    trace = make_record(req, res, 5_000, 1, 0.0, 0)
    assert set(trace) == set(RequestLine.__annotations__) and trace["output_requested"] == 12


@pytest.mark.parametrize(("record", "fields"), [
    (RequestLine, {**journal_lines.REQUEST_FIELDS, **journal_lines.SERVER_FIELDS,
                   **journal_lines.STREAMED_FIELDS}),
    (AgenticRequestLine, {**journal_lines.AGENTIC_REQUEST_FIELDS, **journal_lines.STREAMED_FIELDS}),
    (TrialLine, journal_lines.TRIAL_FIELDS),
])
def test_every_field_validation_requires_of_a_line_kind_is_typed_alike_in_its_record(
        record: Any, fields: dict[str, Any]) -> None:
    hints = typing.get_type_hints(record)
    for name, wanted in fields.items():
        typed = typing.get_args(hints[name]) or (hints[name],)
        wanted_types = wanted if isinstance(wanted, tuple) else (wanted,)
        assert {t.__name__ for t in wanted_types} <= {getattr(t, "__origin__", t).__name__
                                                      for t in typed}, name


def test_a_request_line_made_by_the_runner_passes_the_strict_reader() -> None:
    line = orjson.dumps(_request_line())
    [(number, record)] = list(read_lines([line + b"\n"], strict=True))
    assert (number, record["request_id"]) == (1, "c1-00003")


def test_a_run_line_holds_a_spec_or_an_agentic_plan_and_never_both_or_neither() -> None:
    assert run_line(spec={"points": []}) == {"type": "run", "spec": {"points": []}}
    assert run_line(agentic={"tasks": []}) == {"type": "run", "agentic": {"tasks": []}}
    for wrong in ({}, {"spec": {}, "agentic": {}}):
        with pytest.raises(ValueError, match="exactly one"):
            run_line(**wrong)


def test_the_run_folder_journal_and_the_published_suffix_are_the_one_pair_of_names() -> None:
    assert JOURNAL_FILE == RUN_JOURNAL
    assert SUFFIX == "." + RUN_JOURNAL + ".gz"


def test_a_session_line_keeps_its_round_trips_rounded_and_omits_none() -> None:
    assert session_line(5, [1.234567])["rtt_ms"] == [1.2346]
    assert "rtt_ms" not in session_line(5)


@pytest.mark.parametrize(("text", "reason"), [
    (b'{"a": NaN}', "non-finite"),
    (b'{"a": -Infinity}', "non-finite"),
    (b'{"a": 1e999}', "non-finite"),
    (b'{"a": 1, "a": 2}', "duplicate"),
    (b'{"a": {"b": 1, "b": 1}}', "duplicate"),
    (b'{"a": [1, 2}', "syntax"),
    (b'[[[[[1]]]]]', "depth"),
])
def test_the_decoder_refuses_nan_infinity_duplicate_keys_bad_syntax_and_deep_nesting(
        text: bytes, reason: str) -> None:
    with pytest.raises(Refused) as refused:
        decode(text, 4)
    assert refused.value.reason == reason


def test_the_exact_decoder_refuses_what_the_fast_one_does_and_can_leave_overflow_to_its_caller(
) -> None:
    for text in ('{"a": NaN}', '{"a": 1, "a": 2}', '{"a": 1e999}'):
        with pytest.raises(Refused):
            loads_text(text)
    assert loads_text('{"a": 1e999}', finite=False) == {"a": float("inf")}
    assert decode(b'{"a": [1, {"b": "x:y{"}]}', 4) == {"a": [1, {"b": "x:y{"}]}


def test_the_tolerant_reader_drops_a_torn_last_line_and_the_strict_one_refuses_it() -> None:
    data = [b'{"type": "session", "t_ns": 1, "at": "x"}\n{"request_id": "c1-0']
    assert [r["type"] for _, r in read_lines(data, strict=False)] == ["session"]
    with pytest.raises(JournalLineError, match="journal line 2 is not JSON"):
        list(read_lines(data, strict=True))


def test_both_readers_refuse_a_duplicate_key_inside_the_journal(tmp_path: Path) -> None:
    data = b'{"type": "session", "type": "shard"}\n{"type": "shard"}\n'
    with pytest.raises(JournalLineError, match="journal line 1 repeats a key"):
        list(read_lines([data], strict=False))
    path = tmp_path / RUN_JOURNAL
    path.write_bytes(data)
    damaged = r"events.jsonl: journal line 1 repeats a key .*; the journal is damaged"
    with pytest.raises(RunError, match=damaged):
        Journal.read(path)


def test_only_the_strict_reader_refuses_a_line_of_an_unknown_kind() -> None:
    data = [b'{"type": "gossip"}\n']
    assert [r for _, r in read_lines(data, strict=False)] == [{"type": "gossip"}]
    with pytest.raises(JournalLineError, match="not a kind of journal line"):
        list(read_lines(data, strict=True))


def test_the_writer_removes_the_run_key_wherever_it_lands_and_reads_back(tmp_path: Path) -> None:
    key = "sk-test-" + "q" * 30
    path = tmp_path / RUN_JOURNAL
    with Journal(path, [key]) as journal:
        journal.append(run_line(spec={"note": f"carried {key}"}))
        journal.start_session([0.5])
    text = path.read_text()
    assert key not in text and text.count("[redacted]") == 1
    assert [r["type"] for r in Journal.read(path)] == ["run", "session"]
