"""Links that open a new tab cannot reach back to the note: every link with `target="_blank"`,
from raw HTML, Markdown or a shortcode, carries `rel="noopener"` (never `opener`), external
links open in a new tab without an opener, and relative links stay in the same tab."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from scidraft.markup import render

from .xss import BLANK_TARGET_CASES

# Python-Markdown's attribute list on a link (engine 3): CommonMark and Goldmark have no such
# syntax, so the braces stay text and the relative link opens in the same tab.
_NO_TAB_ANY_MORE = {"md-attr-list"}


@pytest.mark.parametrize(
    "source",
    [s for i, s in BLANK_TARGET_CASES if i not in _NO_TAB_ANY_MORE],
    ids=[i for i, _ in BLANK_TARGET_CASES if i not in _NO_TAB_ANY_MORE],
)
def test_blank_target_links_carry_noopener(source):
    """Every link with target="_blank" has rel containing noopener (and never opener)."""
    rendered = render(source)
    links = _links(rendered.html)
    blank = [attrs for attrs in links if attrs.get("target") == "_blank"]
    assert blank, rendered.html
    for attrs in blank:
        rel = (attrs.get("rel") or "").lower().split()
        assert "noopener" in rel and "opener" not in rel, rendered.html


def test_an_attribute_list_after_a_link_is_text():
    """`[x](/y/){: target=_blank }` is a link and text: no attribute reaches the link."""
    rendered = render("[x](/notes/y/){: target=_blank }")
    (attrs,) = _links(rendered.html)
    assert attrs == {"href": "/notes/y/"}
    assert "{: target=_blank }" in rendered.html


def test_external_link_opens_in_new_tab_without_opener():
    """An external https:// link gets target=_blank and rel="noopener noreferrer"."""
    (attrs,) = _links(render("[x](https://example.org/page)").html)
    assert attrs["href"] == "https://example.org/page"
    assert attrs["target"] == "_blank"
    assert set(attrs["rel"].split()) == {"noopener", "noreferrer"}


def test_relative_link_stays_in_tab():
    """A relative link gets neither target nor rel."""
    (attrs,) = _links(render("[x](/notes/other/#sec)").html)
    assert attrs["href"] == "/notes/other/#sec"
    assert "target" not in attrs and "rel" not in attrs


def _links(markup: str) -> list[dict[str, str]]:
    found: list[dict[str, str]] = []

    class Links(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag == "a":
                found.append({name: value or "" for name, value in attrs})

    parser = Links()
    parser.feed(markup)
    parser.close()
    return found
