"""The syntax guide at /help/syntax/ (editor/guide.py): every syntax, each example rendered by
the engine, cached by the engine version."""

from __future__ import annotations

import pytest

from editor import guide, guide_catalogue
from scidraft.markup.shortcodes import SHORTCODES

pytestmark = pytest.mark.django_db


def test_the_guide_is_public_and_shows_every_section_rendered(client):
    """Anyone may read it; every section's examples come with the engine's HTML and none of
    them warns; the site's environment kinds and every shortcode with its parameters are
    listed."""
    response = client.get("/help/syntax/")
    assert response.status_code == 200
    html = response.content.decode()
    for section in guide_catalogue.SECTIONS:
        assert f'id="{section.slug}"' in html, section.slug
    for needle in (
        'class="katex"', 'class="katex-display"', 'class="env env-theorem', "eq-anchor",
        'class="ref"', 'class="ref ref-external"', 'class="references"', 'pre class="mermaid"',
        'class="pseudo-algorithm"', 'class="highlight"', 'class="table-academic"',
        'class="table-striped"', 'class="footnotes"', "textual-promotion", "image-gallery",
        "glossary-term", "<dl>", "<del>",
    ):  # fmt: skip
        assert needle in html, needle
    assert 'class="syntax-warnings"' not in html
    for name, signature in SHORTCODES.items():
        assert f"<code>{name}</code>" in html
        for param in signature.params:
            assert f"<code>{param}</code>" in html
    assert "<code>:::lemma</code>" in html
    assert "vendor/mermaid/mermaid.min.js" in html  # the diagram is drawn for readers


def test_every_section_of_the_guide_renders_without_warnings():
    """Each example, rendered as the guide renders it, warns about nothing."""
    for section in guide.guide_sections():
        for example in section["examples"]:
            assert example["warnings"] == [], (section["slug"], example["warnings"])


def test_renders_are_cached_by_engine_version(monkeypatch):
    """A second request renders nothing (entry indexes aside, which list the site's notes);
    another engine version renders again."""
    calls = []
    real = guide.markup_render
    monkeypatch.setattr(guide, "markup_render", lambda *a, **k: calls.append(1) or real(*a, **k))
    guide.guide_sections()
    first = len(calls)
    live = sum(example.live for section in guide_catalogue.SECTIONS for example in section.examples)
    assert first == sum(len(section.examples) for section in guide_catalogue.SECTIONS)
    guide.guide_sections()
    assert len(calls) == first + live
    monkeypatch.setattr(guide, "ENGINE_VERSION", "next")
    guide.guide_sections()
    assert len(calls) == 2 * first + live


def test_the_figures_section_shows_a_numbered_figure_and_table_and_references_them():
    """The guide's figure and table example renders a captioned, numbered figure and table,
    and the references to them print "Figure 1" and "tab. 1"."""
    (section,) = [s for s in guide.guide_sections() if s["slug"] == "figures-and-tables"]
    (example,) = section["examples"]
    html = example["html"]
    assert example["warnings"] == []
    assert '<figure id="fig-icon" class="figure">' in html and "<figcaption>" in html
    assert '<span class="figure-number">Figure 1:</span>' in html
    assert '<span class="table-number">Table 1:</span> Step sizes and errors' in html
    assert '<a class="ref" href="#fig-icon">Figure 1</a>' in html
    assert '<a class="ref" href="#tbl-errors">tab. 1</a>' in html
