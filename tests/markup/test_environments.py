"""Golden tests for theorem-like environments: bold lead-ins and fenced `:::kind` blocks."""

from __future__ import annotations

from scidraft.markup import EnvironmentKind, RenderContext, render

from .dom import normalise_space, parse, tex_annotations


def _codes(rendered, code):
    return [warning for warning in rendered.warnings if warning.code == code]


def test_bold_lead_ins_recorded_and_rendered_plain():
    """`**Lemma (name).**` renders as a plain bold paragraph and is recorded with kind and name."""
    source = (
        "**Lemma (shift invariance).** For any \\(z\\) it holds.\n\n"
        "**Proof.** Trivial.\n\n"
        "**Definition 3 (attention).** Let it be.\n"
    )
    rendered = render(source)
    doc = parse(rendered.html)
    paragraphs = doc.select("p")
    assert len(paragraphs) == 3
    first = paragraphs[0]
    assert first.elements[0].tag == "strong"
    assert first.elements[0].text == "Lemma (shift invariance)."
    assert not doc.select(".env")  # theme fidelity: no environment machinery
    found = [(env["kind"], env["name"]) for env in rendered.environments]
    assert found == [("lemma", "shift invariance"), ("proof", ""), ("definition", "attention")]
    assert [env["line"] for env in rendered.environments] == [1, 3, 5]


def test_fenced_environment_numbering_per_counter():
    """Theorem and lemma share a counter, definitions count apart, proofs are unnumbered with ∎."""
    source = (
        ":::definition[Softmax]\nA map.\n:::\n\n"
        ":::theorem\nT.\n:::\n\n"
        ":::lemma[Shift]{#lem-shift}\nL.\n:::\n\n"
        ":::proof\nP.\n:::\n\n"
        ":::definition\nD2.\n:::\n"
    )
    rendered = render(source)
    doc = parse(rendered.html)
    heads = [normalise_space(p.text) for p in doc.select("div.env > p.env-head")]
    assert heads == [
        "Definition 1 (Softmax).",
        "Theorem 1.",
        "Lemma 2 (Shift).",
        "Proof.",
        "Definition 2.",
    ]
    lemma = doc.select_one("div.env.env-lemma")
    assert lemma.id == "lem-shift"
    assert lemma.select_one("strong.env-title").text == "Lemma 2"
    assert lemma.select_one("span.env-name").text == "(Shift)"
    proof = doc.select_one("div.env.env-proof")
    assert "env-style-proof" in proof.classes
    qed = proof.select("span.env-qed")
    assert len(qed) == 1 and qed[0].text == "∎"
    assert proof.elements[-1] is qed[0]
    assert not doc.select("div.env-lemma span.env-qed")
    blocks = [(e["kind"], e["number"], e["label"]) for e in rendered.environments]
    assert blocks == [
        ("definition", "1", ""),
        ("theorem", "1", ""),
        ("lemma", "2", "lem-shift"),
        ("proof", "", ""),
        ("definition", "2", ""),
    ]
    assert rendered.labels["lem-shift"]["text"] == "Lemma 2"
    assert rendered.warnings == []


def test_nesting_proof_around_remark():
    """`::::proof` may contain a `:::remark`; the remark sits inside the proof, ∎ ends the proof."""
    source = "::::proof\nOuter.\n\n:::remark\nInner remark.\n:::\n\nMore proof.\n::::\n\nAfter."
    rendered = render(source)
    doc = parse(rendered.html)
    proof = doc.select_one("div.env-proof")
    remark = proof.select_one("div.env-remark")
    assert remark is not None
    assert "Inner remark." in remark.text
    assert "More proof." in proof.text and "More proof." not in remark.text
    assert proof.elements[-1].tag == "span" and "env-qed" in proof.elements[-1].classes
    assert "After." not in proof.text
    assert normalise_space(remark.select_one("p.env-head").text) == "Remark 1."
    assert rendered.warnings == []


