"""Golden tests for the theme's Hugo shortcodes."""

from __future__ import annotations

import pytest

from scidraft.markup import RenderContext, render

from .dom import normalise_space, parse


def _codes(rendered, code):
    return [warning for warning in rendered.warnings if warning.code == code]


@pytest.mark.parametrize(
    ("opening", "closing"),
    [
        ("{{<preview>}}", "{{</preview>}}"),
        ("{{< preview >}}", "{{< /preview >}}"),
        ("{{%  preview  %}}", "{{%  /preview  %}}"),
        ("{{<  preview>}}", "{{< / preview >}}"),
    ],
)
def test_preview_spacing_tolerance(opening, closing):
    """Preview markers are recognised with any spacing and either delimiter; markers never show."""
    source = f"Intro paragraph.\n\n{opening}\nCard *text*.\n{closing}\n\nRest of the note."
    rendered = render(source)
    assert rendered.has_preview
    card = parse(rendered.card_html)
    assert normalise_space(card.text) == "Card text."
    assert card.select_one("em").text == "text"
    page = parse(rendered.html)
    assert "preview" not in page.text
    assert [normalise_space(p.text) for p in page.select("p")] == [
        "Intro paragraph.",
        "Card text.",
        "Rest of the note.",
    ]
    assert rendered.warnings == []


def test_several_preview_regions():
    """card_html holds every preview region in order and nothing else."""
    source = (
        "Hidden start.\n\n{{< preview >}}\nRegion one.\n{{< /preview >}}\n\n"
        "Hidden middle.\n\n{{< preview >}}\nRegion $x$ two.\n{{< /preview >}}\n\nHidden end."
    )
    rendered = render(source)
    card = parse(rendered.card_html)
    assert [normalise_space(p.text) for p in card.select("p")][0] == "Region one."
    assert "Region" in card.select("p")[1].text and card.select("p")[1].select(".katex")
    assert "Hidden" not in card.text
    assert rendered.has_preview


def test_no_preview_card_is_whole_note():
    """Without markers the card is the full note and has_preview is false."""
    rendered = render("Just one paragraph.")
    assert not rendered.has_preview
    assert rendered.card_html == rendered.html


def test_preview_marker_in_code_is_literal():
    """A preview marker inside a code fence is an example, not a region."""
    source = "Text.\n\n```markdown\n{{< preview >}}\nx\n{{< /preview >}}\n```\n"
    rendered = render(source)
    assert not rendered.has_preview
    assert "{{< preview >}}" in parse(rendered.html).select_one("pre").text


def test_promotion_textual_all_parameters():
    """promotion-textual: `|` splits lines, align, sponsored rel and label, subtitle, button."""
    source = (
        '{{< promotion-textual\n     sponsored=true\n     align="center"\n'
        '     title="Line one | Line two"\n     subtitle="Sub text"\n'
        '     buttonText="Go now"\n     buttonLink="https://example.com/x" >}}\n'
    )
    rendered = render(source)
    doc = parse(rendered.html)
    box = doc.select_one("div.textual-promotion")
    assert "textual-promotion--center" in box.classes
    assert box.select_one("p.promotion-sponsored-line > span.promotion-sponsored-label").text == (
        "Sponsored"
    )
    title = box.select_one("div.textual-promotion-title")
    assert [c.strip() for c in title.children if isinstance(c, str)] == ["Line one", "Line two"]
    assert len(title.select("br")) == 1
    assert box.select_one("p.textual-promotion-subtitle").text == "Sub text"
    button = box.select_one("div.textual-promotion-actions > a.textual-promotion-button")
    assert button.text == "Go now"
    assert button.get("href") == "https://example.com/x"
    assert button.get("rel") == "sponsored noopener"
    assert button.get("target") == "_blank"
    assert rendered.warnings == []


def test_promotion_textual_defaults():
    """Without parameters: default title, left aligned, no label, no button."""
    rendered = render("{{< promotion-textual >}}")
    box = parse(rendered.html).select_one("div.textual-promotion")
    assert "textual-promotion--left" in box.classes
    assert box.select_one(".textual-promotion-title").text == "Your promotion headline"
    assert box.select_one(".promotion-sponsored-label") is None
    assert box.select_one("a") is None


def test_promotion_textual_rel_without_sponsored():
    """A button without sponsored uses rel=noopener (or the given rel) and target."""
    rendered = render(
        '{{< promotion-textual buttonText="B" buttonLink="https://e.org" target="_self" >}}'
    )
    button = parse(rendered.html).select_one("a.textual-promotion-button")
    assert button.get("rel") == "noopener"
    assert button.get("target") == "_self"


