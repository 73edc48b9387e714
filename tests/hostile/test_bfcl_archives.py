"""Issue 21, "the BFCL importer trusts the sizes a zip declares": a member declaring 100 bytes
inflated 200 MB in memory, and bad archives ended in tracebacks. Each hostile archive or data
file below is now one `InputError` line through `epbench import bfcl PATH --out DIR`, and the
bomb is refused with the process's peak memory far below what it inflates to."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from attack import ROOT

DATA = "bfcl_eval/data/"
QUESTION = {"id": "simple_python_0", "question": [[{"role": "user", "content": "Area of a 3-4-5 "
                                                                             "triangle?"}]],
            "function": [{"name": "math.area", "description": "Area.",
                          "parameters": {"type": "dict", "properties": {
                              "base": {"type": "integer"}}, "required": ["base"]}}]}
ANSWER = {"id": "simple_python_0", "ground_truth": [{"math.area": {"base": [3]}}]}
INFLATED = 200 * 1024 * 1024


def run_import(path: Path, out: Path) -> tuple[subprocess.CompletedProcess[str], int]:
    """`epbench import bfcl PATH --out DIR`, and the child's own peak RSS in bytes (wait4)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    args = [sys.executable, "-m", "epbench.cli", "import", "bfcl", str(path), "--out", str(out)]
    streams = out.parent / "stdout.txt", out.parent / "stderr.txt"
    with streams[0].open("w") as stdout, streams[1].open("w") as stderr:
        child = subprocess.Popen(args, env=env, stdout=stdout, stderr=stderr)
        _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    return subprocess.CompletedProcess(args, child.returncode, streams[0].read_text(),
                                       streams[1].read_text()), usage.ru_maxrss * 1024


def one_error_line(done: subprocess.CompletedProcess[str], *wanted: str) -> str:
    assert done.returncode == 1, (done.stdout, done.stderr[-3000:])
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("epbench: error: ")
    for text in wanted:
        assert text in lines[0], lines[0]
    return lines[0]


