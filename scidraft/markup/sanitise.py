"""Stage 7, sanitise: an nh3 allowlist over everything an author wrote.

Two policies. AUTHOR applies to the Markdown output (the author's prose and raw HTML).
FRAGMENT applies to the HTML that shortcodes, bibliographies and entry indexes build from
author-supplied strings, before it is put in the stash: it allows the theme's component
classes and data attributes, and nothing that runs.
"""

from __future__ import annotations

import html as html_lib
import re

import nh3

from .nesting import NestingLimit, limit_nesting
from .sourcelines import ATTRIBUTE as SOURCE_LINE
from .sourcelines import DIGITS
from .stash import CLOSE, FILL, OPEN

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


_PLACEHOLDER_CHARS = re.compile(f"[{OPEN}{CLOSE}{FILL}]")
# What browsers ignore in a URL: leading C0 controls and spaces, and tabs/newlines anywhere.
_URL_LEADING = re.compile(r"^[\x00-\x20]+")
_URL_IGNORED = re.compile(r"[\t\n\r]")
# A URL whose scheme is settled before its first placeholder: an allowed scheme, or a relative
# URL (a /, ? or # comes before any colon, so no scheme can follow).
_SETTLED_URL = re.compile(r"^(?:(?:https?|mailto):|[^:]*[/?#])", re.I)


def _url_is_settled(value: str) -> bool:
    """False when a placeholder (or a stray placeholder character) could still decide the URL's
    scheme: `fill` replaces placeholders after nh3 has checked the scheme, and removes stray
    placeholder characters, so `java\\(\\)script:` would become `javascript:`."""
    match = _PLACEHOLDER_CHARS.search(value)
    if not match:
        return True
    prefix = _URL_IGNORED.sub("", _URL_LEADING.sub("", value[: match.start()]))
    return bool(_SETTLED_URL.match(prefix))


def _filter(tag: str, attribute: str, value: str) -> str | None:
    if attribute == SOURCE_LINE:
        return value if DIGITS.match(value) else None
    # target on links only as _blank (rel gets noopener afterwards, see external_links).
    if attribute == "target" and value not in {"_blank", "_self"}:
        return None
    if attribute in {"href", "src"} and not _url_is_settled(value):
        return None
    return value


# The editor preview's policy: the author's, plus the source lines of blocks (digits only).
_LINED_ATTRIBUTES = {**AUTHOR_ATTRIBUTES, "*": _COMMON | {SOURCE_LINE}}


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


def clean_author_html(
    html: str, limited: list[NestingLimit] | None = None, *, source_lines: bool = False
) -> str:
    """The author's HTML through the AUTHOR allowlist (with `source_lines`, the editor
    preview's, which keeps blocks' source lines); what limit_nesting changed is appended to
    `limited` (the pipeline turns it into a warning)."""
    html, limit = limit_nesting(html)
    if limit is not None and limited is not None:
        limited.append(limit)
    return nh3.clean(
        html,
        tags=_TEXT,
        attributes=_LINED_ATTRIBUTES if source_lines else AUTHOR_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel=None,
        strip_comments=True,
        filter_style_properties=_STYLE_PROPERTIES,
        attribute_filter=_filter,
    )


def clean_fragment(html: str) -> str:
    return _link_targets(
        nh3.clean(
            limit_nesting(html)[0],
            tags=FRAGMENT_TAGS,
            attributes=FRAGMENT_ATTRIBUTES,
            generic_attribute_prefixes={"data-"},
            url_schemes=URL_SCHEMES,
            link_rel=None,
            strip_comments=True,
            filter_style_properties=_STYLE_PROPERTIES,
            attribute_filter=_filter,
        )
    )


# Excerpts (excerpt.py): escaped text, search marks and KaTeX's output copied from a stored
# render. Already safe by where it comes from; cleaned again so that an excerpt can carry no
# more than that (no links, no images, no author HTML), whatever the render held.
def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


