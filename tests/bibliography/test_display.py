"""Decoding BibTeX values for display (bibliography.display)."""

from __future__ import annotations

import pytest

from bibliography.display import display_fields, display_persons, latex_to_text


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("Caf{\\'e}", "Café"),
        ('M{\\"u}ller', "Müller"),
        ('G\\"{o}del', "Gödel"),
        ("Fran{\\c c}ois", "François"),
        ("Stra{\\ss}e", "Straße"),
        ("\\'{E}cole", "École"),
        ("Garc{\\'\\i}a", "García"),
        ("{\\L}ukasz \\v{C}ech S{\\o}ren", "Łukasz Čech Søren"),
        ('Na{\\"\\i}ve', "Naïve"),
        ("{BERT}: Pre-training of Deep {T}ransformers", "BERT: Pre-training of Deep Transformers"),
        ("pages 1--10, a---b", "pages 1–10, a—b"),
        ("4~March", "4\u00a0March"),
        ("100\\% sure", "100% sure"),
        ("\\emph{Attention} is \\textbf{all} you need", "Attention is all you need"),
        ("Title\n   over  lines", "Title over lines"),
    ],
)
def test_latex_is_decoded_to_unicode(value, shown):
    """Accents, protective braces, dashes, ties, escapes and formatting commands."""
    assert latex_to_text(value) == shown


@pytest.mark.parametrize(
    "value",
    [
        "$\\alpha$-divergence",
        "bound $O(n^{1/2})$ and $\\frac{a}{b}$",
    ],
)
def test_math_is_shown_as_written(value):
    """Math keeps its braces and commands: it is shown as the author wrote it."""
    assert latex_to_text(value) == value


def test_urls_are_kept_verbatim():
    """`%`, `_` and `~` in a \\url are part of the address, not LaTeX."""
    value = "see \\url{https://example.org/a_b%20c~d}"
    assert latex_to_text(value) == "see https://example.org/a_b%20c~d"


def test_bare_percent_is_text_not_a_comment():
    """In a BibTeX value `%` is a character; it must not swallow the rest of the value."""
    assert latex_to_text("50% of {C}ases") == "50% of Cases"


@pytest.mark.parametrize(
    "value",
    ["{unbalanced", "too many}}", "}{", "trailing backslash \\", "\\", "{" * 5000, "\x00"],
)
def test_undecodable_values_are_shown_as_written(value):
    """Never raises: what pybtex cannot read comes back unchanged."""
    assert latex_to_text(value) == value


def test_non_strings_do_not_raise():
    """None and numbers (JSON fields can hold anything) become text."""
    assert latex_to_text(None) == ""
    assert latex_to_text(2001) == "2001"


def test_display_fields_keeps_identifiers_verbatim():
    """Titles are decoded; url and doi are addresses and stay exactly as stored."""
    fields = {
        "title": "Caf{\\'e} {BERT}",
        "url": "https://x.org/a--b_{c}",
        "doi": "10.1000/a--b",
        "year": "2001",
    }
    assert display_fields(fields) == {
        "title": "Café BERT",
        "url": "https://x.org/a--b_{c}",
        "doi": "10.1000/a--b",
        "year": "2001",
    }


def test_display_persons_decodes_every_name():
    """Names keep their order and roles; each is decoded."""
    persons = {"author": ['M{\\"u}ller, J{\\"o}rg', "Knuth, Donald E."], "editor": ["{\\AA}se"]}
    assert display_persons(persons) == {
        "author": ["Müller, Jörg", "Knuth, Donald E."],
        "editor": ["Åse"],
    }
