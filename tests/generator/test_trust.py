"""What epbench can vouch for: a result travels with its journal, every figure is recomputed
from it, its endpoint and workload are ones epbench knows, and only what passes all that (and
is not emulated, quick, thin or failing) is ranked. Each tampering a hostile submitter would
try is rejected with one line naming what differs."""

from __future__ import annotations

import gzip
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from epbench.core import evidence
from epbench.core.documents import load_document
from epbench.core.findings import Finding
from epbench.core.journal_file import Journal
from epbench.core.rankable import rankability
from epbench.generator.submit import submit_run
from epbench.generator.validate import validate_paths
from epbench.runner.entry import JOURNAL_FILE, PLAN_FILE, write_json_atomic, write_result
from epbench.runner.plan import Plan, build_plan
from epbench.runner.workload import load_serving_workload
from tests.conftest import ROOT

MS = 1_000_000


def header(workload: Any, endpoint: dict[str, Any] | None = None,
           quick: bool = False) -> dict[str, Any]:
    return {
        "harness": {"name": "epbench", "version": "0.1.0", "git_sha": None},
        "workload": {"id": workload.id, "version": workload.version, "sha256": workload.sha256,
                     "kind": "serving", "pattern": "concurrency"},
        "endpoint": endpoint or load_document(ROOT / "endpoints" / "emulator.yaml"),
        "client": {"python": "3.11", "os": "Linux", "region": None, "rtt_ms": 0.05, "cpus": 2},
        "settings": {"seed": 1, "quick": quick, "stream": True, "max_tokens": 128,
                     "ignore_eos": True, "temperature": 0.0},
        "slo": {"ttft_ms": 2000, "tpot_ms": 50},
        "started_at": "2026-11-20T10:00:00Z",
    }


def journal_lines(plan: Plan, fail: bool = False) -> list[dict[str, Any]]:
    """A run's journal: the spec, one session, and a plausible line per planned request."""
    rng = random.Random(3)
    lines: list[dict[str, Any]] = [
        {"type": "run", "spec": plan.spec({"ttft_ms": 2000, "tpot_ms": 50}).to_json()},
        {"type": "session", "t_ns": 9_000 * MS, "at": "2026-11-20T10:00:00.00Z",
         "rtt_ms": [0.1, 0.12, 0.11, 0.1, 0.13]},
    ]
    t = 10_000 * MS
    for point in plan.points:
        for req in point.requests:
            t += rng.randint(1, 5) * MS
            gaps = [rng.randint(4000, 9000) for _ in range(15)]
            first = t + rng.randint(20, 80) * MS
            last = first + sum(gaps) * 1000
            ok = not fail and rng.random() > 0.01
            lines.append({
                "request_id": req.request_id, "point": req.point, "seq": req.seq,
                "warmup": req.warmup, "t_scheduled_ns": None, "t_send_ns": t,
                "t_first_ns": first if ok else None, "t_last_ns": last if ok else None,
                "t_done_ns": last + MS, "input_tokens": req.input_tokens,
                "input_requested": req.input_tokens,
                "output_tokens": 16 if ok else None, "token_source": "usage" if ok else None,
                "status": 200 if ok else None, "class": "ok" if ok else "connection",
                "error": None if ok else "connection refused", "itl_us": gaps if ok else [],
                "attempts": 1, "retry_s": 0.0, "retry_tokens": 0,
            })
    return lines


def make_run(folder: Path, fail: bool = False, quick: bool = False,
             endpoint: dict[str, Any] | None = None, run_id: str = "feedc0de12345678") -> Path:
    workload = load_serving_workload(ROOT / "workloads" / "serving" / "chat-short.yaml")
    plan = build_plan(workload, run_id, quick=quick)
    plan.points = [p for p in plan.points if p.index % 4 == 0]  # shard 1/4: c1 and c16
    plan.meta = header(workload, endpoint, quick)
    folder.mkdir(parents=True)
    write_json_atomic(folder / PLAN_FILE, plan.to_json())
    lines = journal_lines(plan, fail)
    with Journal(folder / JOURNAL_FILE) as journal:
        for line in lines:
            journal.append(line)
    write_result(folder, plan, lines)
    return folder


