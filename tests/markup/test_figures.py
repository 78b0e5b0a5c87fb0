"""Numbered figures and tables (scidraft.markup.figures): Pandoc's `![caption](src){#fig:x}`
and `Table: caption {#tbl:x}`, their numbers, captions and references."""

from __future__ import annotations

import pytest

from scidraft.markup import ReferenceTarget, RenderContext, render
from scidraft.markup import excerpt as ex

from .dom import parse
from .hostile_inputs import _timed
from .xss import BODY_PAYLOADS, violations

TABLE = "| Method | Error |\n|---|---|\n| Euler | 0.1 |\n"

NOTE = f"""As \\Cref{{fig:growth}} and \\cref{{tbl:errors}} show, \\ref{{fig:decay}} differs.

![Growth of *the* population $N(t)$](growth.png "Growth"){{#fig:growth}}

Table: Errors of the methods {{#tbl:errors}}

{TABLE}
![Decay](decay.png){{#fig:decay}}

{TABLE}
: Timings, after the table {{#tbl:timings}}

See \\autoref{{fig:decay}}, \\Cref{{tbl:timings}} and \\autoref{{tbl:errors}}.
"""


@pytest.fixture(scope="module")
def rendered():
    return render(NOTE)


def test_labelled_image_is_a_numbered_figure_with_its_alt_text_as_caption(rendered):
    """`![caption](src){#fig:x}` renders a <figure> with the image and "Figure 1: caption"."""
    doc = parse(rendered.html)
    figure = doc.select_one("figure#fig-growth")
    assert figure is not None and figure.classes == ["figure"]
    image = figure.select_one("img")
    assert image.get("src") == "growth.png" and image.get("title") == "Growth"
    assert image.get("alt") == "Growth of the population N(t)"
    caption = figure.select_one("figcaption")
    assert caption.select_one("span.figure-number").text == "Figure 1:"
    assert caption.select_one("em").text == "the"
    assert caption.select_one("span.katex") is not None
    assert not doc.select("p > img")
    assert rendered.warnings == []


def test_figures_and_tables_are_numbered_apart_in_order(rendered):
    """Figures count 1, 2… and tables 1, 2… separately, in order of appearance."""
    doc = parse(rendered.html)
    assert [node.text for node in doc.select("span.figure-number")] == ["Figure 1:", "Figure 2:"]
    assert [node.text for node in doc.select("span.table-number")] == ["Table 1:", "Table 2:"]
    assert rendered.labels == {
        "fig:growth": {"kind": "figure", "number": "1", "text": "Figure 1", "anchor": "fig-growth"},
        "tbl:errors": {"kind": "table", "number": "1", "text": "Table 1", "anchor": "tbl-errors"},
        "fig:decay": {"kind": "figure", "number": "2", "text": "Figure 2", "anchor": "fig-decay"},
        "tbl:timings": {"kind": "table", "number": "2", "text": "Table 2", "anchor": "tbl-timings"},
    }


def test_a_table_caption_before_or_after_the_table_is_shown_above_it(rendered):
    """`Table: caption {#tbl:x}` before the table and `: caption {#tbl:x}` after it both
    caption the table, in a <figure> whose caption comes first; the caption line is gone."""
    doc = parse(rendered.html)
    for anchor, words in (("tbl-errors", "Errors of the methods"), ("tbl-timings", "Timings")):
        figure = doc.select_one(f"figure#{anchor}")
        assert figure.classes == ["table-figure"]
        assert [child.tag for child in figure.elements] == ["figcaption", "table"]
        assert words in figure.select_one("figcaption").text
    assert "{#tbl:" not in rendered.html and "Table: " not in rendered.html


def test_references_print_as_latex_does(rendered):
    """\\ref prints the number, \\cref "fig."/"tab.", \\Cref and \\autoref the kind's name,
    each linked to the figure's or table's anchor."""
    links = [(a.text, a.get("href")) for a in parse(rendered.html).select("a.ref")]
    assert links == [
        ("Figure 1", "#fig-growth"),
        ("tab. 1", "#tbl-errors"),
        ("2", "#fig-decay"),
        ("Figure 2", "#fig-decay"),
        ("Table 2", "#tbl-timings"),
        ("Table 1", "#tbl-errors"),
    ]


def test_references_across_notes_read_the_other_notes_figure():
    """`\\Cref{slug:fig:x}` asks the context for the label `fig:x` of note `slug`."""
    calls = []

    def resolve(pairs):
        calls.append(sorted(pairs))
        target = ReferenceTarget("Figure 3", "/notes/other/#fig-x", kind="figure", number="3")
        return {pair: target for pair in pairs if pair == ("other", "fig:x")}

    context = RenderContext(resolve_references=resolve)
    rendered = render("\\Cref{other:fig:x}, \\cref{other:fig:x}, \\ref{other:fig:x}.", context)
    links = [(a.text, a.get("href")) for a in parse(rendered.html).select("a.ref-external")]
    assert links == [
        ("Figure 3", "/notes/other/#fig-x"),
        ("fig. 3", "/notes/other/#fig-x"),
        ("3", "/notes/other/#fig-x"),
    ]
    assert calls == [[("other", "fig:x")]]


