"""The safe loader for untrusted JSON and YAML files."""

from __future__ import annotations

import pytest

from epbench.core.documents import MAX_DEPTH, DocumentError, load_document, parse_document


def problem(data: bytes, name: str) -> str:
    with pytest.raises(DocumentError) as info:
        parse_document(data, name)
    return info.value.problem.check


def test_json_with_duplicate_keys_is_refused():
    assert problem(b'{"a": 1, "a": 2}', "r.json") == "file.syntax"


def test_yaml_with_duplicate_keys_is_refused():
    assert problem(b"a: 1\na: 2\n", "w.yaml") == "file.syntax"


def test_nan_and_infinity_are_refused_with_their_pointer():
    with pytest.raises(DocumentError) as info:
        parse_document(b'{"x": {"y": [1, NaN]}}', "r.json")
    assert info.value.problem.check == "file.syntax"
    with pytest.raises(DocumentError) as info:
        parse_document(b"x:\n  y: [1, .inf]\n", "w.yaml")
    assert info.value.problem.check == "value.non-finite"
    assert info.value.problem.pointer == "/x/y/1"


def test_yaml_python_tags_are_never_constructed():
    data = b"a: !!python/object/apply:os.system ['echo pwned']\n"
    assert problem(data, "w.yaml") == "file.syntax"


def test_non_utf8_bytes_are_refused():
    assert problem(b'{"a": "\xff\xfe"}', "r.json") == "file.encoding"


def test_a_utf8_byte_order_mark_is_tolerated():
    assert parse_document(b'\xef\xbb\xbf{"a": 1}', "r.json") == {"a": 1}


def test_deep_nesting_is_refused_without_recursion_error():
    deep = b"[" * 100_000 + b"]" * 100_000
    assert problem(deep, "r.json") == "file.depth"
    shallow_enough = b"[" * MAX_DEPTH + b"]" * MAX_DEPTH
    assert parse_document(shallow_enough, "r.json") is not None


def test_oversized_files_are_refused_before_reading_them_whole(tmp_path):
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 2048)
    with pytest.raises(DocumentError) as info:
        load_document(big, limit=1024)
    assert info.value.problem.check == "file.size"
    assert "big.json" in str(info.value)


def test_truncated_json_names_line_and_column():
    with pytest.raises(DocumentError) as info:
        parse_document(b'{"a": [1, 2', "r.json")
    assert "line 1" in str(info.value)


def test_yaml_alias_bombs_are_refused_by_every_loader_before_expanding():
    bomb = b'a: &a ["x","x","x","x","x","x","x","x","x","x"]\n'
    for level in "bcdefghij":
        prev = chr(ord(level) - 1)
        bomb += f"{level}: &{level} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n".encode()  # noqa: E501
    assert problem(bomb, "w.yaml") == "file.aliases"


def test_deep_yaml_flow_nesting_is_refused_quickly():
    assert problem(b"a: " + b"[" * 3000 + b"]" * 3000 + b"\n", "w.yaml") == "file.depth"
