"""The quality gate's one-sided test, with hand-computed vectors."""

from __future__ import annotations

import pytest

from epbench.core.metrics.quality import quality_gate


def test_forty_of_fifty_against_fifty_of_fifty_is_below_the_reference():
    # pe = 41/52, pr = 51/52; var = pe(1-pe)/52 + 0.97^2 pr(1-pr)/52 = 0.0035489
    gate = quality_gate(40, 50, 50, 50)
    assert gate.z == pytest.approx(-2.7343, abs=1e-3)
    assert gate.p_value == pytest.approx(0.00313, abs=1e-4)
    assert gate.below


def test_forty_nine_of_fifty_is_not_below_a_perfect_reference():
    gate = quality_gate(49, 50, 50, 50)
    assert gate.z == pytest.approx(0.3142, abs=1e-3)
    assert not gate.below


def test_a_small_sample_cannot_be_called_below():
    assert not quality_gate(8, 10, 10, 10).below


def test_empty_samples_are_refused():
    with pytest.raises(ValueError):
        quality_gate(0, 0, 5, 5)
