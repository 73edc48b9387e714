"""The SSE decoder: events split anywhere, line endings, multi-line data, comments."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from epbench.runner.sse import SSEDecoder

STREAM = (
    b": keep-alive comment\n\n"
    b'data: {"choices":[{"delta":{"role":"assistant","content":""}}]}\n\n'
    b'data: {"choices":[{"delta":{"content":"h\xc3\xa9llo \xe2\x82\xac"}}]}\r\n\r\n'
    b"event: message\nid: 7\ndata: first line\ndata: second line\n\n"
    b"data:no-space\r\rdata: [DONE]\n\n"
)
EXPECTED = [
    '{"choices":[{"delta":{"role":"assistant","content":""}}]}',
    '{"choices":[{"delta":{"content":"héllo €"}}]}',
    "first line\nsecond line",
    "no-space",
    "[DONE]",
]


def decode_in_pieces(data: bytes, cuts: list[int]) -> list[str]:
    decoder = SSEDecoder()
    out: list[str] = []
    start = 0
    for cut in sorted(set(cuts)):
        out += decoder.feed(data[start:cut])
        start = cut
    out += decoder.feed(data[start:])
    out += decoder.close()
    return out


def test_whole_stream_in_one_read_gives_every_event_in_order():
    assert decode_in_pieces(STREAM, []) == EXPECTED


def test_byte_by_byte_reads_give_the_same_events():
    decoder = SSEDecoder()
    out: list[str] = []
    for i in range(len(STREAM)):
        out += decoder.feed(STREAM[i : i + 1])
    out += decoder.close()
    assert out == EXPECTED


def test_a_multibyte_character_split_across_reads_decodes_whole():
    event = "data: €uro\n\n".encode()
    cut = event.index(b"\xe2") + 1  # inside the three bytes of the euro sign
    assert decode_in_pieces(event, [cut]) == ["€uro"]


def test_crlf_split_between_cr_and_lf_is_one_line_end():
    data = b"data: a\r\n\r\ndata: b\r\n\r\n"
    assert decode_in_pieces(data, [8]) == ["a", "b"]  # cut right after the first \r


def test_lone_cr_line_ends_finish_an_event():
    assert decode_in_pieces(b"data: x\r\r", []) == ["x"]


def test_comments_and_unknown_fields_alone_give_no_event():
    assert decode_in_pieces(b": ping\n\nevent: x\nretry: 10\n\n", []) == []


def test_an_event_whose_blank_line_never_came_is_returned_at_close():
    assert decode_in_pieces(b"data: tail\n", []) == ["tail"]


def test_a_line_cut_mid_way_is_dropped_at_close():
    # What a dropped connection leaves: half a JSON object must not pass as an event.
    assert decode_in_pieces(b'data: ok\n\ndata: {"choices":[{"del', []) == ["ok"]


def test_data_with_colon_and_no_value_is_an_empty_payload():
    assert decode_in_pieces(b"data\n\n", []) == [""]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=40))
def test_any_split_of_the_stream_gives_the_same_events(cuts):
    assert decode_in_pieces(STREAM, cuts) == EXPECTED


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.text(
            alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
            max_size=30,
        ),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from([b"\n", b"\r\n", b"\r"]),
    st.lists(st.integers(min_value=0, max_value=400), max_size=20),
)
def test_random_payloads_line_endings_and_splits_round_trip(payloads, newline, cuts):
    data = b"".join(b"data: " + p.encode() + newline + newline for p in payloads)
    cuts = [c for c in cuts if c <= len(data)]
    assert decode_in_pieces(data, cuts) == payloads


def test_an_event_past_its_cap_raises_event_too_large_and_smaller_ones_pass():
    import pytest

    from epbench.runner.sse import EventTooLarge

    decoder = SSEDecoder(max_event_bytes=1024)
    assert decoder.feed(b"data: " + b"a" * 900 + b"\n\n") == ["a" * 900]
    decoder.feed(b"data: " + b"b" * 600)
    with pytest.raises(EventTooLarge):
        decoder.feed(b"b" * 600)