@pytest.fixture
def submitted(tmp_path: Path) -> Path:
    """A result and its journal, submitted into a results/ tree (the emulator endpoint)."""
    path, report = submit_run(make_run(tmp_path / "run"), "tester", None, "independent",
                              tmp_path / "results")
    assert not report.blocking and report.files[0].status == "passed", report.render("text")
    return path


def findings(path: Path) -> list[Finding]:
    return [f for f in validate_paths([path]).findings if f.severity != "warn"]


def one_rejection(path: Path) -> Finding:
    found = [f for f in findings(path) if f.severity in ("reject", "reject-point")]
    assert found, "expected a rejection"
    assert "\n" not in found[0].line()
    return found[0]


def edit(path: Path, change: Any) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc, indent=2))


def packed(path: Path) -> Path:
    return path.with_name(path.stem + evidence.SUFFIX)


def rewrite_journal(path: Path, change: Any, pin: bool) -> None:
    lines = [json.loads(x) for x in gzip.decompress(packed(path).read_bytes()).splitlines()]
    change(lines)
    data = b"".join(json.dumps(x, separators=(",", ":")).encode() + b"\n" for x in lines)
    evidence.pack(data, packed(path))
    if pin:
        edit(path, lambda doc: doc.update(evidence=evidence.describe(data)))


def test_submit_writes_the_result_and_its_journal_which_validate_recomputes(
    submitted: Path,
) -> None:
    assert packed(submitted).is_file()
    doc = json.loads(submitted.read_text())
    data = gzip.decompress(packed(submitted).read_bytes())
    assert doc["evidence"] == evidence.describe(data)
    assert findings(submitted) == []
    assert doc["round_trips"] == {"samples": 5, "min_ms": 0.1, "median_ms": 0.11}
    assert [r.code for r in rankability(doc)] == ["self-reported", "emulated"]


def test_a_result_whose_journal_is_missing_is_rejected(submitted: Path) -> None:
    packed(submitted).unlink()
    assert one_rejection(submitted).check == "evidence.missing"


def test_one_changed_value_in_one_journal_line_is_caught_by_the_hash(submitted: Path) -> None:
    def change(lines: list[dict[str, Any]]) -> None:
        lines[10]["t_last_ns"] += 5 * MS

    rewrite_journal(submitted, change, pin=False)
    found = one_rejection(submitted)
    assert found.check == "evidence.journal" and "sha256" in found.message


def test_one_changed_journal_value_with_a_new_hash_changes_a_recomputed_figure(
    submitted: Path,
) -> None:
    def change(lines: list[dict[str, Any]]) -> None:
        lines[10]["t_first_ns"] -= 3 * MS  # one request's TTFT 3 ms shorter

    rewrite_journal(submitted, change, pin=True)
    found = one_rejection(submitted)
    assert found.check == "evidence.recomputed"
    assert found.pointer.startswith("/points/0/ttft_ms/")
    assert "in the file but" in found.message and "recomputed from" in found.message


def test_one_changed_figure_is_named_with_its_pointer_and_both_values(submitted: Path) -> None:
    doc = json.loads(submitted.read_text())
    true_p90 = doc["points"][1]["ttft_ms"]["p90"]
    nudged = true_p90 * (1 + 1e-7)  # far inside every other check's tolerance
    edit(submitted, lambda doc: doc["points"][1]["ttft_ms"].update(p90=nudged))
    found = one_rejection(submitted)
    assert found.check == "evidence.recomputed" and found.pointer == "/points/1/ttft_ms/p90"
    assert found.message.startswith(
        f"/points/1/ttft_ms/p90 is {nudged!r} in the file but {true_p90!r} recomputed from ")