_MATHML = _names(
    "math semantics annotation mrow mi mn mo ms mtext mspace msub msup msubsup mfrac msqrt "
    "mroot mover munder munderover mtable mtr mtd mlabeledtr mstyle mpadded mphantom menclose "
    "merror"
)
_EXCERPT_TAGS = _MATHML | {"span", "mark", "code", "svg", "path", "line"}
_EXCERPT_ATTRIBUTES = {
    "span": {"class", "style", "aria-hidden"},
    "mark": {"class"},
    "code": {"class"},
    "math": {"xmlns", "display"},
    "annotation": {"encoding"},
    "svg": {"xmlns", "width", "height", "viewBox", "preserveAspectRatio", "style"},
    "path": {"d"},
    "line": {"x1", "x2", "y1", "y2", "stroke-width"},
    "mi": {"mathvariant"},
    "mn": {"mathvariant"},
    "mtext": {"mathvariant"},
    "mo": {"stretchy", "fence", "lspace", "rspace", "minsize", "maxsize", "separator",
           "movablelimits", "form", "mathvariant"},
    "mstyle": {"displaystyle", "scriptlevel", "mathcolor", "mathsize", "mathbackground"},
    "mtable": {"columnalign", "columnspacing", "rowspacing", "columnlines", "rowlines", "frame",
               "framespacing", "width"},
    "mtd": {"width", "columnalign"},
    "mover": {"accent"},
    "munder": {"accentunder"},
    "mspace": {"width"},
    "mpadded": {"width", "height", "depth", "lspace", "voffset"},
    "menclose": {"notation"},
    "mfrac": {"linethickness"},
}  # fmt: skip
# What KaTeX writes in style attributes: boxes, offsets and \color.
_KATEX_STYLE = _names(
    "height width min-width max-width vertical-align top bottom left right position "
    "margin-left margin-right margin-top margin-bottom padding-left padding-right "
    "padding-top padding-bottom border-bottom-width border-top-width border-right-width "
    "border-left-width border-style border-color border-width color background-color "
    "text-indent"
)


def clean_excerpt_html(html: str) -> str:
    """An excerpt through its allowlist: text, `<mark>`, `<code>` and KaTeX's output."""
    return nh3.clean(
        html,
        tags=_EXCERPT_TAGS,
        attributes=_EXCERPT_ATTRIBUTES,
        url_schemes=set(),
        link_rel=None,
        strip_comments=True,
        filter_style_properties=_KATEX_STYLE,
    )


# nh3's output quotes every attribute value with " and escapes ", < and > inside values, so a
# start tag ends at the first > and attributes split reliably.
_ANCHOR = re.compile(r"<a(\s[^>]*)?>")
_ATTRIBUTE = re.compile(r'([^\s="/>]+)(?:="([^"]*)")?')
_EXTERNAL_URL = re.compile(r"^(?:https?:)?//", re.I)


def _rewrite_anchor(match: re.Match, *, external_tabs: bool) -> str:
    attributes = [(name, value) for name, value in _ATTRIBUTE.findall(match.group(1) or "")]
    values = {name.lower(): value for name, value in attributes}
    href = _URL_IGNORED.sub("", _URL_LEADING.sub("", html_lib.unescape(values.get("href", ""))))
    external = bool(_EXTERNAL_URL.match(href))
    target = values.get("target")
    if external and external_tabs:
        target = "_blank"
    if target != "_blank":
        return match.group(0)
    old_rel = html_lib.unescape(values.get("rel", "")).split()
    rel = [token for token in old_rel if token.lower() != "opener"]
    needed = ["noopener", "noreferrer"] if external and external_tabs else ["noopener"]
    rel += [token for token in needed if token not in {t.lower() for t in rel}]
    if not external_tabs and rel == old_rel and values.get("target") == "_blank":
        return match.group(0)  # a component's own link, already safe: left as built
    kept = "".join(
        f' {name}="{value}"'
        for name, value in attributes
        if name.lower() not in {"href", "target", "rel"}
    )
    link = f' href="{values["href"]}"' if "href" in values else ""
    return f'<a{kept}{link} target="_blank" rel="{html_lib.escape(" ".join(rel))}">'


def _link_targets(html: str) -> str:
    """Every link that opens a new tab gets rel="noopener" (and no "opener")."""
    return _ANCHOR.sub(lambda match: _rewrite_anchor(match, external_tabs=False), html)


def external_links(html: str) -> str:
    """Links to other sites open in a new tab, without access to this one
    (docs/theme.md#links-and-images).

    Any other link an author gave target="_blank" gets rel="noopener" too."""
    return _ANCHOR.sub(lambda match: _rewrite_anchor(match, external_tabs=True), html)
