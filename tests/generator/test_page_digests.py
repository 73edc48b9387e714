"""A result page is rendered again exactly when what it is made from changed: its row (any
column, lists included), its frontier marks, its file's sha256 or the build context."""

from __future__ import annotations

import pandas as pd

from epbench.generator.build.page_manifest import page_digests


def runs() -> pd.DataFrame:
    return pd.DataFrame({
        "run_id": ["run-aaaa-0001", "run-bbbb-0002", "run-cccc-0003"],
        "result_path": ["results/a.json", "results/b.json", "results/c.json"],
        "rankable": [True, False, True],
        "unranked_reasons": [[], ["quick run"], []],
        "system_tps": [1000.5, 900.0, float("nan")],
    })


SHAS = {"results/a.json": "a" * 64, "results/b.json": "b" * 64}
FRONT = {"run-aaaa-0001": ["c1", "c4"]}


def test_the_same_inputs_give_the_same_digests_and_an_unknown_file_none() -> None:
    first = page_digests(runs(), FRONT, SHAS, "ctx")
    assert first == page_digests(runs(), FRONT, SHAS, "ctx")
    assert first[0] and first[1] and first[0] != first[1]
    assert first[2] is None  # its sha256 is unknown: always rendered


def test_any_change_to_a_row_its_frontier_its_file_or_the_context_changes_its_digest() -> None:
    base = page_digests(runs(), FRONT, SHAS, "ctx")
    reasons = runs()
    reasons.at[1, "unranked_reasons"] = ["quick run", "dead endpoint"]
    figure = runs()
    figure.at[0, "system_tps"] = 1000.25
    assert page_digests(reasons, FRONT, SHAS, "ctx")[1] != base[1]
    assert page_digests(reasons, FRONT, SHAS, "ctx")[0] == base[0]  # only its own page
    assert page_digests(figure, FRONT, SHAS, "ctx")[0] != base[0]
    assert page_digests(runs(), {"run-aaaa-0001": ["c1"]}, SHAS, "ctx")[0] != base[0]
    assert page_digests(runs(), FRONT, {**SHAS, "results/a.json": "f" * 64}, "ctx")[0] != base[0]
    assert page_digests(runs(), FRONT, SHAS, "other")[:2] != base[:2]
