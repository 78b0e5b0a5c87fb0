"""Golden tests for cross-note references resolved through the context."""

from __future__ import annotations

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
    source = ":::lemma{#sec:main}\nA.\n:::\n\nSee \\ref{sec:main}."
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
    """Thousands of `\\ref{slug:label}` (a query each made 20,000 take 15 s, issue 16) are
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
