"""The CommonMark 0.31.2 spec as a test: every example through `render()`.

Each of the spec's 652 examples (npm `commonmark-spec`, pinned in package.json) either renders
to the spec's HTML after the spec's normalisation, or is listed in BY_DESIGN with the reasons
SciDraft's output differs. A listed example must differ without its reasons' corrections and
match with them: each reason names a correction (REASONS), so a listed example cannot hide a
difference of another kind, and an example that starts passing must leave the table.
"""

from __future__ import annotations

import html
import re

import pytest

from scidraft.markup import render, sanitise

from .commonmark import SPEC, examples, normalise

pytestmark = pytest.mark.skipif(
    not SPEC.is_file(), reason="node_modules/commonmark-spec is missing: run `make setup`"
)


def _sanitised(ours: str, expected: str) -> tuple[str, str]:
    return ours, sanitise.clean_author_html(expected)


def _link_targets(ours: str, expected: str) -> tuple[str, str]:
    return ours, sanitise.external_links(expected)


def _heading_ids(ours: str, expected: str) -> tuple[str, str]:
    return re.sub(r'(<h[1-6][^>]*?) id="[^"]*"', r"\1", ours), expected


_CODE_BLOCK = re.compile(
    r'<div class="highlight"(?: data-lang="[^"]*")?>(?:<span class="code-lang">[^<]*</span>)?'
    r'<pre class="chroma"><code( class="language-[^"]*")?(?: data-lang="[^"]*")?'
    r'(?: tabindex="0")?>(.*?)'
    r"</code></pre></div>",
    re.S,
)


_PLAIN_CODE_BLOCK = re.compile(r"(<pre><code[^>]*>)(.*?)(</code></pre>)", re.S)


def _code_wrapper(ours: str, expected: str) -> tuple[str, str]:
    def plain(match: re.Match) -> str:
        code = html.unescape(re.sub(r"<[^>]+>", "", match.group(2)))
        body = html.escape(code, quote=False) + "\n" if code else ""
        return f"<pre><code{match.group(1) or ''}>{body}</code></pre>"

    def trimmed(match: re.Match) -> str:
        body = match.group(2).rstrip()
        return match.group(1) + (body + "\n" if body else "") + match.group(3)

    return _CODE_BLOCK.sub(plain, ours), _PLAIN_CODE_BLOCK.sub(trimmed, expected)


_TYPOGRAPHY = {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "--",
               "\u2014": "---", "\u2026": "...", "\u00ab": "<<", "\u00bb": ">>"}  # fmt: skip


def _typographer(ours: str, expected: str) -> tuple[str, str]:
    for typographic, plain in _TYPOGRAPHY.items():
        ours = ours.replace(typographic, plain)
    return ours, expected


_LINK = re.compile(r'<a href="([^"]*)"(?: target="_blank" rel="noopener noreferrer")?>([^<]*)</a>')


def _linkify(ours: str, expected: str) -> tuple[str, str]:
    def unwrap(match: re.Match) -> str:
        href, text = html.unescape(match.group(1)), html.unescape(match.group(2))
        linkified = href in {text, f"https://{text}", f"mailto:{text}"}
        return match.group(2) if linkified and match.group(0) not in expected else match.group(0)

    return _LINK.sub(unwrap, ours), expected


REASONS = {
    # The nh3 allowlist cleans the author's raw HTML (comments, unknown tags, unsafe URLs).
    "sanitiser": _sanitised,
    # Links to other sites open in a new tab (docs/theme.md#links-and-images).
    "link-target": _link_targets,
    # Headings get Hugo's ids; CommonMark's reference output has none.
    "heading-id": _heading_ids,
    # Code blocks are Hugo's highlight wrapper with Pygments' Chroma classes (and trailing
    # blank lines are not kept).
    "code-wrapper": _code_wrapper,
    # Hugo's typographer (on by default): curly quotes, dashes, ellipses.
    "typographer": _typographer,
    # Hugo's linkify (GFM's autolink extension): bare www. and http(s) URLs become links.
    "linkify": _linkify,
    # `$…$`, `\\(…\\)` and `\\[…\\]` are math (the theme's passthrough delimiters); no
    # correction undoes typesetting, so the example must hold one.
    "math": None,
    # Code is found before Markdown (so shortcodes and math in it stay literal): a fence is a
    # fence at any indentation and inside a raw HTML block too; the example must hold one.
    "code-first": None,
}
# What an example listed for an uncorrectable reason must contain.
_EVIDENCE = {"math": re.compile(r"\$|\\\(|\\\["), "code-first": re.compile(r"```|~~~")}

