"""Notes from their front matter: math macros in every shape a site writes them."""

from __future__ import annotations

import pytest

from hugosite.content import math_macros, note_from_front_matter
from hugosite.front_matter import split_front_matter


@pytest.mark.parametrize(
    ("value", "latex"),
    [
        ("\\newcommand{\\R}{\\mathbb{R}}\n", "\\newcommand{\\R}{\\mathbb{R}}"),
        (["\\def\\a{a}", "\\def\\b{b}"], "\\def\\a{a}\n\\def\\b{b}"),
        ({"R": "\\mathbb{R}"}, "\\newcommand{\\R}{\\mathbb{R}}"),
        ({"norm": ["\\lVert #1 \\rVert", 1]}, "\\newcommand{\\norm}[1]{\\lVert #1 \\rVert}"),
        ({"opt": ["#1+#2", 2, "d"]}, "\\newcommand{\\opt}[2][d]{#1+#2}"),
        (None, ""),
    ],
)
def test_math_macros_are_read_from_every_shape_a_site_writes(value, latex):
    """LaTeX, a list of lines, and MathJax's tex.macros table (a body, or [body, arguments,
    default]) all become LaTeX definitions."""
    assert math_macros(value) == latex


def test_front_matter_math_macros_go_to_the_note_field():
    """`mathMacros` in front matter (any case) is the note's preamble, not a kept param."""
    matter = split_front_matter('+++\ntitle = "A"\nmathmacros = "\\\\def\\\\x{y}"\n+++\nBody\n')
    note = note_from_front_matter("content/notes/a.md", "a", matter)
    assert note.math_macros == "\\def\\x{y}"
    assert "mathmacros" not in note.params
