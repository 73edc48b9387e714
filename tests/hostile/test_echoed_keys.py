"""Finding 6: an endpoint echoes the key it was sent ("Incorrect API key provided: ..."), and
the journal, which the benchmark workflow uploads, stored that text verbatim. A real run
against a loopback server that answers every request with a 401 quoting the Authorization
header and a header value must leave neither anywhere in the run folder."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from attack import ROOT, TINY_WORKLOAD, epbench

from epbench.core.credentials import REDACTED, redact

KEY = "sk-proj-Q7mZ2xK9pL4vN8rT1wY6bC3dF5gH0jS2"
ORG = "org-8d41c7e2a9b35f60"


PREFLIGHT_ANSWER = json.dumps({
    "choices": [{"index": 0, "message": {"content": "OK"}, "finish_reason": "length"}],
}).encode()


class EchoingHandler(BaseHTTPRequestHandler):
    """Every POST gets a 401 whose message quotes what it was sent, except the runner's
    preflight probe (answered, so the run goes on to journal the refusals; a refused
    preflight would stop the run before it has a journal)."""

    refuse_preflight = False

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.headers.get("x-epbench-request-id") == "preflight" and not self.refuse_preflight:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(PREFLIGHT_ANSWER)))
            self.end_headers()
            self.wfile.write(PREFLIGHT_ANSWER)
            return
        body = json.dumps({"error": {
            "message": f"Incorrect API key provided: {self.headers.get('authorization')} "
                       f"for organization {self.headers.get('x-org')}; key tail "
                       f"{KEY[-12:]}",
            "type": "invalid_request_error"}}).encode()
        self.send_response(401)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def echoing_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), EchoingHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_a_key_the_endpoint_echoes_never_reaches_the_journal(tmp_path: Path,
                                                            echoing_server: str) -> None:
    project = tmp_path / "project"
    (project / "endpoints").mkdir(parents=True)
    (project / "workloads" / "serving").mkdir(parents=True)
    doc = yaml.safe_load((ROOT / "endpoints" / "emulator.yaml").read_text())
    doc.pop("emulator")
    doc.update(id="echo", base_url=echoing_server, api_key_env="ACME_API_KEY",
               request={"headers": {"X-Org": "${ACME_ORG}"}})
    (project / "endpoints" / "echo.yaml").write_text(yaml.safe_dump(doc))
    (project / "workloads" / "serving" / "tiny.yaml").write_text(yaml.safe_dump(TINY_WORKLOAD))
    env = dict(os.environ, ACME_API_KEY=KEY, ACME_ORG=ORG)
    epbench("run", "--endpoint", "endpoints/echo.yaml", "--workload",
            "workloads/serving/tiny.yaml", "--out", "runs", "--no-progress",
            cwd=project, env=env)
    (run_dir,) = (project / "runs").iterdir()
    journal = (run_dir / "events.jsonl").read_text()
    records = [r for r in map(json.loads, journal.splitlines()) if "request_id" in r]
    assert records and all(r["status"] == 401 for r in records)
    assert all("Incorrect API key provided" in r["error"] for r in records)  # the evidence stays
    assert all(REDACTED in r["error"] for r in records)
    for path in run_dir.iterdir():
        text = path.read_text(errors="replace")
        assert KEY not in text and KEY[-12:] not in text, path.name
        assert ORG not in text, path.name


def test_a_refused_preflight_stops_in_one_line_that_does_not_echo_the_key(
    tmp_path: Path, echoing_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(EchoingHandler, "refuse_preflight", True)
    doc = yaml.safe_load((ROOT / "endpoints" / "emulator.yaml").read_text())
    doc.pop("emulator")
    doc.update(id="echo", base_url=echoing_server, api_key_env="ACME_API_KEY")
    (tmp_path / "echo.yaml").write_text(yaml.safe_dump(doc))
    (tmp_path / "tiny.yaml").write_text(yaml.safe_dump(TINY_WORKLOAD))
    done = epbench("run", "--endpoint", "echo.yaml", "--workload", "tiny.yaml",
                   cwd=tmp_path, env=dict(os.environ, ACME_API_KEY=KEY))
    assert done.returncode == 1 and "refused the API key" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert KEY not in done.stderr + done.stdout and KEY[-12:] not in done.stderr
    assert not (tmp_path / "runs").exists()


def test_redaction_removes_known_secrets_their_pieces_and_credential_shapes() -> None:
    text = (f"bad key {KEY} (tail {KEY[-10:]}), other sk-live-abcdefghijklmnop1234 "
            "azure 9f3b2c7d4e5a61f08b9c2d3e4f5a6b7c, sha in error text stays readable: none")
    out = redact(text, [KEY])
    assert KEY not in out and KEY[-10:] not in out
    assert "sk-live-abcdefghijklmnop1234" not in out
    assert "9f3b2c7d4e5a61f08b9c2d3e4f5a6b7c" not in out
    assert out.startswith("bad key [redacted]")
