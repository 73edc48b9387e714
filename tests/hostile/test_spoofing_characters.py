"""Finding 7: spoofing characters. A NUL, an escape, a bidirectional override or a zero-width
space in a provider, model or submitter name was accepted, and landed raw in index.html. Each
is now rejected with the field's pointer, a look-alike name mixing scripts is flagged for a
maintainer, and a site built from such results holds none of those characters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from attack import SERVICED, epbench, make_project

from epbench.generator.checks.identity import check_identity
from epbench.generator.validate import validate_paths

SPOOFS = {
    "/endpoint/provider": "Acme\u202e ecnerefnI",         # right-to-left override
    "/endpoint/model/name": "llama\u200b-3.1-8b",         # zero-width space
    "/submitter/display_name": "Alice\x00<b>",            # NUL
    "/submitter/contact": "alice\x1b[31m@example.com",     # terminal escape
    "/endpoint/model/version": "v1\u2066\u2069",           # isolates
}


def set_at(doc: dict[str, object], pointer: str, value: str) -> None:
    *parents, last = pointer.strip("/").split("/")
    node: dict[str, object] = doc
    for part in parents:
        child = node.setdefault(part, {})
        assert isinstance(child, dict)
        node = child
    node[last] = value


@pytest.mark.parametrize("pointer", sorted(SPOOFS))
def test_a_hidden_or_reordering_character_in_an_identity_field_is_rejected(
    tmp_path: Path, pointer: str,
) -> None:
    project = make_project(tmp_path)
    path = project / "results" / SERVICED
    doc = json.loads(path.read_text())
    set_at(doc, pointer, SPOOFS[pointer])
    path.write_text(json.dumps(doc))
    findings = validate_paths([path]).findings
    assert ("identity.characters", pointer, "reject") in {
        (f.check, f.pointer, f.severity) for f in findings}


def test_an_endpoint_file_with_a_bidi_override_in_its_provider_is_rejected(
    tmp_path: Path,
) -> None:
    doc = yaml.safe_load((Path(__file__).parents[2] / "endpoints" / "emulator.yaml").read_text())
    doc["provider"] = "epbench\u202e"
    path = tmp_path / "endpoints" / "spoof.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(doc, allow_unicode=True))
    assert ("identity.characters", "/provider") in {
        (f.check, f.pointer) for f in validate_paths([path]).findings}


@pytest.mark.parametrize(("name", "flagged"), [
    ("\u0410cme Inference", True),      # Cyrillic A, then Latin
    ("Acme \u0399nference", True),      # Greek capital iota
    ("Acme Inference", False),
    ("Zürich Ünïcode GmbH", False),     # Latin with diacritics is one script
    ("さくらインターネット株式会社", False),  # Hiragana, Katakana and Han: Japanese
])
def test_a_name_mixing_scripts_is_flagged_for_a_maintainer(name: str, flagged: bool) -> None:
    findings = check_identity({"provider": name}, "f", ("/provider",))
    assert [(f.check, f.severity) for f in findings] == (
        [("identity.mixed-script", "flag")] if flagged else [])


def test_a_site_built_from_spoofed_results_holds_none_of_the_characters(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project")
    path = project / "results" / SERVICED
    doc = json.loads(path.read_text())
    for pointer, value in SPOOFS.items():
        set_at(doc, pointer, value)
    path.write_text(json.dumps(doc))
    built = epbench("build", "--out", "_site", cwd=project)
    assert built.returncode == 0, built.stderr[-3000:]
    for page in (project / "_site").rglob("*"):
        if page.is_file() and page.suffix in (".html", ".json", ".csv", ".js"):
            text = page.read_text(encoding="utf-8", errors="replace")
            for char in ("\x00", "\x1b", "\u202e", "\u200b", "\u2066"):
                assert char not in text, (page, hex(ord(char)))
