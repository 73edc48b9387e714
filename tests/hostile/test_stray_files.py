"""Finding 9, and the file rule behind finding 1: a symbolic link to a folder got no finding,
and a 400-digit integer made the validator fail (`internal.error (OverflowError)`). Each now
gets one clear line. The data folders hold only documents epbench knows, plus each result's
journal beside it; anything else (git's own files, dot-files, links, other extensions) is
rejected by name."""

from __future__ import annotations

import json
from pathlib import Path

from attack import SERVICED, epbench, make_project

from epbench.generator.validate import validate_paths


def findings_by_file(project: Path, folder: str = ".") -> dict[str, set[str]]:
    done = epbench("validate", folder, "--format", "json", cwd=project)
    assert "Traceback" not in done.stdout + done.stderr
    out: dict[str, set[str]] = {}
    for finding in json.loads(done.stdout)["findings"]:
        rel = (project / finding["file"]).relative_to(project).as_posix()
        out.setdefault(rel, set()).add(finding["check"])
    return out


def test_a_symlinked_folder_in_each_data_folder_gets_one_clear_line(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project")
    (project / "endpoints").mkdir(exist_ok=True)
    (project / "results" / "mallory").symlink_to("/etc")
    (project / "workloads" / "more").symlink_to(tmp_path)
    (project / "endpoints" / "more").symlink_to("/usr")
    done = epbench("validate", ".", cwd=project)
    assert done.returncode == 1
    lines = [line for line in done.stdout.splitlines() if "file.symlink" in line]
    assert len(lines) == 3, done.stdout
    assert all("a symbolic link to a folder" in line for line in lines)
    assert {line.split(":/")[0] for line in lines} == {
        "results/mallory", "workloads/more", "endpoints/more"}


def test_a_400_digit_integer_is_one_clear_rejection_not_a_crash(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project")
    path = project / "results" / SERVICED
    text = path.read_text()
    doc = json.loads(text)
    p50 = doc["points"][0]["ttft_ms"]["p50"]
    path.write_text(text.replace(f'"p50": {json.dumps(p50)}', '"p50": ' + "9" * 400, 1))
    done = epbench("validate", str(path), cwd=project)
    assert done.returncode == 1
    (line, summary) = done.stdout.strip().splitlines()
    assert ":/points/0/ttft_ms/p50: reject: [value.too-large]" in line
    assert "9" * 30 not in line and "internal.error" not in done.stdout
    assert summary.startswith("FAILED")


def test_git_files_dot_files_and_unknown_extensions_are_rejected_by_name(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project")
    serving = project / "workloads" / "serving"
    (serving / "HEAD").write_text("ref: refs/heads/main\n")
    (serving / "objects" / "ab").mkdir(parents=True)
    (serving / "objects" / "ab" / "cdef").write_bytes(b"x\x9c")
    (serving / ".git").mkdir()
    (serving / ".git" / "config").write_text("[core]\n")
    (project / "results" / ".env").write_text("KEY=1\n")
    (project / "results" / "README.md").write_text("hi\n")
    (project / "results" / "alice" / "run.py").write_text("print(1)\n")
    found = findings_by_file(project)
    assert found["workloads/serving/HEAD"] == {"file.unknown"}
    assert found["workloads/serving/objects/ab/cdef"] == {"file.unknown"}
    assert found["workloads/serving/.git"] == {"file.hidden"}
    assert found["results/.env"] == {"file.hidden"}
    assert found["results/README.md"] == {"file.unknown"}
    assert found["results/alice/run.py"] == {"file.unknown"}


def test_a_journal_beside_its_result_is_allowed_and_an_orphan_is_not(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project")
    result = project / "results" / SERVICED
    journal = result.with_name(result.stem + ".events.jsonl.gz")
    journal.write_bytes(b"\x1f\x8b")
    orphan = result.with_name("2026-11-20-chat-short-00000000.events.jsonl.gz")
    orphan.write_bytes(b"\x1f\x8b")
    report = validate_paths([project / "results"])
    by_file = {Path(f.file).name: f.check for f in report.findings}
    assert journal.name not in by_file
    assert by_file[orphan.name] == "file.unknown"
    assert len(report.files) == 5  # four results and the orphan; the journal is not a document


def test_an_endpoint_template_is_left_alone(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project")
    (project / "endpoints").mkdir(exist_ok=True)
    (project / "endpoints" / "acme.yaml.example").write_text("not: checked\n")
    assert "endpoints/acme.yaml.example" not in findings_by_file(project)


def test_an_attestation_bundle_beside_its_result_is_allowed_and_an_orphan_is_not(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path / "project")
    result = project / "results" / SERVICED
    bundle = result.with_name(result.stem + ".sigstore.json")
    bundle.write_text('{"mediaType": "not checked as a document"}')
    orphan = result.with_name("2026-11-20-chat-short-00000000.sigstore.json")
    orphan.write_text("{}")
    report = validate_paths([project / "results"])
    by_file = {Path(f.file).name: f for f in report.findings}
    assert bundle.name not in by_file  # not a result: no kind.unknown, no schema finding
    assert by_file[orphan.name].check == "file.unknown"
    assert "an attestation bundle with no result beside it" in by_file[orphan.name].message
    assert len(report.files) == 5  # four results and the orphan; the bundle is not a document
