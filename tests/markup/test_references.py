"""Golden tests for cross-note references resolved through the context."""

from __future__ import annotations

import pytest

from scidraft.markup import ReferenceTarget, RenderContext, render

from .dom import parse


def _resolver(calls):
    def resolve(pairs):
        calls.append(sorted(pairs))
        target = ReferenceTarget("Lemma 3", "/notes/other-note/#lem-x")
        return {pair: target for pair in pairs if pair == ("other-note", "lem-x")}

    return resolve


def test_cross_note_reference_resolves_through_context():
    """`\\ref{other-note:lem-x}` asks the context and links to the target's URL with its text."""
    calls = []
    context = RenderContext(resolve_references=_resolver(calls))
    rendered = render("See \\ref{other-note:lem-x}.", context)
    link = parse(rendered.html).select_one("a.ref")
    assert link.get("href") == "/notes/other-note/#lem-x"
    assert link.text == "Lemma 3"
    assert calls == [[("other-note", "lem-x")]]
    assert rendered.warnings == []
    assert rendered.references == {
        "other-note:lem-x": {"text": "Lemma 3", "url": "/notes/other-note/#lem-x"}
    }


def test_local_label_wins_over_cross_note_lookup():
    """A label defined in the note (even with a colon) resolves locally, not via the context."""
    calls = []
    source = ":::lemma{#sec:main}\nA.\n:::\n\nSee \\Cref{sec:main}."
    rendered = render(source, RenderContext(resolve_references=_resolver(calls)))
    link = parse(rendered.html).select_one("a.ref")
    assert link.get("href") == "#sec-main" and link.text == "Lemma 1"
    assert calls == []


def test_unresolved_cross_note_reference_warns():
    """A cross-note reference the context cannot resolve shows `??` and warns `ref-unresolved`."""
    calls = []
    source = "Intro.\n\nSee \\ref{nowhere:lem-y} here."
    rendered = render(source, RenderContext(resolve_references=_resolver(calls)))
    doc = parse(rendered.html)
    assert not doc.select("a.ref")
    missing = doc.select_one("span.ref-missing")
    assert missing.text == "??"
    assert [(w.code, w.line) for w in rendered.warnings] == [("ref-unresolved", 3)]
    assert "nowhere:lem-y" in rendered.warnings[0].message


def test_every_cross_note_reference_is_asked_for_in_one_call():
    """Thousands of `\\ref{slug:label}` (a query each would make 20,000 take 15 s) are
    passed to the context at once, each distinct pair once, and each unresolved one is kept
    in `references` as None."""
    calls = []
    source = " ".join(f"\\ref{{note-{n % 500}:lem-{n}}}" for n in range(5_000))
    source += " \\ref{other-note:lem-x} \\eqref{other-note:lem-x}"
    rendered = render(source, RenderContext(resolve_references=_resolver(calls)))
    (pairs,) = calls
    assert len(pairs) == 5_001 and ("other-note", "lem-x") in pairs
    assert rendered.references["other-note:lem-x"]["url"] == "/notes/other-note/#lem-x"
    assert rendered.references["note-7:lem-7"] is None
    assert len(rendered.references) == 5_001


def test_unresolved_local_reference_warns():
    """`\\ref{missing}` without a colon warns `ref-unresolved` on its line."""
    rendered = render("a\nb \\ref{missing}")
    assert [(w.code, w.line) for w in rendered.warnings] == [("ref-unresolved", 2)]


def test_reference_in_code_stays_literal():
    """A `\\ref{…}` inside inline code is not resolved."""
    rendered = render("Write `\\ref{other-note:lem-x}` to link.")
    code = parse(rendered.html).select_one("code")
    assert code.text == "\\ref{other-note:lem-x}"
    assert rendered.warnings == []


# What each command prints for a lemma, an equation and an algorithm, as LaTeX with cleveref
# and hyperref prints it. The theme has no \ref of its own: this is SciDraft's, and it once
# printed the kind for \ref too ("By Theorem \ref{t}" read "By Theorem Theorem 1").
LATEX_REFERENCES = [
    ("ref", "lem", "2"),
    ("ref", "eq", "1"),
    ("eqref", "eq", "(1)"),
    ("eqref", "lem", "(2)"),
    ("cref", "lem", "lemma 2"),
    ("Cref", "lem", "Lemma 2"),
    ("cref", "eq", "eq. (1)"),
    ("Cref", "eq", "Equation (1)"),
    ("autoref", "lem", "Lemma 2"),
    ("autoref", "eq", "Equation 1"),
    ("ref", "alg", "1"),
    ("Cref", "alg", "Algorithm 1"),
]


@pytest.mark.parametrize(("command", "label", "printed"), LATEX_REFERENCES)
def test_each_reference_command_prints_what_latex_prints(command, label, printed):
    """\\ref the number, \\eqref it in parentheses, \\cref/\\Cref cleveref's name in lower
    or upper case, \\autoref hyperref's."""
    source = (
        ":::lemma\nFirst.\n:::\n\n:::lemma{#lem}\nSecond.\n:::\n\n$$\nx = 1 \\label{eq}\n$$\n\n"
        "```pseudo-algorithm\n\\begin{algorithm}\n\\caption{C}\n\\label{alg}\n"
        "\\begin{algorithmic}\n\\State x\n\\end{algorithmic}\n\\end{algorithm}\n```\n\n"
        f"See \\{command}{{{label}}}."
    )
    links = [a for a in parse(render(source).html).select("a") if {"ref", "eqref"} & set(a.classes)]
    assert [link.text for link in links] == [printed]


def test_a_tie_before_a_reference_is_a_non_breaking_space():
    """`Theorem~\\ref{a}` and `equation~\\eqref{b}` in one paragraph: two no-break spaces, not
    Goldmark's one-tilde strikethrough between them; strikethrough elsewhere is untouched."""
    source = (
        ":::theorem{#a}\nT.\n:::\n\n$$\nx \\label{b}\n$$\n\n"
        "By Theorem~\\ref{a} and equation~\\eqref{b}, ~~struck~~ and ~one~."
    )
    html = render(source).html
    assert "Theorem\u00a0<a" in html.replace("&nbsp;", "\u00a0")
    assert "equation\u00a0<a" in html.replace("&nbsp;", "\u00a0")
    assert html.count("<del>") == 2 and "<del>struck</del>" in html and "<del>one</del>" in html
