"""docs/tables.md is what the column registry (epbench.generator.columns) generates, and each
column, with its header, is declared there once."""

from __future__ import annotations

import re

from epbench.generator import columns, docs_gen
from tests.conftest import ROOT


def test_the_committed_tables_page_is_what_the_registry_generates() -> None:
    committed = (ROOT / "docs" / "tables.md").read_text(encoding="utf-8")
    assert docs_gen.tables_reference() == committed, (
        "docs/tables.md is stale: run `python -m epbench.generator.docs_gen tables > "
        "docs/tables.md`")


def test_the_page_lists_every_column_of_every_table_with_its_unit() -> None:
    page = docs_gen.tables_reference()
    assert "| ttft_p90_ms_best | ms | lowest p90 TTFT over the points |" in page
    assert "| retry_repair_usd | USD | spend at the pinned card of the `repair` requests |" in page
    for table, specs in columns.TABLE_SPECS.items():
        section = page.split(f"## {table} (", 1)[1].split("\n## ", 1)[0]
        for spec in specs:
            assert re.search(rf"^\| (?:[a-z0-9_]+, )*{spec.name}(?:, [a-z0-9_]+)* \|", section,
                             flags=re.M), (table, spec.name)


def test_each_table_declares_each_column_once_and_a_later_column_names_who_fills_it() -> None:
    for table, specs in columns.TABLE_SPECS.items():
        names = [spec.name for spec in specs]
        assert len(names) == len(set(names)), table
        for spec in specs:
            assert (spec.get is None) == (spec.part == columns.LATER), (table, spec.name)
            assert (spec.part == columns.LATER) == bool(spec.filled_by), (table, spec.name)


def test_a_header_with_a_unit_is_written_once_for_the_boards_and_buyer_pages() -> None:
    """"best TTFT p90 (ms)" was written three times in boards.py; now the registry holds each
    header and the boards, the buyer pages and the History metric picker read it there."""
    sources = [(ROOT / "generator" / name).read_text(encoding="utf-8")
               for name in ("columns.py", "boards.py", "buyer.py")]
    labels = {spec.label for specs in columns.TABLE_SPECS.values() for spec in specs
              if "(" in spec.label}
    assert "best TTFT p90 (ms)" in labels
    for label in labels:
        count = sum(text.count(f'"{label}"') for text in sources)
        assert count == 1, (label, count)


def test_a_page_column_takes_its_header_definition_and_format_from_the_registry() -> None:
    shown = columns.Column("ttft_p90_ms_best").to_config("runs")
    assert shown == {"key": "ttft_p90_ms_best", "label": "best TTFT p90 (ms)", "kind": "num",
                     "help": columns.spec_of("ttft_p90_ms_best", "runs").definition,
                     "anchor": columns.LATENCY, "format": "ms"}
    point = columns.Column("usd_per_mtok_output").to_config("points")
    assert point["anchor"] == columns.F_POINT and point["label"] == "$ per M output tokens"
