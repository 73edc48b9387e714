"""The journal keeps what the server said about each answer (its id, allow-listed headers),
never a cookie or a credential, and a run page shows it for the first request, escaped."""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path

import pytest

from epbench.core.journal_file import Journal
from epbench.core.server_evidence import ALLOWED, first_answer, line_problem, server_headers
from epbench.generator.render import result_context
from epbench.generator.run_pages import SHELL_DIR, SHELL_TITLE, Shell, render_and_write
from epbench.runner.client import EndpointClient
from epbench.runner.plan import PlannedRequest
from epbench.runner.runner import make_record
from tests.hostile_servers import LEAKED_KEY, hostile_server

ROOT = Path(__file__).resolve().parent.parent.parent
SAMPLE = ROOT / "tests/data/results/alice/acme-llama-8b/2026-11-20-chat-short-a1b2c3d4.json"
RUN_KEY = "sk-ant-api03-" + "Hq3Wm8ZpR2vL7xNc5TbY9kJd4FsG6aE1"


def test_only_allow_listed_headers_are_kept_and_none_that_looks_like_a_key() -> None:
    raw = [
        (b"Date", b"Tue, 01 Dec 2026 21:41:39 GMT"),
        (b"Set-Cookie", b"session=abc"),
        (b"Authorization", b"Bearer abcdefghijklmnopqrstuvwxyz"),
        (b"X-Request-Id", LEAKED_KEY.encode()),
        (b"request-id", b"req_011CSHoEeqs5C35K2UUqR7Fy"),
        (b"x-ratelimit-limit-requests", RUN_KEY[:20].encode()),  # a piece of the run's key
        (b"x-ratelimit-remaining-requests", b"499"),
        (b"x-ratelimit-remaining-requests", b"1"),  # repeated: the first wins
        (b"openai-processing-ms", b"x" * 200),  # too long
        (b"x-unknown", b"1"),
    ]
    assert server_headers(raw, (RUN_KEY,)) == {
        "date": "Tue, 01 Dec 2026 21:41:39 GMT",
        "request-id": "req_011CSHoEeqs5C35K2UUqR7Fy",
        "x-ratelimit-remaining-requests": "499",
    }
    assert not {"set-cookie", "authorization", "x-api-key", "cookie"} & ALLOWED


def test_a_hostile_servers_cookie_and_key_shaped_header_never_reach_the_journal(
    tmp_path: Path,
) -> None:
    async def main(port: int):
        client = EndpointClient(f"http://127.0.0.1:{port}/leaky-headers/v1", RUN_KEY, None,
                                10.0, 1)
        try:
            return await client.chat({"model": "m", "messages": [], "stream": True})
        finally:
            await client.aclose()

    with hostile_server() as port:
        res = asyncio.run(main(port))
    assert res.ok, res.error
    req = PlannedRequest(request_id="c1-00000", point="c1", seq=0, warmup=False,
                         input_tokens=8, offset_s=None)
    record = make_record(req, res, None, 1, 0.0, 0)
    assert record["response_id"] == "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT"
    assert record["server_headers"] == {
        "date": "Tue, 01 Dec 2026 21:41:39 GMT",
        "request-id": "req_011CSHoEeqs5C35K2UUqR7Fy",
        "openai-processing-ms": "42",
        "x-ratelimit-remaining-tokens": "9000",
        "x-ratelimit-reset-requests": "<b>6m0s</b>",
    }
    journal = Journal(tmp_path / "events.jsonl")
    journal.append(record)
    journal.close()
    text = (tmp_path / "events.jsonl").read_text()
    for secret in (LEAKED_KEY, RUN_KEY, "__session", "eyJhbGci", "Bearer"):
        assert secret not in text, secret
    assert line_problem(record) is None


@pytest.mark.parametrize(("fields", "problem"), [
    ({"server_headers": {"set-cookie": "a=b"}}, "not on the allow-list"),
    ({"server_headers": {"x-request-id": LEAKED_KEY}}, "not a value the runner keeps"),
    ({"server_headers": {"date": "x" * 129}}, "not a value the runner keeps"),
    ({"server_headers": {"date": 5}}, "not a value the runner keeps"),
    ({"server_headers": ["date"]}, "server_headers is a list"),
    ({"response_id": "a b"}, "response_id is not an id"),
    ({"response_id": "x" * 129}, "response_id is not an id"),
    ({"response_id": LEAKED_KEY}, "response_id is not an id"),
])
def test_the_validator_refuses_server_fields_the_runner_would_not_keep(
    fields: dict[str, object], problem: str,
) -> None:
    found = line_problem({"request_id": "c1-00000", **fields})
    assert found is not None and problem in found, found