def test_gallery_markup():
    """gallery/gallery-item → div.image-gallery > a.gallery-item > figure > img + figcaption."""
    source = (
        "{{< gallery >}}\n"
        '  {{< gallery-item image="/img/a.jpg" caption="Figure A" link="/notes/x/" >}}\n'
        '  {{< gallery-item image="/img/b.jpg" caption="Figure B" >}}\n'
        "{{< /gallery >}}\n\nAfter."
    )
    rendered = render(source)
    doc = parse(rendered.html)
    gallery = doc.select_one("div.image-gallery")
    items = gallery.select("a.gallery-item")
    assert len(items) == 2
    assert items[0].get("href") == "/notes/x/"
    assert items[1].get("href") == "/img/b.jpg"
    expected = [("Figure A", "/img/a.jpg"), ("Figure B", "/img/b.jpg")]
    for item, (caption, src) in zip(items, expected, strict=True):
        assert item.get("target") == "_blank" and item.get("rel") == "noopener"
        img = item.select_one("figure > img")
        assert img.get("src") == src and img.get("alt") == caption
        assert item.select_one("figure > figcaption").text == caption
    assert "gallery" not in normalise_space(doc.text)
    assert rendered.warnings == []


def test_glossary_panel_and_terms():
    """glossary → aside.glossary-panel; glossary-term and term wrap text in span.glossary-term."""
    source = (
        "{{< glossary >}}\n\n"
        'A {{< glossary-term id="dms" def="Document Management System" >}}DMS{{< /glossary-term >}}'
        ' and {{< term id="kv" def="Key-value" >}}KV cache{{< /term >}}.'
    )
    rendered = render(source)
    doc = parse(rendered.html)
    panel = doc.select_one("aside.glossary-panel#glossary-panel")
    assert panel is not None
    terms = doc.select("span.glossary-term")
    assert [(t.get("data-gid"), t.get("data-def"), t.text) for t in terms] == [
        ("dms", "Document Management System", "DMS"),
        ("kv", "Key-value", "KV cache"),
    ]
    assert rendered.warnings == []


def test_entry_indexes_go_through_context():
    """entry-a-to-z and entry-categories call render_entry_index with name and parameters."""
    calls = []

    def render_entry_index(name, params):
        calls.append((name, params))
        return f'<div class="entry-map" data-set="{params.get("set")}">{name}</div>'

    source = '{{< entry-a-to-z set="math" >}}\n\n{{< entry-categories set="rendering" tag="x" >}}'
    rendered = render(source, RenderContext(render_entry_index=render_entry_index))
    assert calls == [
        ("entry-a-to-z", {"set": "math"}),
        ("entry-categories", {"set": "rendering", "tag": "x"}),
    ]
    maps = parse(rendered.html).select("div.entry-map")
    assert [(m.get("data-set"), m.text) for m in maps] == [
        ("math", "entry-a-to-z"),
        ("rendering", "entry-categories"),
    ]
    assert rendered.warnings == []


def test_unknown_shortcode_warns_and_keeps_text():
    """An unknown shortcode gives `shortcode-unknown` on its line and stays in the text."""
    source = "First.\n\nSecond.\n\nHere {{< mystery arg=1 >}} it is."
    rendered = render(source)
    warnings = _codes(rendered, "shortcode-unknown")
    assert [w.line for w in warnings] == [5]
    assert "mystery" in warnings[0].message
    assert "{{< mystery arg=1 >}}" in parse(rendered.html).text


def test_unclosed_preview_warns():
    """A preview never closed gives a warning on its line; the card is then the whole note."""
    source = "Intro.\n\n{{< preview >}}\nStart of card.\n\nRest."
    rendered = render(source)
    assert [w.line for w in rendered.warnings if w.code.startswith("shortcode")] == [3]
    assert "Start of card." in parse(rendered.html).text


def test_every_known_shortcode_has_a_signature():
    """The editor's completion and the syntax guide list exactly the shortcodes the engine
    reads (shortcodes.SHORTCODES beside KNOWN)."""
    from scidraft.markup.shortcodes import KNOWN, SHORTCODES

    assert set(SHORTCODES) == KNOWN


def test_a_shortcode_is_read_through_its_handler_in_the_registry(monkeypatch):
    """Each shortcode name maps to one handler function; a handler added to the registry is
    read with no other change, its output stashed in the shortcode's place."""
    from scidraft.markup import shortcodes

    assert set(shortcodes.HANDLERS) == set(shortcodes.SHORTCODES)
    assert shortcodes.HANDLERS["entry-map"] is shortcodes.HANDLERS["entry-a-to-z"]
    assert shortcodes.HANDLERS["term"] is shortcodes.HANDLERS["glossary-term"]

    def aside(run, code):
        return run.block(f'<aside class="note-aside">{code.params["n"]}</aside>', code, "aside")

    monkeypatch.setitem(shortcodes.HANDLERS, "aside", aside)
    rendered = render('Before.\n\n{{< aside n="7" >}}\n\nAfter.')
    assert '<aside class="note-aside">7</aside>' in rendered.html
    assert not rendered.warnings
