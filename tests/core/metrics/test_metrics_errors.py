"""Error classes: status mapping and counts with every class present."""

from __future__ import annotations

from epbench.core.metrics.errors import (
    CLASSES_IN_EVERY_RESULT,
    ERROR_CLASSES,
    class_for_status,
    count_errors,
)


def test_statuses_map_to_their_classes():
    assert class_for_status(200) is None
    assert class_for_status(429) == "rate_limited"
    assert class_for_status(404) == "http_4xx"
    assert class_for_status(500) == "http_5xx"
    assert class_for_status(503) == "http_5xx"


def test_counts_list_every_class_and_skip_successes():
    records = [{"class": "ok"}, {"class": "timeout"}, {"class": "timeout"}, {"class": "empty"}]
    counts = count_errors(records)
    assert list(counts) == list(ERROR_CLASSES)
    assert set(CLASSES_IN_EVERY_RESULT) <= set(counts)
    assert counts["timeout"] == 2 and counts["empty"] == 1
    assert sum(counts.values()) == 3


def test_statuses_outside_4xx_and_5xx_are_http_other():
    assert class_for_status(999) == "http_other" and class_for_status(302) == "http_other"
    assert class_for_status(204) is None