def test_lines_without_server_fields_and_with_good_ones_are_accepted() -> None:
    assert line_problem({"request_id": "c1-00000"}) is None
    assert line_problem({"response_id": None, "server_headers": {}}) is None
    assert line_problem({"response_id": "msg_013Zva2CMHLNnXjNJJKqJ2EF",
                         "server_headers": {"anthropic-ratelimit-tokens-remaining": "7"}}) is None


def _journal(path: Path, lines: list[dict[str, object]]) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as out:
        for line in lines:
            out.write(json.dumps(line) + "\n")


def test_the_run_page_shows_the_first_requests_id_and_headers_escaped(tmp_path: Path) -> None:
    doc = json.loads(SAMPLE.read_text(encoding="utf-8"))
    doc["evidence"] = {"sha256": "0" * 64, "lines": 4, "bytes": 1}
    results = tmp_path / "results"
    (results / "alice").mkdir(parents=True)
    (results / "alice" / "x.json").write_text(json.dumps(doc), encoding="utf-8")
    first = {"request_id": "c1-00000", "response_id": "chatcmpl-first",
             "server_headers": {"x-ratelimit-reset-requests": "<script>alert(1)</script>",
                                "request-id": "req_first"}}
    _journal(results / "alice" / "x.events.jsonl.gz", [
        {"type": "run"}, {"type": "session", "t_ns": 0, "at": "x"}, first,
        {"request_id": "c1-00001", "response_id": "chatcmpl-second", "server_headers": {}},
    ])
    row = {"run_id": doc["run_id"], "disclosure_score": 0.9, "rankable": False,
           "unranked_reasons": [], "flags": [], "result_path": "results/alice/x.json",
           "journal_path": "results/alice/x.events.jsonl.gz", "frontier": []}
    shell = Shell(f"<html><head><title>{SHELL_TITLE} - epbench</title>"
                  f'<link rel="canonical" href="/{SHELL_DIR}/"></head><body>',
                  f"<footer>{SHELL_TITLE}</footer></body></html>")
    assert render_and_write([row], results, tmp_path / "site", shell) == 1
    page = (tmp_path / "site" / "runs" / doc["run_id"] / "index.html").read_text()
    assert '<code class="epb-response-id">chatcmpl-first</code>' in page
    assert "<td><code>request-id</code></td><td><code>req_first</code></td>" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert" not in page
    assert "chatcmpl-second" not in page


def test_a_first_line_the_runner_would_not_write_shows_nothing(tmp_path: Path) -> None:
    path = tmp_path / "j.events.jsonl.gz"
    _journal(path, [{"request_id": "c1-00000", "server_headers": {"set-cookie": "a=b"}}])
    assert first_answer(path) is None
    _journal(path, [{"type": "run"}])
    assert first_answer(path) is None
    doc = json.loads(SAMPLE.read_text(encoding="utf-8"))
    assert result_context(doc, {"run_id": "x"}, root="../../")["first_answer"] is None


@pytest.mark.integration
def test_an_emulator_runs_journal_keeps_each_answers_id_and_validates(tmp_path: Path) -> None:
    from epbench.generator.checks.evidence import check_evidence
    from tests.runner.test_runner_emulator import fast_emulator, run, workload

    load = {"pattern": "concurrency", "concurrency": [2], "requests_per_point": 6,
            "warmup_requests": 1}
    result = run(tmp_path, fast_emulator(tmp_path), workload(tmp_path, load))
    run_dir = next((tmp_path / "runs").iterdir())
    lines = [r for r in Journal.read(run_dir / "events.jsonl") if "request_id" in r]
    assert len(lines) == 7
    ids = [r["response_id"] for r in lines]
    assert all(i.startswith("chatcmpl-") for i in ids) and len(set(ids)) == 7, ids
    assert all(set(r["server_headers"]) <= ALLOWED for r in lines)
    assert all(line_problem(r) is None for r in lines)
    assert result.get("evidence"), "the run pins its journal"
    # the journal, its server fields included, passes the validator's recomputation
    assert check_evidence(result, run_dir / "result.json", "result.json") == []
