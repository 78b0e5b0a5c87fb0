"""The renderer's fast paths find exactly what the plain forms they replace find.

Each shortcut (inline patterns passed over where their regex cannot match, a table test that
turns away blocks without a pipe, a regex reordered so the engine can search for its first
character, whitespace collapsed by str.split, a budget check that reads the CPU clock less
often) is checked against the straightforward form on random text and on every example note.
"""

from __future__ import annotations

import inspect
import re
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown import treeprocessors
from markdown.extensions.tables import TableProcessor

from hugo.reading import split_front_matter
from scidraft.markup import convert, limits, pipeline, protect
from scidraft.markup.stash import Stash
from tests.conftest import EXAMPLE_SITE

NOTES = sorted((EXAMPLE_SITE / "content" / "notes").glob("*.md")) if EXAMPLE_SITE.is_dir() else []
# What the patterns look for (and look behind), the characters that case-fold to them, and
# filler: a short random string over these hits every branch of every regex.
ALPHABET = "`\\[]^!()<>@&#;*_~:/.-+| \n\twWhHtTfFpPsSxa1é\u0130\u212a\ue000"
RANDOM = settings(max_examples=400, derandomize=True, deadline=None)


def _bodies() -> list[str]:
    return [split_front_matter(path.read_text(encoding="utf-8")).body for path in NOTES]


def _prefiltered() -> list[tuple[str, convert.PrefilteredRegex]]:
    md = convert._new_markdown()
    return [
        (item.name, md.inlinePatterns[item.name].getCompiledRegExp())
        for item in md.inlinePatterns._priority
    ]


def _spans(matches) -> list:
    return [(match.span(), match.groups()) for match in matches]


# --- Inline patterns -----------------------------------------------------------------------------


def test_every_inline_pattern_is_prefiltered():
    """Every inline pattern's regex is one whose substrings were read off by hand. After a
    Python-Markdown or pymdown-extensions upgrade that changes a regex, this fails: that
    pattern then runs unfiltered (same output, slower) until its entry is worked out again."""
    unfiltered = [
        name for name, regex in _prefiltered() if not isinstance(regex, convert.PrefilteredRegex)
    ]
    assert unfiltered == []


@RANDOM
@given(text=st.text(alphabet=ALPHABET, max_size=40), pos=st.integers(0, 8))
def test_prefiltered_regexes_find_what_their_regexes_find(text, pos):
    """From any start position, a prefiltered regex yields the same matches as its regex."""
    for name, regex in _prefiltered():
        assert _spans(regex.finditer(text, pos)) == _spans(regex.regex.finditer(text, pos)), name


@pytest.mark.skipif(not NOTES, reason="../shared/reference/scidraft-exampleSite is not beside")
def test_prefiltered_regexes_find_what_their_regexes_find_in_the_example_notes():
    """Every example note, line by line: the same matches, filtered or not."""
    patterns = _prefiltered()
    for body in _bodies():
        for line in body.split("\n"):
            for name, regex in patterns:
                assert _spans(regex.finditer(line)) == _spans(regex.regex.finditer(line)), name


def test_a_prefiltered_regex_skips_text_without_its_substrings():
    """No substring, no scan: the regex itself is not run (an empty iterator comes back)."""
    regex = convert.PrefilteredRegex(re.compile(r"(?<!\\)`"), ("`",), False)
    assert regex.possible("a `b`") and not regex.possible("plain prose")
    assert not regex.possible("`code` then prose", 6)
    lowered = convert.PrefilteredRegex(re.compile(r"(?i)www\."), ("www.",), True)
    assert lowered.possible("see WWW.example.org") and not lowered.possible("see example.org")


# The library's inline loop that PrefilteredInlineProcessor repeats (Markdown 3.11), docstring
# left out.
LIBRARY_INLINE_LOOP = """\
        if not isinstance(data, util.AtomicString):
            startIndex = 0
            count = len(self.inlinePatterns)
            while patternIndex < count:
                data, matched, startIndex = self.__applyPattern(
                    self.inlinePatterns[patternIndex], data, patternIndex, startIndex
                )
                if not matched:
                    patternIndex += 1
        return data
"""


def test_the_library_inline_loop_is_the_one_repeated():
    """PrefilteredInlineProcessor overrides this private loop: after an upgrade that changes
    it, this fails and the override must be brought in line (or dropped)."""
    source = inspect.getsource(treeprocessors.InlineProcessor._InlineProcessor__handleInline)
    assert source.endswith(LIBRARY_INLINE_LOOP)


@RANDOM
@given(text=st.text(alphabet=ALPHABET, max_size=40))
def test_a_try_that_finds_nothing_changes_nothing(text):
    """What passing over a pattern assumes of the library: trying a pattern whose substrings
    are absent returns the text as it was, unmatched, with the next search from 0."""
    md = convert._new_markdown()
    processor = md.treeprocessors["inline"]
    processor.ancestors = []
    for index, pattern in enumerate(md.inlinePatterns):
        if not pattern.getCompiledRegExp().possible(text):
            tried = processor._InlineProcessor__applyPattern(pattern, text, index, 0)
            assert tried == (text, False, 0)


