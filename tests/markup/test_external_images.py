"""mark_external_images: images from other sites lose their address and gain a note, on the
pages authors and reviewers read."""

from __future__ import annotations

import pytest

from scidraft.markup import RenderContext, render
from scidraft.markup.external_images import external_host, mark_external_images

from .dom import parse

SITE = "notes.example.org"


@pytest.mark.parametrize(
    ("src", "host"),
    [
        ("/media/notes/1/plot.png", None),
        ("img/plot.png", None),
        ("plot.png?x=1#y", None),
        ("data:image/png;base64,iVBORw0KGgo=", None),
        ("https://notes.example.org/media/plot.png", None),
        ("HTTPS://NOTES.EXAMPLE.ORG/media/plot.png", None),
        ("https://tracker.example/p.gif", "tracker.example"),
        ("http://tracker.example:8080/p.gif", "tracker.example:8080"),
        ("https://notes.example.org:8443/p.gif", "notes.example.org:8443"),
        ("//tracker.example/p.gif", "tracker.example"),
        # Browsers read backslashes as slashes, and ignore tabs, newlines and leading spaces.
        ("\\\\tracker.example/p.gif", "tracker.example"),
        ("/\\tracker.example/p.gif", "tracker.example"),
        (" \t//track\ner.example/p.gif", "tracker.example"),
        # No // after the scheme: on an https page the browser still goes to that host.
        ("http:tracker.example/p.gif", "tracker.example"),
        ("https://user@tracker.example/p.gif", "tracker.example"),
        ("https://notes.example.org@tracker.example/p.gif", "tracker.example"),
    ],
)
def test_which_addresses_are_external(src, host):
    """Relative, data: and this site's own addresses stay; any other host is external."""
    assert external_host(src, SITE) == host


def test_an_external_image_keeps_its_alt_and_gets_the_note():
    """The <img> keeps alt, size and classes, loses src (kept as data-external-src, which no
    browser loads) and is followed by the visible note naming the host."""
    html = (
        '<p><img src="https://tracker.example/p.gif?u=1&amp;v=2" alt="A plot" width="40" '
        'class="wide" loading="lazy"></p>'
    )
    doc = parse(mark_external_images(html, site_host=SITE))
    (wrapper,) = doc.select("span.external-image-blocked")
    image = wrapper.select_one("img")
    assert image.get("src") is None and image.get("loading") is None
    assert image.get("data-external-src") == "https://tracker.example/p.gif?u=1&v=2"
    assert (image.get("alt"), image.get("width")) == ("A plot", "40")
    assert image.get("class").split() == ["wide", "external-image"]
    note = wrapper.select_one("span.external-image-note")
    assert note.text == "External image not loaded in the editor: tracker.example"
    assert "cannot see who reads the draft" in wrapper.get("title")


def test_own_images_and_other_markup_are_left_exactly_as_they_were():
    """Nothing changes where no image is external."""
    html = (
        '<p><img src="/media/a.png" alt="a"> <img src="data:image/gif;base64,R0lGOD==" alt="">'
        ' <code>&lt;img src="https://tracker.example/x"&gt;</code></p>'
        '<pre class="mermaid">&lt;img src=https://tracker.example/y&gt;</pre>'
    )
    assert mark_external_images(html, site_host=SITE) == html


def test_a_host_cannot_inject_markup_into_the_note():
    """The host is escaped in the note (a hostile address stays text)."""
    html = '<img src="https://a&lt;b&gt;.example/x.png" alt="">'
    marked = mark_external_images(html, site_host=SITE)
    assert "<b>" not in marked
    assert "a&lt;b&gt;.example" in marked


def test_every_image_a_note_renders_is_covered():
    """Markdown images, raw <img> and gallery shortcodes, as the engine renders them."""
    source = (
        "![md](https://one.example/a.png)\n\n"
        '<img src="https://two.example/b.png" alt="raw">\n\n'
        '{{< gallery >}}\n{{< gallery-item image="https://three.example/c.png" '
        'caption="Gallery" >}}\n{{< /gallery >}}\n\n'
        "![own](/media/notes/1/own.png)\n"
    )
    rendered = render(source, RenderContext())
    doc = parse(mark_external_images(rendered.html, site_host=SITE))
    notes = [node.text for node in doc.select("span.external-image-note")]
    assert notes == [
        "External image not loaded in the editor: one.example",
        "External image not loaded in the editor: two.example",
        "External image not loaded in the editor: three.example",
    ]
    sources = [image.get("src") for image in doc.select("img")]
    assert sources == [None, None, None, "/media/notes/1/own.png"]
