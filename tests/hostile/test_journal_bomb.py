"""Journals of known shape, in bounded memory (issue 21, item 6): a journal of `{}` lines (a
gzip of kilobytes, megabytes inflated) is one `evidence.journal` line, found while the journal
streams, by an `epbench validate` whose peak memory is measured; duplicate keys, deep lines,
unknown kinds and more requests than the plan sends are one line each too."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from forged_runs import ROOT, forged_run, workload_file

from epbench.core import evidence
from epbench.generator.submit import submit_run

MIB = 1024 * 1024
# A small launcher runs the command and reports its peak RSS: the kernel carries a process's
# peak across exec, so a child forked from a large process (this one, the test runner)
# would report its parent's memory; one forked from this small launcher reports its own.
LAUNCHER = (
    "import os, subprocess, sys\n"
    "child = subprocess.Popen(sys.argv[1:])\n"
    "_, status, usage = os.wait4(child.pid, 0)\n"
    "print(f'peak_rss_kb={usage.ru_maxrss} cpu_s={usage.ru_utime + usage.ru_stime}', "
    "file=sys.stderr)\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)


@pytest.fixture
def submitted(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    run = forged_run(tmp_path / "run", workload_file(project / "workloads" / "serving",
                                                     requests_per_point=8))
    path, report = submit_run(run, "mallory", None, "independent", project / "results")
    assert not report.blocking, report.render("text")
    return path


def replace_journal(result: Path, change) -> None:  # type: ignore[no-untyped-def]
    journal = result.with_name(result.stem + evidence.SUFFIX)
    lines = gzip.decompress(journal.read_bytes()).split(b"\n")[:-1]
    data = change(lines)
    evidence.pack(data, journal)
    doc = json.loads(result.read_text())
    doc["evidence"] = evidence.describe(data)  # the attacker pins what they wrote
    result.write_text(json.dumps(doc, indent=2))


def validate(result: Path) -> tuple[int, list[str], float]:
    """(exit code, reject lines, peak RSS in MB) of `epbench validate` in a child process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT),
           "EPBENCH_CACHE_DIR": str(result.parent / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", LAUNCHER, sys.executable, "-m", "epbench.cli", "validate",
         str(result)], capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    out = done.stdout
    figures = dict(part.split("=") for part in done.stderr.splitlines()[-1].split())
    rejects = [line for line in out.splitlines() if ": reject: " in line]
    return done.returncode, rejects, int(figures["peak_rss_kb"]) / 1024


def test_a_journal_bomb_of_empty_objects_is_one_rejection_in_little_memory(
    submitted: Path,
) -> None:
    # 24 MiB of `{}` lines (8 million of them; a 25 KB gzip): kept, they took 1.1 GB here
    replace_journal(submitted, lambda lines: lines[0] + b"\n" + b"{}\n" * (8 * MIB))
    assert submitted.with_name(submitted.stem + evidence.SUFFIX).stat().st_size < 100_000
    code, rejects, peak_mb = validate(submitted)
    print(f"peak RSS of epbench validate on the bomb: {peak_mb:.0f} MB")
    assert code == 1
    assert len(rejects) == 1 and "[evidence.journal]" in rejects[0]
    assert "journal line 2 (request) lacks field 'request_id'" in rejects[0]
    assert peak_mb < 400  # the command's own start-up is about 185 MB here


@pytest.mark.parametrize(("case", "change", "message"), [
    ("duplicate key",
     lambda lines: b"\n".join([*lines[:3], lines[3].replace(b'{"request_id"',
                                                            b'{"class":"ok","request_id"'),
                               *lines[4:]]) + b"\n",
     "journal line 4 repeats a key"),
    ("deep line",
     lambda lines: b"\n".join([*lines, b'{"type":"session","x":' + b"[" * 2000 + b"]" * 2000
                               + b"}"]) + b"\n",
     "nests deeper than 8 levels"),
    ("nine deep",
     lambda lines: b"\n".join([*lines, b'{"type":"session","x":' + b"[" * 8 + b"]" * 8
                               + b"}"]) + b"\n",
     "nests deeper than 8 levels"),
    ("unknown kind",
     lambda lines: b"\n".join([*lines, b'{"type":"note","text":"hi"}']) + b"\n",
     "has type 'note', not a kind of journal line"),
    ("more requests than planned",
     lambda lines: b"\n".join([*lines, lines[-1]]) + b"\n",
     "more request lines than the 8 the workload's plan sends"),
])
def test_a_malformed_journal_line_is_one_evidence_journal_line(
    submitted: Path, case: str, change, message: str,  # type: ignore[no-untyped-def]
) -> None:
    from epbench.generator.validate import validate_paths

    replace_journal(submitted, change)
    found = [f for f in validate_paths([submitted]).findings if f.severity == "reject"]
    assert [f.check for f in found] == ["evidence.journal"], (case, [f.line() for f in found])
    assert message in found[0].message, found[0].message