def test_environment_content_has_markdown_and_math():
    """Environment bodies are Markdown (lists, emphasis) with math."""
    source = (
        ":::theorem[Bound]\nFor *every* \\(x\\):\n\n- one $a_1$\n- two\n\n$$\nx \\le 1\n$$\n:::\n"
    )
    rendered = render(source)
    doc = parse(rendered.html)
    env = doc.select_one("div.env-theorem")
    assert env.select("em")[0].text == "every"
    assert len(env.select("ul > li")) == 2
    assert len(env.select(".katex")) == 3
    assert tex_annotations(rendered.html) == ["x", "a_1", r"x \le 1"]


def test_environment_title_with_math():
    """Math in an environment title is typeset inside the heading."""
    rendered = render(":::lemma[Bound on \\(x\\)]\nBody.\n:::\n")
    doc = parse(rendered.html)
    name = doc.select_one("p.env-head span.env-name")
    assert name.select(".katex")


def test_ref_to_environment_label():
    """`\\ref{lem-shift}` renders "Lemma 2" as a link to `#lem-shift`, even before the block."""
    source = (
        "As \\Cref{lem-shift} shows.\n\n:::theorem\nA.\n:::\n\n"
        ":::lemma{#lem-shift}\nB.\n:::\n\nAgain \\Cref{lem-shift}."
    )
    rendered = render(source)
    doc = parse(rendered.html)
    links = doc.select("a.ref")
    assert [(a.get("href"), a.text) for a in links] == [("#lem-shift", "Lemma 2")] * 2
    assert rendered.warnings == []


def test_unknown_kind_warns():
    """An unknown kind gives an `environment-unknown` warning on its line; the content is kept."""
    rendered = render("Intro.\n\n:::wonder[Hm]\nStill shown.\n:::\n")
    warnings = _codes(rendered, "environment-unknown")
    assert [w.line for w in warnings] == [3]
    assert "Still shown." in parse(rendered.html).text


def test_duplicate_label_warns():
    """Two environments with the same label give a `duplicate-label` warning on the second."""
    source = ":::lemma{#dup}\nA.\n:::\n\n:::theorem{#dup}\nB.\n:::\n"
    rendered = render(source)
    assert [w.line for w in _codes(rendered, "duplicate-label")] == [5]
    assert len(parse(rendered.html).select("#dup")) == 1


def test_unclosed_environment_warns_with_opening_line():
    """A block never closed warns `environment-unclosed` at its opening line; content kept."""
    rendered = render("Intro.\n\nMore.\n\n:::lemma\nNo end here.\n")
    assert [w.line for w in _codes(rendered, "environment-unclosed")] == [5]
    env = parse(rendered.html).select_one("div.env-lemma")
    assert env is not None and "No end here." in env.text


def test_custom_kinds_from_context():
    """Kinds, labels, counters and styles come from the context's environments."""
    kinds = (
        EnvironmentKind("satz", "Satz", "Sätze", counter="main"),
        EnvironmentKind("hilfssatz", "Hilfssatz", "Hilfssätze", counter="main"),
        EnvironmentKind("beweis", "Beweis", numbered=False, style="proof"),
        EnvironmentKind("bemerkung", "Bemerkung", style="remark"),
    )
    context = RenderContext(environments=kinds)
    source = (
        ":::satz\nA.\n:::\n\n:::hilfssatz{#h}\nB.\n:::\n\n:::beweis\nC.\n:::\n\n"
        ":::bemerkung\nD.\n:::\n\n:::lemma\nE.\n:::\n\n"
        "**Satz (Gauss).** Lead-in.\n\nSiehe \\Cref{h}."
    )
    rendered = render(source, context)
    doc = parse(rendered.html)
    heads = [normalise_space(p.text) for p in doc.select("p.env-head")]
    assert heads[:4] == ["Satz 1.", "Hilfssatz 2.", "Beweis.", "Bemerkung 1."]
    assert doc.select_one("div.env-beweis span.env-qed") is not None
    assert "env-style-remark" in doc.select_one("div.env-bemerkung").classes
    # lemma is not a kind in this context
    assert [w.code for w in rendered.warnings] == ["environment-unknown"]
    assert doc.select_one("a.ref").text == "Hilfssatz 2"
    assert ("satz", "Gauss") in [(e["kind"], e["name"]) for e in rendered.environments]
