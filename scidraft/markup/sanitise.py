"""Stage 5, sanitise: an nh3 allowlist over everything an author wrote.

Two policies. AUTHOR applies to the Markdown output (the author's prose and raw HTML).
FRAGMENT applies to the HTML that shortcodes, bibliographies and entry indexes build from
author-supplied strings, before it is put in the stash: it allows the theme's component
classes and data attributes, and nothing that runs.
"""

from __future__ import annotations

import re

import nh3

URL_SCHEMES = {"http", "https", "mailto"}

_TEXT = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "b", "i", "u", "s",
    "del", "ins", "mark", "sub", "sup", "small", "code", "pre", "kbd", "samp", "var",
    "blockquote", "q", "cite", "abbr", "dfn", "time", "span", "div",
    "ul", "ol", "li", "dl", "dt", "dd",
    "table", "thead", "tbody", "tfoot", "tr", "th", "td", "caption", "colgroup", "col",
    "a", "img", "figure", "figcaption", "details", "summary",
}  # fmt: skip

_COMMON = {"class", "id", "title", "lang", "dir"}

AUTHOR_ATTRIBUTES = {
    "*": _COMMON,
    "a": {"href", "name", "rel", "target", "hreflang"},
    "img": {"src", "alt", "width", "height", "loading"},
    "th": {"style", "colspan", "rowspan", "scope", "align"},
    "td": {"style", "colspan", "rowspan", "align"},
    "col": {"span"},
    "colgroup": {"span"},
    "ol": {"start", "reversed", "type"},
    "li": {"value"},
    "time": {"datetime"},
    "abbr": {"title"},
    "details": {"open"},
}

FRAGMENT_TAGS = _TEXT | {"aside", "nav", "section", "header", "footer"}
FRAGMENT_ATTRIBUTES = {
    **AUTHOR_ATTRIBUTES,
    "*": _COMMON | {"hidden", "aria-hidden", "aria-label", "role"},
}

# Table cell alignment is the only inline style an author's HTML keeps.
_STYLE_PROPERTIES = {"text-align"}


def _filter(tag: str, attribute: str, value: str) -> str | None:
    # target on links only as _blank (rel gets noopener afterwards, see external_links).
    if attribute == "target" and value not in {"_blank", "_self"}:
        return None
    return value


def clean_author_html(html: str) -> str:
    return nh3.clean(
        html,
        tags=_TEXT,
        attributes=AUTHOR_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel=None,
        strip_comments=True,
        filter_style_properties=_STYLE_PROPERTIES,
        attribute_filter=_filter,
    )


def clean_fragment(html: str) -> str:
    return nh3.clean(
        html,
        tags=FRAGMENT_TAGS,
        attributes=FRAGMENT_ATTRIBUTES,
        generic_attribute_prefixes={"data-"},
        url_schemes=URL_SCHEMES,
        link_rel=None,
        strip_comments=True,
        filter_style_properties=_STYLE_PROPERTIES,
        attribute_filter=_filter,
    )


_EXTERNAL = re.compile(r'<a\b([^>]*?)\shref="(https?://[^"]*)"([^>]*)>')


def external_links(html: str) -> str:
    """Links to other sites open in a new tab, without access to this one (theme-spec §2.14)."""

    def rewrite(match: re.Match) -> str:
        before, href, after = match.group(1), match.group(2), match.group(3)
        attributes = re.sub(r'\s(?:target|rel)="[^"]*"', "", before + after)
        rel = re.search(r'\srel="([^"]*)"', before + after)
        values = {"noopener", "noreferrer"} | set(rel.group(1).split() if rel else ())
        return f'<a{attributes} href="{href}" target="_blank" rel="{" ".join(sorted(values))}">'

    return _EXTERNAL.sub(rewrite, html)