def test_every_figure_times_100_is_rejected(submitted: Path) -> None:
    def scale(doc: dict[str, Any]) -> None:
        for point in doc["points"]:
            point["system_tps"] *= 100
            point["window_s"] /= 100
            for name in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"):
                for key in ("p50", "p90", "p95", "p99", "mean"):
                    point[name][key] /= 100
            point["tps_per_user"] *= 100
        for entry in doc["pareto"]:
            entry["system_tps"] *= 100
            entry["tps_per_user"] *= 100

    edit(submitted, scale)
    assert one_rejection(submitted).check == "evidence.recomputed"


def test_ttft_in_seconds_is_rejected(submitted: Path) -> None:
    def seconds(doc: dict[str, Any]) -> None:
        for key in ("p50", "p90", "p95", "p99", "mean"):
            doc["points"][0]["ttft_ms"][key] /= 1000

    edit(submitted, seconds)
    checks = {f.check for f in findings(submitted)}
    assert "evidence.recomputed" in checks and "plausible.below-rtt" in checks


@pytest.mark.parametrize("literal", ["1e999", "-1e999"])
def test_infinity_anywhere_is_rejected(submitted: Path, literal: str) -> None:
    text = submitted.read_text()
    doc = json.loads(text)
    old = json.dumps(doc["points"][0]["system_tps"])
    submitted.write_text(text.replace(f'"system_tps": {old}', f'"system_tps": {literal}', 1))
    found = one_rejection(submitted)
    assert found.pointer == "/points/0/system_tps" or "Infinity" in found.message \
        or "infinity" in found.message.lower()


def test_a_window_of_5e_324_seconds_is_rejected(submitted: Path) -> None:
    edit(submitted, lambda doc: doc["points"][0].update(window_s=5e-324, system_tps=1e300))
    checks = {f.check for f in findings(submitted)}
    assert {"evidence.recomputed", "plausible.window", "derived.system-tps"} <= checks


