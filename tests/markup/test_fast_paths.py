"""The renderer's fast paths find exactly what the plain forms they replace find.

Each shortcut (the Markdown stage's own paragraph, setext-heading, table and line-break rules
in place of markdown-it's, its table-cell split and ASCII anchors, a regex reordered so the
engine can search for its first character, whitespace collapsed by str.split, a budget check
that reads the CPU clock less often) is checked against the straightforward form on random
text and on every example note.
"""

from __future__ import annotations

import re
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it.rules_block.table import escapedSplit

from hugosite.reading import split_front_matter
from scidraft.markup import code_spans, convert, goldmark, limits, plaintext, table_rule
from scidraft.markup.stash import Stash
from tests.conftest import EXAMPLE_SITE, ROOT

NOTES = sorted((EXAMPLE_SITE / "content" / "notes").glob("*.md")) if EXAMPLE_SITE.is_dir() else []
DEMO_NOTES = sorted((ROOT / "demo" / "content").rglob("*.md"))
RANDOM = settings(max_examples=400, derandomize=True, deadline=None)


def _bodies(paths) -> list[str]:
    return [split_front_matter(path.read_text(encoding="utf-8")).body for path in paths]


def _spans(matches) -> list:
    return [(match.span(), match.groups()) for match in matches]


# --- The Markdown stage's rules --------------------------------------------------------------

FAST, PLAIN = convert.new_parser(), convert.new_parser(fast_paths=False)


def _both(text: str) -> tuple[str, str]:
    rendered = []
    for md in (FAST, PLAIN):
        env = {"stash": Stash(), "headings": []}
        rendered.append(md.renderer.render(md.parse(text, env), md.options, env))
    return rendered[0], rendered[1]


# Block starts and inline constructs, the characters the fast rules look at first, and prose.
MARKDOWN = st.lists(
    st.sampled_from(
        ["word", "Line", " ", "  ", "\n", "\n\n", "\n    ", "\n  ", "- ", "* ", "1. ", "> ",
         "# ", "## ", "===", "---", "***", "___", "|", " | ", "|---|", "|:-:|", "\\|", "```",
         "~~~", ": ", "~ ", "[^1]", "[^1]: ", "[a]: /u", "[a]", "{.x}", "{#i}", "<div>", "<b>",
         "`c`", "*e*", "_e_", "**s**", "~~d~~", "\\", "  \n", "'", '"', "--", "...", "www.a.org",
         "http://a.org", "a@b.org", "\t", "\ue0000\ue001", "\r", "\r\n", "\0"]
    ),
    max_size=30,
).map("".join)  # fmt: skip


@RANDOM
@given(text=MARKDOWN)
def test_fast_rules_render_what_the_librarys_rules_render(text):
    """Markdown built from every block start and inline construct renders to the same HTML
    with the stage's rules and with markdown-it's own."""
    fast, plain = _both(text)
    assert fast == plain


@pytest.mark.skipif(not NOTES, reason="../shared/reference/scidraft-exampleSite is not beside")
def test_fast_rules_render_what_the_librarys_rules_render_on_the_example_notes():
    for body in _bodies(NOTES):
        fast, plain = _both(body)
        assert fast == plain


def test_fast_rules_render_what_the_librarys_rules_render_on_the_demo_notes():
    assert DEMO_NOTES
    for body in _bodies(DEMO_NOTES):
        fast, plain = _both(body)
        assert fast == plain


@RANDOM
@given(row=st.text(alphabet="|\\ab` ", max_size=30))
def test_table_cells_split_as_the_library_splits(row):
    """The regex split of a table row gives markdown-it's escapedSplit cells."""
    assert table_rule.table_cells(row) == escapedSplit(row)


def _anchor_by_loop(text: str) -> str:
    out = []
    for char in text.strip():
        if char in " -":
            out.append("-")
        elif char == "_" or char.isalpha() or char.isdecimal():
            out.append(char.lower()[0])
    return "".join(out)


