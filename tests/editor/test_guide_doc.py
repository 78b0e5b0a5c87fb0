"""docs/authoring.md (editor/guide_doc.py): written from the syntax guide, so the document and
/help/syntax/ have one source."""

from __future__ import annotations

import html as html_lib
import re

import pytest
from django.core.management import CommandError, call_command

from editor import guide_catalogue, guide_doc
from scidraft.markup.shortcodes import SHORTCODES


def test_the_committed_document_is_what_the_guide_writes():
    """docs/authoring.md equals the generator's output: a guide change needs `authoring_doc`."""
    assert guide_doc.DOCUMENT.read_text() == guide_doc.authoring_markdown(), (
        "docs/authoring.md is stale: run `manage.py authoring_doc`"
    )


@pytest.mark.django_db
def test_the_document_holds_every_section_example_and_key_the_page_shows(client):
    """Each section /help/syntax/ renders has its anchor and title in the document, each example
    the page shows is there verbatim, and so are every shortcode and every key of the page."""
    page = client.get("/help/syntax/").content.decode()
    document = guide_doc.authoring_markdown()
    slugs = re.findall(r'<section class="syntax-guide-section" id="([^"]+)"', page)
    sections = guide_catalogue.SECTIONS
    listed = [s for s in slugs if s != "environment-kinds"]
    assert [s.slug for s in sections] == listed[: len(sections)]
    for slug in slugs:
        if slug != "environment-kinds":  # the site's own kinds, from its database
            assert f'<a id="{slug}"></a>' in document, slug
    sources = re.findall(r'<pre class="syntax-source"><code>(.*?)</code></pre>', page, re.S)
    assert len(sources) == sum(len(s.examples) for s in sections)
    for source in sources:
        shown = html_lib.unescape(source)
        if "entry-a-to-z set=" in shown:  # the live example names this site's first set
            shown = re.sub(r'set="[^"]*"', 'set="entry"', shown)
        assert f"\n{shown}\n" in document, shown
    for name in SHORTCODES:
        assert f"| `{name}`" in document, name
    keys = re.findall(r"<tr><td>(<kbd>.*?)</td>", page, re.S)
    assert keys
    for cell in keys:
        plain = html_lib.unescape(re.sub(r"</?kbd>", "", cell))
        assert f"| {plain} |" in document, plain


def test_the_check_fails_on_a_stale_document(tmp_path, monkeypatch):
    """`authoring_doc --check` exits with an error when the file differs, and writes nothing."""
    stale = tmp_path / "authoring.md"
    stale.write_text("# old\n")
    monkeypatch.setattr("editor.management.commands.authoring_doc.DOCUMENT", stale)
    with pytest.raises(CommandError):
        call_command("authoring_doc", "--check")
    assert stale.read_text() == "# old\n"
    call_command("authoring_doc")
    assert stale.read_text() == guide_doc.authoring_markdown()