MARKDOWN = st.lists(
    st.sampled_from(
        ["*a*", "**b**", "_c_", "`d`", "[e](http://x.org)", "![f](g.png)", "[h][1]", "[^2]",
         "<b>i</b>", "<http://j.org>", "<k@l.org>", "m@n.org", "www.o.org", "https://p.org",
         "&amp;", "&#35;", "~~q~~", "\\*", "  \n", "\n\n", "\n- ", "\n# ", "| r |", " ",
         "s", "WWW.T.ORG", "\n\n[1]: http://u.org", "\n\n[^2]: v"]
    ),
    max_size=25,
).map("".join)  # fmt: skip


@RANDOM
@given(text=MARKDOWN)
def test_markdown_output_is_the_libraries(text):
    """Markdown built from every inline construct converts to the same HTML with the
    renderer's instance (prefilters, budget checks) and the library's plain one."""
    ours, library = convert._new_markdown(), convert._markdown()
    assert ours.convert(text) == library.convert(text)


@pytest.mark.skipif(not NOTES, reason="../shared/reference/scidraft-exampleSite is not beside")
def test_markdown_output_is_the_libraries_on_the_example_notes():
    ours, library = convert._new_markdown(), convert._markdown()
    for body in _bodies():
        ours.reset(), library.reset()
        assert ours.convert(body) == library.convert(body)


# --- Tables --------------------------------------------------------------------------------------


@RANDOM
@given(block=st.text(alphabet="|-: a`\\\n{}.", max_size=30))
def test_table_test_agrees_with_the_library(block):
    """The pipe check in front of the table test turns away only blocks the library's test
    turns away too."""
    md = convert._markdown()
    ours = md.parser.blockprocessors["table"]
    library = TableProcessor(md.parser, {"use_align_attribute": False})
    assert ours.test(None, block) == library.test(None, ours._strip_attributes(block)[0])


# --- Code scans ----------------------------------------------------------------------------------

# The straightforward form of protect._INLINE_CODE (lookbehind first).
PLAIN_INLINE_CODE = re.compile(r"(?<![\\`])(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)


@RANDOM
@given(text=st.text(alphabet="`\\ a\nb", max_size=30))
def test_inline_code_regex_matches_its_plain_form(text):
    """Lookbehind moved after the first backtick: the same spans and groups."""
    assert _spans(protect._INLINE_CODE.finditer(text)) == _spans(PLAIN_INLINE_CODE.finditer(text))


def _plain_mask_code(text: str) -> str:
    # The earlier implementation: a list of characters, blanked slice by slice.
    def blank(chunk: str) -> str:
        return re.sub(r"[^\n]", " ", chunk)

    chars = list(text)
    for start, end, _ in protect.find_fences(text):
        chars[start:end] = blank(text[start:end])
    return PLAIN_INLINE_CODE.sub(lambda match: blank(match.group(0)), "".join(chars))


@RANDOM
@given(text=st.text(alphabet="`~ a\n{}<>", max_size=60))
def test_mask_code_blanks_code_keeping_length_and_lines(text):
    """Fences and code spans become spaces; every other character and each line break stays."""
    masked = protect.mask_code(text)
    assert masked == _plain_mask_code(text)
    assert len(masked) == len(text) and masked.count("\n") == text.count("\n")


@pytest.mark.skipif(not NOTES, reason="../shared/reference/scidraft-exampleSite is not beside")
def test_mask_code_of_the_example_notes():
    for body in _bodies():
        assert protect.mask_code(body) == _plain_mask_code(body)


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
    assert pipeline._plain_text(markup, Stash()) == "a b c d\u200be"


ENTITY_TEXT = st.text(alphabet="&;#ltgquoamxX0123456789ab<> ", max_size=40)


@given(ENTITY_TEXT)
@RANDOM
def test_unescape_agrees_with_html_unescape(text):
    """The quick unescape of &lt; &gt; &quot; gives what html.unescape gives, on any mix of
    references, broken ones and bare ampersands included."""
    import html

    assert pipeline._unescape(text) == html.unescape(text)


def test_unescape_of_escaped_brackets_skips_html_unescape(monkeypatch):
    """A body of `<` shown as text (millions of `&lt;`) is decoded by str.replace, never by
    html.unescape's Python call per reference (seconds at the body size limit)."""

    def refuse(text):
        raise AssertionError("html.unescape was called")

    monkeypatch.setattr(pipeline.html_lib, "unescape", refuse)
    assert pipeline._unescape("&lt;&gt;&quot;" * 1000) == '<>"' * 1000


def test_unescape_of_escaped_ampersands_skips_html_unescape(monkeypatch):
    """Only &amp; besides those three (2 MB of `&amp; ` shown as text) is decoded by
    str.replace too, &amp; last, so that `&amp;lt;` stays `&lt;`."""
    monkeypatch.setattr(pipeline.html_lib, "unescape", lambda text: 1 / 0)
    assert pipeline._unescape("&amp;lt; &lt;&amp;amp;&quot;" * 1000) == '&lt; <&amp;"' * 1000


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
        for block in limits._BLANK_LINES.split(text)
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
        protect._INLINE_CODE.sub(lambda match: _inline_text(match), text)
    )


def _inline_text(match: re.Match) -> str:
    content = match.group(2)
    if "\n\n" in content:
        return match.group(0)
    if content.startswith(" ") and content.endswith(" ") and content.strip():
        content = content[1:-1]
    return content.replace("\n", " ")


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