@RANDOM
@given(text=st.text(alphabet=st.characters(max_codepoint=127), max_size=30))
def test_ascii_anchors_are_the_loops(text):
    """Hugo's anchor of an ASCII heading, by regex, is the character-by-character one."""
    assert goldmark.anchor_name(text) == _anchor_by_loop(text)


# --- Code scans ----------------------------------------------------------------------------------

# The straightforward form of code_spans.INLINE_CODE (lookbehind first).
PLAIN_INLINE_CODE = re.compile(r"(?<![\\`])(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)


@RANDOM
@given(text=st.text(alphabet="`\\ a\nb", max_size=30))
def test_inline_code_regex_matches_its_plain_form(text):
    """Lookbehind moved after the first backtick: the same spans and groups."""
    assert _spans(code_spans.INLINE_CODE.finditer(text)) == _spans(PLAIN_INLINE_CODE.finditer(text))


def _plain_mask_code(text: str) -> str:
    # The earlier implementation: a list of characters, blanked slice by slice.
    def blank(chunk: str) -> str:
        return re.sub(r"[^\n]", " ", chunk)

    chars = list(text)
    for start, end, _ in code_spans.find_fences(text):
        chars[start:end] = blank(text[start:end])
    return PLAIN_INLINE_CODE.sub(lambda match: blank(match.group(0)), "".join(chars))


@RANDOM
@given(text=st.text(alphabet="`~ a\n{}<>", max_size=60))
def test_mask_code_blanks_code_keeping_length_and_lines(text):
    """Fences and code spans become spaces; every other character and each line break stays."""
    masked = code_spans.mask_code(text)
    assert masked == _plain_mask_code(text)
    assert len(masked) == len(text) and masked.count("\n") == text.count("\n")


@pytest.mark.skipif(not NOTES, reason="../shared/reference/scidraft-exampleSite is not beside")
def test_mask_code_of_the_example_notes():
    for body in _bodies(NOTES):
        assert code_spans.mask_code(body) == _plain_mask_code(body)


# --- Plain text ------------------------------------------------------------------------------


def test_str_split_splits_where_the_whitespace_regex_matches():
    """_plain_text collapses spaces with str.split() where it used re.sub(r"\\s+", " "): the
    two agree on every code point."""
    space = re.compile(r"\s")
    characters = (chr(code) for code in range(sys.maxunicode + 1))
    disagree = [c for c in characters if bool(space.match(c)) != c.isspace()]
    assert disagree == []


def test_plain_text_collapses_every_kind_of_space():
    """Runs of any Unicode space become one space, none at the ends."""
    markup = "<p>\u00a0a\u2003\u2003b\x1cc\u3000\n\td\u200be </p>"
    assert plaintext.plain_text(markup, Stash()) == "a b c d\u200be"


def test_escaped_brackets_and_ampersands_at_the_size_limit_are_decoded_in_time():
    """A body of `<` and `&` shown as text (2 MB of `&lt;` and `&amp; `) is decoded by the
    HTML parser in C, well within the render's budget."""
    markup = "<p>" + "&lt;&gt;&quot;" * 100_000 + "&amp; " * 100_000 + "</p>"
    start = time.process_time()
    text = plaintext.plain_text(markup, Stash())
    assert time.process_time() - start < 1.0
    assert text == " ".join(('<>"' * 100_000 + "& " * 100_000).split())


# --- The spent-budget paths ------------------------------------------------------------------

SANITISER_TEXT = st.lists(
    st.sampled_from(
        [chr(code) for code in range(0x21)]
        + list("<>&\"'`;#/!-=ap\x7f\x85\xa0\u2028\u3000\ufeff\ue000\ue001\ue002é")
        + ["&amp;", "&lt;", "<p>", "</p>", "<!--", "<script>", "\r\n", "\n\n", " \n\t\n"]
    ),
    max_size=40,
).map("".join)


@given(SANITISER_TEXT)
@RANDOM
def test_escaped_paragraphs_are_what_the_sanitiser_would_write(text):
    """Markdown's fallback is not sanitised (nh3 took a second over 2 MB of `<`): it is what
    nh3 makes of the same blocks escaped with html.escape, byte for byte."""
    import html

    from scidraft.markup import sanitise

    escaped = "\n".join(
        f"<p>{html.escape(block.strip())}</p>"
        for block in limits.BLANK_LINES.split(text)
        if block.strip()
    )
    assert limits.escaped_paragraphs(text) == sanitise.clean_author_html(escaped)


TAG_TEXT = st.text(alphabet='<>a "=\ue000\ue001', max_size=30)


@given(TAG_TEXT)
@RANDOM
def test_tags_with_placeholders_are_the_tags_that_hold_one(text):
    """fill finds the tags it rewrites with one regex where it visited every tag: the same
    spans, on any text (unclosed and nested brackets included)."""
    from scidraft.markup import fill

    def mark(tag: re.Match) -> str:
        return f"[{tag.group(0)}]"

    every_tag = re.sub(
        r"<[^<>]*>", lambda tag: mark(tag) if "\ue000" in tag.group(0) else tag.group(0), text
    )
    assert fill._TAG_WITH_PLACEHOLDER.sub(mark, text) == every_tag


@given(st.text(alphabet="`a \\", max_size=30))
@RANDOM
def test_inline_code_loop_finds_what_the_substitution_found(text):
    """Inline code spans are taken one by one (to stop when the budget is spent): with time
    left, the same spans as the regex substitution that preceded the loop."""
    from scidraft.markup import code
    from scidraft.markup.stash import TOKEN

    text = "a" + text  # one line that starts with a letter: no fence
    stash = Stash()
    looped = code.protect_code(text, stash, [], {})
    assert TOKEN.sub(lambda match: stash.items[int(match.group(1))].text, looped) == (
        code_spans.INLINE_CODE.sub(lambda match: _inline_text(text, match), text)
    )


def _inline_text(text: str, match: re.Match) -> str:
    content = match.group(2)
    if "\n\n" in content or not code_spans.plain_code_span(text, match):
        return match.group(0)
    content = content.replace("\n", " ")
    if content.startswith(" ") and content.endswith(" ") and content.strip():
        content = content[1:-1]
    return content


# --- Budget checks -------------------------------------------------------------------------------


def test_a_spent_budget_stays_spent_without_reading_the_clock(monkeypatch):
    """Once expired() has seen the budget spent it answers at once: the stages after the
    budget ask once per construct, hundreds of thousands of times."""
    with limits.budget(0):
        assert limits.expired()
        monkeypatch.setattr(limits.time, "thread_time", lambda: 1 / 0)
        monkeypatch.setattr(limits.time, "perf_counter", lambda: 1 / 0)
        assert limits.expired()
        with pytest.raises(limits.BudgetExceeded):
            limits.check()


def test_check_notices_a_spent_budget_at_once():
    """A budget that starts spent, or is exhausted, raises on the very next check."""
    with limits.budget(0), pytest.raises(limits.BudgetExceeded):
        limits.check()
    with limits.budget(10):
        limits.check()
        limits.exhaust()
        with pytest.raises(limits.BudgetExceeded):
            limits.check()


def test_check_notices_an_overrun_within_its_interval():
    """Called in a busy loop, check() raises at most CHECK_INTERVAL (plus scheduling) after
    the budget's CPU time is spent, though it reads the CPU clock far less often."""
    seconds = 0.02
    with limits.budget(seconds):
        start = time.thread_time()
        with pytest.raises(limits.BudgetExceeded):
            while True:
                limits.check()
        overrun = time.thread_time() - start - seconds
    assert -0.001 <= overrun < limits.CHECK_INTERVAL + 0.005


def test_check_outside_a_budget_never_raises():
    limits.check()
    assert limits.remaining() == float("inf")
