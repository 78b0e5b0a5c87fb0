"""Front matter: split from the body, parsed within its bounds, and its dates read."""

from __future__ import annotations

import datetime as dt

import pytest

from hugosite.front_matter import FrontMatterError, parse_date, split_front_matter


def test_toml_front_matter_is_separated_from_the_body():
    """`+++` TOML front matter is parsed; the body starts on the line after the fence."""
    matter = split_front_matter('+++\ntitle = "A"\ntags = ["x"]\n+++\nBody $x$\n')
    assert matter.format == "toml"
    assert matter.data == {"title": "A", "tags": ["x"]}
    assert matter.body == "Body $x$\n"
    assert matter.body_line == 5


def test_yaml_front_matter_is_separated_from_the_body():
    """`---` YAML front matter is parsed too (standalone pages use it)."""
    matter = split_front_matter("---\ntitle: Search\nlayout: search\n---\n")
    assert matter.format == "yaml"
    assert matter.data["layout"] == "search"


def test_file_without_front_matter_is_all_body():
    """No fence: no metadata, the whole text is the body."""
    matter = split_front_matter("Just text.\n")
    assert matter.data == {} and matter.body == "Just text.\n" and matter.format is None


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ('+++\ntitle = "A"\ndate = \n+++\n', 3, "invalid TOML"),  # value missing, on line 3
        ("---\ntitle: [unclosed\n---\n", None, "invalid YAML"),
        ('+++\ntitle = "A"\n', 1, "never closed"),
        ("---\n- a list\n---\n", 2, "table of keys"),
    ],
)
def test_broken_front_matter_names_the_line(text, line, words):
    """Broken front matter raises FrontMatterError with the file line where that is known."""
    with pytest.raises(FrontMatterError) as caught:
        split_front_matter(text)
    assert words in caught.value.message
    if line is not None:
        assert caught.value.line == line


def test_dates_keep_the_offset_they_were_written_in():
    """`2026-09-22T07:20:00+09:00` keeps +09:00 (540 minutes); a bare date is UTC midnight."""
    moment, offset = parse_date(dt.datetime.fromisoformat("2026-09-22T07:20:00+09:00"))
    assert offset == 540
    assert moment.astimezone(dt.UTC) == dt.datetime(2026, 9, 21, 22, 20, tzinfo=dt.UTC)
    bare, bare_offset = parse_date(dt.date(2026, 9, 20))
    assert bare == dt.datetime(2026, 9, 20, tzinfo=dt.UTC) and bare_offset is None
    from_text, text_offset = parse_date("2026-09-22T07:20:00Z")
    assert text_offset == 0 and from_text.hour == 7


def test_front_matter_expanding_past_its_bound_is_a_problem_of_its_file():
    """YAML aliases that would spell out past MAX_VALUES values (400 bytes made 48 M), and
    nesting past MAX_DEPTH, are refused when the front matter is read, with a message."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i + 1}: &a{i + 1} [" + ", ".join([f"*a{i}"] * 9) + "]" for i in range(6)]
    with pytest.raises(FrontMatterError, match="values once its YAML aliases are expanded"):
        split_front_matter("---\n" + "\n".join(lines) + "\n---\nBody.\n")
    with pytest.raises(FrontMatterError, match="nested more than 64 levels deep"):
        split_front_matter("---\na: " + "[" * 100 + "]" * 100 + "\n---\nBody.\n")
    with pytest.raises(FrontMatterError, match="nested more than 64 levels deep"):
        split_front_matter("+++\na = " + "[" * 5000 + "]" * 5000 + "\n+++\nBody.\n")
