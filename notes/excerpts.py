"""What a feed, a list, a search result or a page's meta quotes of a note or a page.

One rule (docs/theme.md#front-matter, #tag-and-list-pages, #search-and-the-search-index,
#feeds-sitemap-and-meta), in `excerpt_of`: the text the author wrote for it wins (the description
where the theme prefers it, then the summary), whole; otherwise the opening words of the card, read
by the engine from the stored render (scidraft.markup.excerpt): references as their labels, formulas
whole, no diagrams, code or algorithms. Search asks for the passage around a match first.

Callers choose the form: `.text()` for plain text (index.json, meta and OpenGraph
descriptions: TeX between `\\(…\\)`), `.html()` where HTML is shown (RSS descriptions, tag and
author pages, search results: KaTeX's output).
"""

from __future__ import annotations

import hashlib
import re

from scidraft.markup import excerpt as engine
from scidraft.markup.bounded_cache import BoundedCache

from .models import EXCERPT_SOURCE_CHARS

SUMMARY_WORDS = engine.SUMMARY_WORDS  # Hugo's .Summary
META_WORDS = 30  # a meta description search engines show whole
# A written description or summary quoted in a page's head (meta, OpenGraph, JSON-LD) at most:
# real ones are a few sentences; a longer field is cut, not copied into every page's head.
META_CHARS = 1_000
SEARCH_CHARS = 300  # the theme's search preview (docs/theme.md#search-and-the-search-index)

SUMMARY = ("summary",)
DESCRIPTION = ("description", "summary")


def _card(item) -> str:
    """The card HTML an excerpt reads: the `excerpt_source` prefix a list loaded
    (RenderedQuerySet.with_excerpt_source), else the whole card."""
    source = getattr(item, "excerpt_source", None)
    if source is None:
        return item.rendered_card_html or ""
    # A prefix may end inside a tag: that tag is dropped, the elements it cut are closed by
    # the excerpt's allowlist.
    return source[: source.rfind("<")] if len(source) >= EXCERPT_SOURCE_CHARS else source


def excerpt_of(
    item,
    *,
    lead: tuple[str, ...] = SUMMARY,
    words: int = SUMMARY_WORDS,
    around: re.Pattern | None = None,
    written_chars: int | None = None,
) -> engine.Excerpt:
    """What to quote of a note or page: the first of the `lead` fields the author wrote, whole,
    else the first `words` words of the card. With `around` (search), the passage of the whole
    note around the first match comes first, and every excerpt is about SEARCH_CHARS long.
    With `written_chars`, a written field longer than that is quoted to about that many
    characters, and only its start is read."""
    if around is not None:
        body = engine.segments_from_html(item.rendered_html or "")
        found = engine.excerpt(body, chars=SEARCH_CHARS, around=around)
        if found.matched:
            return found
    for name in lead:
        written = (getattr(item, name, "") or "").strip()
        if written:
            if around is None and written_chars is not None and len(written) > written_chars:
                segments = engine.segments_from_text(written[: 2 * written_chars])
                return engine.excerpt(segments, chars=written_chars)
            segments = engine.segments_from_text(written)
            if around is None:
                return engine.Excerpt(segments)
            return engine.excerpt(segments, chars=SEARCH_CHARS, around=around)
    if around is not None:
        return engine.excerpt(body, chars=SEARCH_CHARS)
    return _card_excerpt(_card(item), words)


# Card excerpts by (a digest of the card's HTML, words): a list shows the same cards each time
# it is rendered again, after a write to one of its notes, and reading them is much of its cost.
_card_excerpts = BoundedCache(4_096, 4 * 2**20, lambda key, value: value.weight)


def _card_excerpt(card: str, words: int) -> engine.Excerpt:
    key = (hashlib.blake2b(card.encode("utf-8"), digest_size=16).digest(), words)
    found = _card_excerpts.get(key)
    if found is None:
        found = engine.excerpt(engine.segments_from_html(card, words + 1), words=words)
        _card_excerpts.put(key, found)
    return found
