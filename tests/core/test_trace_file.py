"""Reading request traces (epbench.core.trace_file): hand-written rows of both formats, and bad
input refused in one line naming the file and the line."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from epbench.core.errors import InputError
from epbench.core.trace_file import parse_trace

AZURE = (b"TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
         b"2023-11-16 18:17:03.9799600,4808,10\r\n"
         b"2023-11-16 18:17:04.0319600,3180,8\r\n"
         b"2023-11-16 18:18:03.9799601,12,0\r\n")
MOONCAKE = (b'{"timestamp": 0, "input_length": 1000, "output_length": 5, "hash_ids": [0, 1]}\n'
            b'{"timestamp": 2500, "input_length": 600, "output_length": 7, "hash_ids": [0, 2]}\n'
            b"\n")


def test_azure_rows_become_seconds_from_the_first_request_with_their_token_counts():
    trace = parse_trace(AZURE, "azure-csv", "a.csv")
    assert list(trace.times_s) == [0.0, 0.052, 60.0000001]
    assert list(trace.inputs) == [4808, 3180, 12] and list(trace.outputs) == [10, 8, 0]
    assert trace.hash_ids is None and len(trace) == 3


def test_mooncake_rows_keep_their_hash_ids_and_milliseconds_become_seconds():
    trace = parse_trace(MOONCAKE, "mooncake-jsonl", "m.jsonl")
    assert list(trace.times_s) == [0.0, 2.5]
    assert trace.hash_ids == [(0, 1), (0, 2)] and list(trace.inputs) == [1000, 600]


@pytest.mark.parametrize(("data", "fmt", "message"), [
    (b"TIME,ContextTokens,GeneratedTokens\n", "azure-csv",
     "a.csv:1: the header must be TIMESTAMP,ContextTokens,GeneratedTokens"),
    (AZURE + b"2023-11-16 18:19:00.1,5\n", "azure-csv", "a.csv:5: 2 fields where the header has 3"),
    (AZURE + b"2023-11-16 18:10:00.1,5,5\n", "azure-csv",
     "a.csv:5: TIMESTAMP goes backwards (a trace is in arrival order)"),
    (AZURE + b"2023-13-16 18:19:00.1,5,5\n", "azure-csv",
     "a.csv:5: TIMESTAMP is not a calendar date"),
    (AZURE + b"2023-11-16 18:19:00.1,-5,5\n", "azure-csv",
     "a.csv:5: ContextTokens must be an integer, not '-5'"),
    (AZURE + b"2023-11-16 18:19:00.1,0,5\n", "azure-csv",
     "a.csv:5: ContextTokens must be an integer from 1 to 10000000, not '0'"),
    (MOONCAKE + b"[1, 2]\n", "mooncake-jsonl", "m.jsonl:4: not a JSON object"),
    (MOONCAKE + b'{"timestamp": NaN}\n', "mooncake-jsonl", "m.jsonl:4: not a JSON object"),
    (b'{"timestamp": true, "input_length": 1, "output_length": 1, "hash_ids": []}\n',
     "mooncake-jsonl", "m.jsonl:1: timestamp must be milliseconds >= 0, not 'True'"),
    (b'{"timestamp": 1, "input_length": 600, "output_length": 1, "hash_ids": [1, 2, 3]}\n',
     "mooncake-jsonl", "m.jsonl:1: 3 hash ids for 600 input tokens (at most one per 512 tokens)"),
    (b'{"timestamp": 1, "input_length": 600, "output_length": 1, "hash_ids": ["a"]}\n',
     "mooncake-jsonl", "m.jsonl:1: hash_ids must be a list of at most 19532 integers >= 0"),
    (b"", "mooncake-jsonl", "m.jsonl: no requests"),
    (b"\x00", "azure-csv", "a.csv: holds a NUL byte; a trace is text"),
    (AZURE, "parquet", "a.csv: unknown trace format 'parquet' (one of mooncake-jsonl, azure-csv)"),
])
def test_a_bad_trace_is_refused_in_one_line_naming_the_file_and_line(data, fmt, message):
    name = "m.jsonl" if fmt == "mooncake-jsonl" else "a.csv"
    with pytest.raises(InputError) as caught:
        parse_trace(data, fmt, name)
    assert str(caught.value) == message


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300), st.sampled_from(["mooncake-jsonl", "azure-csv"]))
def test_any_bytes_parse_or_are_refused_with_one_line(data, fmt):
    try:
        trace = parse_trace(data, fmt, "t")
    except InputError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("t")
    else:
        assert len(trace) >= 1 and list(trace.times_s) == sorted(trace.times_s)
