"""The checks' `match` rules and optional arguments, with hand-written cases."""

from __future__ import annotations

from epbench.runner.agentic.matching import call_matches, normalize_string
from epbench.runner.agentic.model import ExpectedCall, Match

BFCL = Match(strings="bfcl", numbers="strict", arguments="exact")
PARAMS = {"type": "object", "properties": {
    "city": {"type": "string"}, "days": {"type": "integer"}, "temp": {"type": "number"},
    "ids": {"type": "array", "items": {"type": "integer"}}, "unit": {"type": "string"}}}
EXPECTED = ExpectedCall("weather", {"city": ["New York, NY"], "days": [3], "temp": [20.0],
                                    "ids": [[1, 2]], "unit": ["celsius", ""]}, ("unit",))
GOOD = {"city": "new york ny", "days": 3, "temp": 20, "ids": [1, 2]}


def test_bfcl_normalization_drops_spaces_and_punctuation_and_reads_single_quotes_as_double():
    assert normalize_string("April 1, 2024", "bfcl") == normalize_string("april 1 2024", "bfcl")
    assert normalize_string("It's_a-b/c*d^e.", "bfcl") == 'it"sabcde'
    assert normalize_string("A  b", "casefold") == "a b"
    assert normalize_string("A  b", "exact") == "A  b"


def test_an_int_for_a_float_is_widened_and_an_optional_argument_may_be_left_out():
    assert call_matches(EXPECTED, "weather", GOOD, BFCL, PARAMS)


def test_a_float_for_an_integer_fails_under_strict_numbers_only():
    for args in ({**GOOD, "days": 3.0}, {**GOOD, "ids": [1.0, 2]}):
        assert not call_matches(EXPECTED, "weather", args, BFCL, PARAMS)
        assert call_matches(EXPECTED, "weather", args, Match(strings="bfcl",
                                                             arguments="exact"), PARAMS)


def test_an_argument_beyond_the_listed_ones_fails_under_exact_arguments_only():
    args = {**GOOD, "extra": 1}
    assert not call_matches(EXPECTED, "weather", args, BFCL, PARAMS)
    assert call_matches(EXPECTED, "weather", args, Match(strings="bfcl", numbers="strict"),
                        PARAMS)


def test_a_missing_required_argument_and_a_wrong_value_fail():
    assert not call_matches(EXPECTED, "weather", {k: v for k, v in GOOD.items() if k != "days"},
                            BFCL, PARAMS)
    assert not call_matches(EXPECTED, "weather", {**GOOD, "city": "Boston"}, BFCL, PARAMS)
    assert call_matches(EXPECTED, "weather", {**GOOD, "unit": "Celsius"}, BFCL, PARAMS)
    assert call_matches(EXPECTED, "weather", {**GOOD, "unit": ""}, BFCL, PARAMS)


def test_an_empty_accepted_list_means_the_optional_argument_must_be_left_out():
    must_omit = ExpectedCall("weather", {"city": ["x"], "unit": []}, ("unit",))
    assert call_matches(must_omit, "weather", {"city": "x"}, BFCL, PARAMS)
    assert not call_matches(must_omit, "weather", {"city": "x", "unit": "c"}, BFCL, PARAMS)