# The reasons an example's output differs from the spec's (each in REASONS) → the examples.
BY_DESIGN: dict[tuple[str, ...], tuple[int, ...]] = {
    ("sanitiser",): (
        21,
        31,
        148,
        149,
        150,
        151,
        155,
        156,
        157,
        158,
        160,
        163,
        165,
        169,
        170,
        171,
        172,
        173,
        174,
        175,
        176,
        177,
        178,
        179,
        180,
        181,
        182,
        183,
        184,
        187,
        190,
        191,
        201,
        308,
        309,
        344,
        476,
        477,
        491,
        494,
        524,
        536,
        596,
        598,
        599,
        601,
        613,
        614,
        615,
        616,
        617,
        623,
        625,
        627,
        628,
        629,
        630,
        631,
        642,
        643,
    ),
    ("heading-id",): (
        10,
        59,
        62,
        66,
        67,
        68,
        71,
        72,
        73,
        74,
        75,
        76,
        77,
        78,
        80,
        81,
        82,
        83,
        84,
        86,
        89,
        90,
        95,
        96,
        102,
        103,
        115,
        214,
        215,
        227,
        228,
        229,
        230,
        232,
        300,
        646,
        647,
    ),
    ("code-wrapper",): (
        19,
        24,
        34,
        119,
        120,
        122,
        123,
        124,
        125,
        126,
        127,
        128,
        129,
        130,
        131,
        132,
        133,
        135,
        136,
        137,
        139,
        140,
        142,
        143,
        144,
        146,
        147,
        212,
        237,
        263,
        278,
        318,
        321,
        324,
    ),
    ("typographer",): (
        14,
        46,
        55,
        87,
        106,
        197,
        209,
        210,
        352,
        359,
        363,
        380,
        385,
        395,
        508,
        590,
        619,
        620,
        622,
        624,
        650,
    ),
    ("link-target",): (
        20,
        346,
        480,
        481,
        501,
        526,
        538,
        594,
        595,
        600,
        603,
    ),
    ("linkify",): (
        608,
        611,
        612,
    ),
    ("math",): (
        12,
        495,
        498,
    ),
    ("code-first",): (
        134,
        161,
    ),
    ("heading-id", "code-wrapper"): (141,),
    ("heading-id", "typographer"): (91,),
    ("sanitiser", "typographer"): (626,),
}


# Example number → its reasons.
REASONS_OF = {number: reasons for reasons, numbers in BY_DESIGN.items() for number in numbers}


def _corrected(ours: str, expected: str, reasons: tuple[str, ...]) -> tuple[str, str]:
    for reason in reasons:
        correction = REASONS[reason]
        if correction is not None:
            ours, expected = correction(ours, expected)
    return ours, expected


EXAMPLES = examples() if SPEC.is_file() else []


def test_the_spec_has_its_652_examples():
    """The pinned spec is the one the table was written against."""
    assert len(EXAMPLES) == 652


def test_by_design_table_names_known_reasons_only():
    """Every listed example exists, is listed once, and every reason is one of REASONS."""
    listed = [number for numbers in BY_DESIGN.values() for number in numbers]
    assert len(listed) == len(set(listed)) == len(REASONS_OF)
    assert set(listed) <= {example.number for example in EXAMPLES}
    assert {reason for reasons in BY_DESIGN for reason in reasons} <= set(REASONS)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda example: str(example.number))
def test_example(example):
    """The example renders as the spec says, or differs only for its listed reasons."""
    ours = render(example.markdown).html
    reasons = REASONS_OF.get(example.number)
    if reasons is None:
        assert normalise(ours) == normalise(example.html), example.section
        return
    assert normalise(ours) != normalise(example.html), "passes: drop it from BY_DESIGN"
    uncorrectable = [reason for reason in reasons if REASONS[reason] is None]
    for reason in uncorrectable:
        assert _EVIDENCE[reason].search(example.markdown), f"no sign of {reason}"
    if uncorrectable:
        return  # typeset, or another block structure: nothing to correct it back to
    corrected, expected = _corrected(ours, example.html, reasons)
    assert normalise(corrected) == normalise(expected), example.section