def test_the_same_tampering_without_a_journal_still_fails_the_bounds(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    doc = json.loads(ROOT.joinpath(
        "tests/data/results/carol/emulator/2026-11-23-chat-short-d4e5f6a7.json").read_text())
    doc["points"][0].update(window_s=5e-324, system_tps=1e300)
    path.write_text(json.dumps(doc))
    checks = {f.check for f in findings(path)}
    assert {"derived.system-tps", "plausible.window"} <= checks  # inf is close to nothing


def test_a_provider_that_differs_from_the_endpoint_file_is_rejected(submitted: Path) -> None:
    edit(submitted, lambda doc: doc["endpoint"].update(provider="OpenAI"))
    found = one_rejection(submitted)
    assert found.check == "endpoint.identity" and found.pointer == "/endpoint/provider"
    assert "'OpenAI'" in found.message and "endpoints/emulator.yaml" in found.message


def test_a_price_that_differs_from_the_card_in_force_is_rejected(submitted: Path) -> None:
    edit(submitted, lambda doc: doc["endpoint"]["pricing"].update(usd_per_hour=0.2))
    found = one_rejection(submitted)
    assert found.check == "endpoint.identity"
    assert found.pointer == "/endpoint/pricing/usd_per_hour"


def test_an_unknown_endpoint_id_is_rejected(submitted: Path) -> None:
    edit(submitted, lambda doc: doc["endpoint"].update(id="openai-gpt-4o"))
    assert "endpoint.unknown" in {f.check for f in findings(submitted)}


def test_an_unknown_workload_is_rejected(submitted: Path) -> None:
    edit(submitted, lambda doc: doc["workload"].update(sha256="ab" * 32))
    assert one_rejection(submitted).check == "workload.sha256"
    edit(submitted, lambda doc: doc["workload"].update(id="no-such-workload"))
    assert "workload.unknown" in {f.check for f in findings(submitted)}


def test_a_run_where_every_request_failed_is_rejected(tmp_path: Path) -> None:
    run = make_run(tmp_path / "dead", fail=True)
    found = one_rejection(run / "result.json")
    assert found.check == "evidence.all-failed"
    assert re.match(r"all \d+ requests failed \(first: connection", found.message)


def test_a_dead_endpoint_makes_run_exit_non_zero_with_one_clear_line(tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys

    import yaml

    with socket.socket() as probe:  # a port that nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    endpoint = {k: v for k, v in load_document(ROOT / "endpoints" / "emulator.yaml").items()
                if k != "emulator"}
    endpoint["base_url"] = f"http://127.0.0.1:{port}/v1"
    (tmp_path / "dead.yaml").write_text(yaml.safe_dump(endpoint))
    done = subprocess.run(
        [sys.executable, "-m", "epbench.cli", "run", "--endpoint", str(tmp_path / "dead.yaml"),
         "--workload", "chat-short", "--quick", "--out", str(tmp_path / "runs"),
         "--no-progress"],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    # the preflight refuses a dead endpoint before the run; an endpoint that dies after it
    # gives a run where every request failed: non-zero too, and its result is rejected
    assert re.match(r"epbench: error: (endpoint \S+: cannot reach|all \d+ requests failed)",
                    line), line
    for result in (tmp_path / "runs").glob("*/result.json"):
        assert one_rejection(result).check == "evidence.all-failed"


def test_quick_emulated_and_imported_results_build_as_not_ranked_with_their_reason(
    tmp_path: Path,
) -> None:
    import shutil
    from datetime import UTC, datetime

    from epbench.core.pricing import card_on
    from epbench.generator.downloads import read_csv, read_table, write_tables
    from epbench.generator.importers import import_results
    from epbench.generator.plain_json import records
    from epbench.generator.render import environment, result_context
    from epbench.generator.tables import build_tables

    project = tmp_path / "project"
    shutil.copytree(ROOT / "tests" / "data" / "endpoints", project / "endpoints")
    acme = load_document(project / "endpoints" / "acme-llama-8b.yaml")
    acme["pricing"] = card_on(acme["pricing"], datetime(2026, 11, 20).date())
    results = project / "results"
    for name, quick, endpoint, run_id in (("quick", True, acme, "0123456789abcdef"),
                                          ("emulated", False, None, "fedcba9876543210")):
        run = make_run(tmp_path / name, quick=quick, endpoint=endpoint, run_id=run_id)
        _, report = submit_run(run, "tester", None, "independent", results)
        assert not report.blocking, report.render("text")
    import_results("mlperf-endpoints", ROOT / "tests" / "data" / "mlperf", results / "acme",
                   None, when=datetime(2026, 10, 2, tzinfo=UTC))
    tables = build_tables(results, project)
    write_tables(tables, tmp_path / "data")
    runs = {r["run_id"][:8]: r for r in read_table(tmp_path / "data", "runs")}
    mine = "self-reported: no attestation bundle"
    assert runs["01234567"]["unranked_reasons"][:2] == [mine, "quick run"]  # (thin samples)
    assert runs["fedcba98"]["unranked_reasons"] == [mine, "emulated endpoint"]
    (imported,) = [r for r in runs.values() if r["source_format"] == "mlperf-endpoints"]
    assert "imported without journal" in imported["unranked_reasons"]
    assert not any(r["rankable"] for r in runs.values())
    csv_reasons = {row["run_id"][:8]: row["unranked_reasons"]
                   for row in read_csv(tmp_path / "data", "runs")}
    assert csv_reasons["01234567"].startswith(
        "self-reported: no attestation bundle; quick run; fewer than 64 samples")
    assert {row["unranked_reasons"] for row in read_csv(tmp_path / "data", "points")
            if row["run_id"].startswith("fedcba98")} == {
        "self-reported: no attestation bundle; emulated endpoint"}
    template = environment().get_template("result.html.j2")
    row = next(r for r in records(tables.runs) if r["run_id"].startswith("01234567"))
    doc = json.loads((results / row["result_path"].removeprefix("results/")).read_text())
    page = template.render(**result_context(doc, row, root="../../"))
    assert "Not ranked: self-reported: no attestation bundle; quick run; fewer than 64 samples" \
        in page
    assert "Provenance: <strong>self-reported</strong> (no attestation bundle)." in page


def test_a_remembered_recomputation_still_checks_the_journal_and_the_figures(
    submitted: Path,
) -> None:
    original = submitted.read_text()
    assert findings(submitted) == []  # recomputed, and remembered
    assert findings(submitted) == []  # from the cache
    edit(submitted, lambda doc: doc["points"][0]["ttft_ms"].update(
        p50=doc["points"][0]["ttft_ms"]["p50"] * (1 + 1e-6)))
    assert one_rejection(submitted).check == "evidence.recomputed"  # a new key: recomputed

    def change(lines: list[dict[str, Any]]) -> None:
        lines[5]["t_done_ns"] += 1

    submitted.write_text(original)  # the remembered figures, and a different journal
    rewrite_journal(submitted, change, pin=False)
    assert one_rejection(submitted).check == "evidence.journal"  # the bytes, every time


def test_inter_token_latency_carries_no_interval_but_per_request_figures_do(
    submitted: Path,
) -> None:
    for point in json.loads(submitted.read_text())["points"]:
        assert "ci95" not in point["itl_ms"]
        assert set(point["ttft_ms"]["ci95"]) == {"p50", "p90"}


def _with_old_itl_intervals(path: Path) -> dict[str, Any]:
    """The result as code before the no-ITL-interval rule wrote it: every point's itl_ms with
    its bootstrap ci95 (recomputed from the journal the way that code computed it)."""
    from epbench.core.runspec import RunSpec
    from epbench.core.summary import summarize_run

    lines = [json.loads(x) for x in gzip.decompress(packed(path).read_bytes()).splitlines()]
    spec = RunSpec.from_json(next(x for x in lines if x.get("type") == "run")["spec"])
    old = summarize_run(spec, lines, itl_interval=True)["points"]
    edit(path, lambda doc: [p.update(itl_ms=o["itl_ms"])
                            for p, o in zip(doc["points"], old, strict=True)])
    return json.loads(path.read_text())


def test_a_result_written_with_inter_token_intervals_still_validates(submitted: Path) -> None:
    doc = _with_old_itl_intervals(submitted)
    assert all("ci95" in p["itl_ms"] for p in doc["points"])
    assert findings(submitted) == []


def test_a_changed_inter_token_interval_is_still_caught(submitted: Path) -> None:
    doc = _with_old_itl_intervals(submitted)
    low = doc["points"][0]["itl_ms"]["ci95"]["p50"][0]
    edit(submitted, lambda d: d["points"][0]["itl_ms"]["ci95"]["p50"].__setitem__(0, low + 0.01))
    found = one_rejection(submitted)
    assert found.check == "evidence.recomputed"
    assert found.pointer == "/points/0/itl_ms/ci95/p50/0"


def test_a_second_validation_takes_the_verdict_from_the_cache_and_not_from_recomputing(
    submitted: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from epbench.generator.checks import evidence as evidence_check
    from epbench.generator.checks import verified

    assert findings(submitted) == []
    keys = verified.cache_dir() / "keys"
    assert len(keys.read_bytes().splitlines()) >= 1

    def refuse(*_: Any) -> dict[str, Any]:
        raise AssertionError("recomputed although remembered")

    monkeypatch.setattr(evidence_check, "recompute", refuse)
    assert findings(submitted) == []
    monkeypatch.undo()
    edit(submitted, lambda doc: doc["points"][0]["ttft_ms"].update(
        p50=doc["points"][0]["ttft_ms"]["p50"] * (1 + 1e-6)))  # a new key: recomputed, caught
    assert one_rejection(submitted).check == "evidence.recomputed"