def test_a_figure_label_defined_twice_warns_and_the_second_has_no_id():
    """A label another figure, table or environment already has warns `duplicate-label` on
    the figure's line; the first keeps the label and the id."""
    source = (
        ":::lemma{#fig:a}\nx\n:::\n\n![One](1.png){#fig:a}\n\n![Two](2.png){#fig:b}\n\n"
        f"Table: Three {{#tbl:c}}\n\n{TABLE}\nTable: Four {{#fig:b}}\n\n{TABLE}\n"
    )
    rendered = render(source)
    assert [(w.code, w.line) for w in rendered.warnings] == [("duplicate-label", 5)]
    doc = parse(rendered.html)
    assert [figure.id for figure in doc.select("figure")] == [None, "fig-b", "tbl-c"]
    assert rendered.labels["fig:a"]["kind"] == "lemma"
    twice = render(f"Table: A {{#tbl:x}}\n\n{TABLE}\n\n\nTable: B {{#tbl:x}}\n\n{TABLE}")
    assert [(w.code, w.line) for w in twice.warnings] == [("duplicate-label", 9)]
    assert [figure.id for figure in parse(twice.html).select("figure")] == ["tbl-x", None]


def test_an_unknown_figure_label_warns():
    """`\\Cref{fig:missing}` shows `??` and warns `ref-unresolved`."""
    rendered = render("![A](a.png){#fig:a}\n\nSee \\Cref{fig:missing}.")
    assert [(w.code, w.line) for w in rendered.warnings] == [("ref-unresolved", 3)]


@pytest.mark.parametrize(
    "source",
    [
        "![A plot](plot.png)",
        "![A plot](plot.png) {#sec:x}",
        "![A plot](plot.png){.wide}",
        "Text ![A plot](plot.png){#fig:x}",
        "![A](a.png)![B](b.png){#fig:x}",
        "![A plot](plot.png)\n{#fig:x}",
        TABLE,
        f"{TABLE}\n{{.table-academic}}",
        f"Table: no label\n\n{TABLE}",
        f"Table: wrong kind {{#fig:x}}\n\n{TABLE}",
        "Table: a caption with no table {#tbl:x}",
    ],
)
def test_images_and_tables_without_a_figure_label_render_as_before(source):
    """Without its own label (or where the label is not on a lone image or a table's
    caption), Markdown renders as it always did: no figure, no number, no label."""
    rendered = render(source)
    assert "<figure" not in rendered.html and "figure-number" not in rendered.html
    assert rendered.labels == {}


def test_an_unlabelled_image_keeps_its_exact_html():
    """A paragraph with an image and no label is `<p><img …></p>`, byte for byte."""
    assert render("![A plot](plot.png)").html == '<p><img src="plot.png" alt="A plot"></p>\n'


@pytest.mark.parametrize(("name", "payload"), BODY_PAYLOADS)
def test_captions_carry_no_script(name, payload):
    """Hostile HTML in a figure's or a table's caption is left out or escaped."""
    for source in (
        f"![{payload}](a.png){{#fig:x}}",
        f"Table: {payload} {{#tbl:x}}\n\n{TABLE}",
        f"{TABLE}\n: {payload} {{#tbl:x}}",
    ):
        rendered = render(source)
        assert violations(rendered.html) == [], (name, source, rendered.html)


def test_a_caption_is_text_even_when_it_looks_like_markup():
    """Raw HTML in a caption is left out and escaped characters stay text."""
    rendered = render('![<b onmouseover="x">bold</b> 1 &lt; 2](a.png){#fig:x}')
    caption = parse(rendered.html).select_one("figcaption")
    assert caption.text == "Figure 1: bold 1 < 2"
    assert "<b" not in rendered.html.split("<figcaption>")[1]


def test_plain_text_and_excerpts_read_the_caption_with_its_number():
    """Search text and excerpts read "Figure 1: caption" and "Table 1: caption"."""
    source = f"Intro.\n\n![A growth curve](g.png){{#fig:g}}\n\nTable: Errors {{#tbl:e}}\n\n{TABLE}"
    rendered = render(source)
    assert "Figure 1: A growth curve" in rendered.text
    assert "Table 1: Errors Method Error" in rendered.text
    text = ex.excerpt(ex.segments_from_html(rendered.card_html), words=70).text()
    assert text.startswith("Intro. Figure 1: A growth curve Table 1: Errors")


def test_the_preview_places_the_figure_on_its_source_line():
    """In the editor preview a figure carries the line its image is on."""
    rendered = render("Intro.\n\n![A](a.png){#fig:a}", RenderContext(source_lines=True))
    assert parse(rendered.html).select_one("figure").get("data-source-line") == "3"


@pytest.mark.parametrize(
    "caption",
    [
        "Table: a" + " " * 400_000 + "b {#tbl:x}x",
        ": a" + " \t" * 200_000 + "{#tbl:x} {#tbl:y}.",
        # 300 KB: read whole well within the render's one second on a loaded 2-core machine.
        "Table: " + "{#tbl:" * 50_000,
    ],
)
def test_a_long_caption_line_takes_linear_time(caption):
    """A caption paragraph of hundreds of thousands of spaces or label openers, with or
    without a label that ends it, is read in time linear in its length."""
    rendered = _timed(f"{caption}\n\n{TABLE}")
    assert "<table>" in rendered.html
