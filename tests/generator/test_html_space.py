"""The shell page's indentation and blank lines collapse to one line break each, and nothing a
browser shows differently changes: whitespace inside tags, single spaces between words,
non-breaking spaces and the text of pre, code, kbd, textarea, script and style stay."""

from __future__ import annotations

from epbench.generator.html_space import collapse_space


def test_indentation_and_blank_lines_between_tags_become_one_line_break() -> None:
    html = "\n<html>\n  <head>\n    \n      <meta charset=\"utf-8\">\n\n  </head>\n"
    assert collapse_space(html) == "\n<html>\n<head>\n<meta charset=\"utf-8\">\n</head>\n"


def test_text_keeps_its_words_and_their_single_spaces() -> None:
    html = "<span>\n            Acme  Inference:\tchat\n          </span> <b>x</b>"
    assert collapse_space(html) == "<span>\nAcme  Inference:\tchat\n</span> <b>x</b>"


def test_non_breaking_spaces_are_not_whitespace_here() -> None:
    assert collapse_space("<p>a\u00a0\n  \u00a0b</p>") == "<p>a\u00a0\n\u00a0b</p>"


def test_whitespace_inside_a_tag_and_its_quoted_values_stays() -> None:
    html = '<a title="one\n    two > three"\n     href="x">\n   go</a>'
    assert collapse_space(html) == '<a title="one\n    two > three"\n     href="x">\ngo</a>'


def test_elements_whose_whitespace_shows_or_is_not_text_keep_theirs() -> None:
    for name in ("pre", "code", "kbd", "textarea", "script", "style", "PRE"):
        inner = "line one\n\n    line two\n  "
        html = f"<div>\n  <{name} class=\"c\">{inner}</{name}>\n  </div>"
        assert collapse_space(html) == f"<div>\n<{name} class=\"c\">{inner}</{name}>\n</div>"


def test_comments_and_text_after_the_last_tag_are_handled() -> None:
    assert collapse_space("<!-- a\n\n  b -->\n\n  <p>x</p>\n   \n") == \
        "<!-- a\n\n  b -->\n<p>x</p>\n"
    assert collapse_space("<script>if (a < b) {\n  }\n") == "<script>if (a < b) {\n  }\n"