def wheel(path: Path, questions: bytes, answers: bytes | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(DATA + "BFCL_v4_simple_python.json", questions)
        archive.writestr(DATA + "possible_answer/BFCL_v4_simple_python.json",
                         answers if answers is not None else json.dumps(ANSWER).encode())
    return path


def bomb(path: Path, declared: int | None = None) -> Path:
    """A wheel whose questions member inflates to INFLATED bytes of spaces (valid JSON
    whitespace); with `declared`, its central directory says that size instead."""
    name = DATA + "BFCL_v4_simple_python.json"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open(name, "w") as member:
            block = b" " * (1 << 20)
            for _ in range(INFLATED >> 20):
                member.write(block)
        archive.writestr(DATA + "possible_answer/BFCL_v4_simple_python.json",
                         json.dumps(ANSWER).encode())
    if declared is not None:
        raw = bytearray(path.read_bytes())
        central = raw.find(b"PK\x01\x02")  # the first central directory entry: this member
        assert raw[central + 46:central + 46 + len(name)] == name.encode()
        struct.pack_into("<I", raw, central + 24, declared)  # its uncompressed size
        path.write_bytes(bytes(raw))
        assert zipfile.ZipFile(path).getinfo(name).file_size == declared
    return path


@pytest.mark.parametrize("declared", [None, 100], ids=["honest-size", "declares-100-bytes"])
def test_a_zip_bomb_member_is_one_line_and_never_inflated_whole(tmp_path: Path,
                                                                declared: int | None) -> None:
    control = wheel(tmp_path / "small.whl", json.dumps(QUESTION).encode())
    _, base = run_import(control, tmp_path / "control")  # the interpreter and its imports
    path = bomb(tmp_path / "bfcl_eval-1.0-py3-none-any.whl", declared)
    assert path.stat().st_size < 2 * 1024 * 1024  # 200 MB in under 2 MB
    done, peak = run_import(path, tmp_path / "out")
    line = one_error_line(done, str(path), "BFCL_v4_simple_python.json")
    if declared is None:
        assert "over 64 MiB once inflated" in line
    else:  # reading stops at the 100 bytes it declares; their CRC is not the one recorded
        assert "damaged archive member" in line or "not JSON" in line
    # above the control: the honest bomb holds the 64 MiB read before the limit, the lying
    # one a block; inflating the member whole would add 200 MiB
    extra = (64 << 20 if declared is None else 0) + (48 << 20)
    assert base > 0 and peak < base + extra, \
        f"peak RSS {peak / 2**20:.0f} MiB against {base / 2**20:.0f} MiB for a small wheel"
    print(f"bomb ({'declared ' + str(declared) if declared else 'honest size'}): peak RSS "
          f"{peak / 2**20:.0f} MiB (a small wheel: {base / 2**20:.0f} MiB) for a member "
          f"inflating to {INFLATED >> 20} MiB")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_truncated_zip_is_one_line(tmp_path: Path) -> None:
    good = wheel(tmp_path / "good.whl", (json.dumps(QUESTION) + "\n").encode() * 200)
    for cut in (len(good.read_bytes()) // 2, len(good.read_bytes()) - 10):
        path = tmp_path / f"cut-{cut}.whl"
        path.write_bytes(good.read_bytes()[:cut])
        done, _ = run_import(path, tmp_path / "out")
        one_error_line(done, str(path), "not a wheel (zip) file")


def test_a_member_whose_data_is_cut_short_is_one_line(tmp_path: Path) -> None:
    path = wheel(tmp_path / "short.whl", (json.dumps(QUESTION) + "\n").encode() * 500)
    raw = bytearray(path.read_bytes())
    info = zipfile.ZipFile(path).getinfo(DATA + "BFCL_v4_simple_python.json")
    start = info.header_offset + 30 + len(info.filename)
    raw[start + 20:start + info.compress_size] = os.urandom(info.compress_size - 20)
    path.write_bytes(bytes(raw))
    done, _ = run_import(path, tmp_path / "out")
    one_error_line(done, str(path), "damaged archive member")


def test_a_file_that_is_not_a_zip_is_one_line(tmp_path: Path) -> None:
    for name, data in (("text.whl", b"not a zip at all\n"), ("empty.whl", b""),
                       ("pk-only.whl", b"PK\x05\x06" + b"\0" * 10)):
        path = tmp_path / name
        path.write_bytes(data)
        done, _ = run_import(path, tmp_path / "out")
        one_error_line(done, str(path), "not a wheel (zip) file")


@pytest.mark.parametrize(("questions", "answers", "wanted"), [
    (b'{"id": "simple_python_0", "question": \n', None, "line 1: not JSON"),
    (b"\xff\xfe not utf-8", None, "not UTF-8"),
    (b"[" * 100_000 + b"]" * 100_000, None, "line 1"),
    (b'["a list, not an entry"]', None, "line 1: /: expected an object"),
    (json.dumps({**QUESTION, "question": "text"}).encode(), None, "/question: expected an array"),
    (json.dumps({**QUESTION, "function": [{"name": 7}]}).encode(), None,
     "/function/0/name: expected a string"),
    (json.dumps({**QUESTION, "function": [{"name": "f", "parameters": {"properties": {
        "x": {"type": "integer", "minimum": "zero"}}}}]}).encode(), None,
     "/function/0/parameters/properties/x/minimum: expected a number"),
    (json.dumps({**QUESTION, "question": [[{"role": "user", "content": ["a"]}]]}).encode(),
     None, "/question/0/0/content: expected a string"),
    (json.dumps(QUESTION).encode(), json.dumps({"id": "simple_python_0",
                                                "ground_truth": [{"a": {}, "b": {}}]}).encode(),
     "/ground_truth/0: expected one function name, found 2"),
    (json.dumps(QUESTION).encode(), json.dumps({"id": "simple_python_0", "ground_truth": [
        {"math.area": {"base": 3}}]}).encode(),
     "/ground_truth/0/math.area/base: expected an array"),
    (json.dumps(QUESTION).encode(), b"null", "possible_answer/BFCL_v4_simple_python.json line 1"),
], ids=["cut-json", "not-utf8", "deep", "list", "question-text", "name-number", "minimum-text",
        "content-list", "two-calls", "values-not-list", "answer-null"])
def test_bad_json_lines_and_wrong_shapes_are_one_line(tmp_path: Path, questions: bytes,
                                                      answers: bytes | None,
                                                      wanted: str) -> None:
    path = wheel(tmp_path / "bad.whl", questions, answers)
    done, _ = run_import(path, tmp_path / "out")
    one_error_line(done, str(path), wanted)


def test_a_well_formed_small_wheel_still_imports(tmp_path: Path) -> None:
    """The control: the same helper's archive, well formed, imports (so the refusals above
    are the hostile bytes, not the helper)."""
    path = wheel(tmp_path / "bfcl_eval-1.0-py3-none-any.whl", json.dumps(QUESTION).encode())
    done = subprocess.run([sys.executable, "-m", "epbench.cli", "import", "bfcl", str(path),
                           "--out", str(tmp_path / "out")],
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True,
                          text=True, timeout=300)
    assert (tmp_path / "out" / "bfcl-simple-python.yaml").is_file()  # its one category
    assert done.returncode == 1  # then: the other nine categories are missing from this wheel
    assert "no BFCL_v4_multiple.json in the BFCL data" in done.stderr
    assert "Traceback" not in done.stderr
