"""Server-side search (docs/theme.md#search-and-the-search-index): PostgreSQL full-text search, a
fallback elsewhere. The search page always answers here, whatever the size of the site: it never
reads index.json (notes.feeds), which is served only to clients of the theme's own search and
only while the site is small.

* PostgreSQL: `websearch_to_tsquery` (quoted phrases, `-word`, `or`) against each row's
  stored weighted vector (notes.search_index): title (A) > summary and description (B) >
  body text (C), ordered by `ts_rank` then date. Only the newest SEARCH_CANDIDATES matches of
  each kind are ranked and shown: ranking reads each vector, and a word in every note would
  read them all; the page then says "500+ results".
  `ts_headline` (with sentinel markers, never HTML) tells which words the database matched,
  stemmed forms included; the excerpt is then cut and highlighted in Python.
* Any other database (SQLite): the theme's client algorithm: quoted phrases are single terms,
  other words lower-cased tokens; +10 per term in the title, +5 in the summary or
  description, +1 in the text; ordered by score, then date; the newest SEARCH_CANDIDATES
  matches of each kind, as on PostgreSQL.

Ranking looks only at ids and scores; the displayed page of results is then loaded with a
fixed number of queries. What the database indexes is the note's text (Rendered.text): every
word a reader sees, code and diagram sources included, references as their labels, formulas as
their TeX, so a note is found by any of its words. Previews (notes.excerpts, ~300 characters
around the first match outside a formula, whole words, `…` at the cuts) leave code, diagrams
and algorithms out and show formulas as the note does (KaTeX's output), never highlighted
inside. Every piece of text is HTML-escaped before `<mark>` is added.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections import Counter
from dataclasses import dataclass, field

from django.conf import settings
from django.db import OperationalError, connection, transaction
from django.db.models import F, Q, Subquery
from django.shortcuts import render
from django.utils.safestring import SafeString, mark_safe

from scidraft.bounds import input_path
from scidraft.markup.excerpt import mark
from scidraft.site.meta import PageMeta, absolute
from scidraft.site.models import SiteSettings

from .excerpts import excerpt_of
from .feed import pagination_window
from .models import Note, Page
from .presentation import date_short
from .search_index import indexed_text, search_config, use_full_text

logger = logging.getLogger(__name__)

MIN_QUERY_LENGTH = 2
# A query's size bounds the database's work for it (each word is a lookup in the index and a
# term of the rank): past either bound it is not searched and the page says why.
MAX_QUERY_LENGTH = 200
MAX_QUERY_WORDS = 16
# Matches ranked per kind (notes, pages): the newest this many; a query matching more shows
# these, best first, and the page says "500+ results".
SEARCH_CANDIDATES = 500
EXCLUDED_LAYOUTS = (Page.Layout.SEARCH, Page.Layout.ARCHIVES)
# The search preview's lead: the summary, as the theme's
# (docs/theme.md#search-and-the-search-index), then the description.
SEARCH_LEAD = ("summary", "description")
_NOTHING = re.compile(r"(?!)")
# What load_results reads of a note or page (_result, excerpt_of with `around`).
RESULT_FIELDS = (
    "slug", "title", "summary", "description", "rendered_html", "date", "date_offset_minutes",
)  # fmt: skip

# Sentinels for ts_headline: control characters that cannot occur in stored text.
_START, _STOP, _FRAGMENT = "\x02", "\x03", "\x04"


# --- Which notes and pages are searchable ---------------------------------------------------


def searchable_notes():
    return Note.objects.published().filter(search_hidden=False)


def searchable_pages():
    return (
        Page.objects.published()
        .filter(search_hidden=False)
        .exclude(layout__in=EXCLUDED_LAYOUTS)
        .exclude(body__regex=r"^\s*$")
    )


# --- Query parsing ----------------------------------------------------------------------------

_TERM = re.compile(r'"([^"]*)"|(\S+)')


def tokenise(query: str) -> list[str]:
    """The theme's terms: "quoted phrases" whole, other words lower-cased, no duplicates."""
    terms: list[str] = []
    for match in _TERM.finditer(query):
        phrase, word = match.groups()
        term = (phrase if phrase is not None else word.strip('"')).strip().lower()
        if term and term not in terms:
            terms.append(term)
    return terms


def _positive_words(query: str) -> list[str]:
    """Words worth highlighting from a websearch query: not negated, not the `or` operator."""
    words = []
    for term in tokenise(query):
        if term == "or" or term.startswith("-"):
            continue
        words.append(term)
    return words


# --- Ranking --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SearchHit:
    kind: str  # "note" or "page"
    pk: int
    score: float
    date: dt.datetime | None


def _order(hits: list[SearchHit]) -> list[SearchHit]:
    oldest = dt.datetime.min.replace(tzinfo=dt.UTC)
    hits.sort(key=lambda hit: (hit.kind, hit.pk))
    hits.sort(key=lambda hit: (hit.score, hit.date or oldest), reverse=True)
    return hits


def _newest_first(queryset):
    """Date descending; undated rows (pages may be) last on every database, as PostgreSQL
    would put them first. Notes' dates are never empty: a plain order, which their index
    serves."""
    if queryset.model._meta.get_field("date").null:
        return F("date").desc(nulls_last=True)
    return F("date").desc()


def _pg_query(query: str, config: str):
    from django.contrib.postgres.search import SearchQuery

    return SearchQuery(query, search_type="websearch", config=config)


def _pg_hits(query: str, config: str) -> list[SearchHit]:
    from django.contrib.postgres.search import SearchRank

    ts_query = _pg_query(query, config)
    hits: list[SearchHit] = []
    for kind, queryset in (("note", searchable_notes()), ("page", searchable_pages())):
        # The newest SEARCH_CANDIDATES matches of the stored vectors (their GIN index), by
        # narrow columns; only those are ranked, which reads their vectors: ranking every
        # match would read every vector (300 ms for a word in all of 10,000 notes).
        candidates = (
            queryset.filter(search_vector=ts_query)
            .order_by(_newest_first(queryset), "-pk")
            .values("pk")[:SEARCH_CANDIDATES]
        )
        rows = (
            queryset.model.objects.filter(pk__in=Subquery(candidates))
            .annotate(_rank=SearchRank(F("search_vector"), ts_query))
            .order_by()
            .values_list("pk", "_rank", "date")
        )
        hits.extend(SearchHit(kind, pk, float(rank), date) for pk, rank, date in rows)
    return _order(hits)


def _contains_any(terms: list[str], fields: tuple[str, ...]) -> Q:
    condition = Q(pk__in=[])
    for term in terms:
        for name in fields:
            condition |= Q(**{f"{name}__icontains": term})
    return condition


def _fallback_hits(query: str) -> list[SearchHit]:
    terms = tokenise(query)
    if not terms:
        return []
    fields = ("title", "summary", "description", "rendered_text")
    hits: list[SearchHit] = []
    for kind, queryset in (("note", searchable_notes()), ("page", searchable_pages())):
        # The database narrows (ASCII case-insensitive LIKE on SQLite); Python scores, with
        # Unicode case folding, exactly as the theme's script does.
        rows = (
            queryset.filter(_contains_any(terms, fields))
            .order_by(_newest_first(queryset), "-pk")
            .values_list("pk", "date", *fields)[:SEARCH_CANDIDATES]
        )
        for pk, date, title, summary, description, text in rows:
            title, text = title.casefold(), text.casefold()
            lead = f"{summary}\n{description}".casefold()
            score = 0
            for term in terms:
                folded = term.casefold()
                score += 10 * (folded in title) + 5 * (folded in lead) + (folded in text)
            if score:
                hits.append(SearchHit(kind, pk, float(score), date))
    return _order(hits)


def capped(hits: list[SearchHit]) -> bool:
    """Whether a kind's matches were cut to SEARCH_CANDIDATES: there are more than shown."""
    counts = Counter(hit.kind for hit in hits)
    return any(count >= SEARCH_CANDIDATES for count in counts.values())


def query_problem(query: str) -> str:
    """Why a query is too large to search ("" when it is not), in words for the reader."""
    words = len(query.split())
    if len(query) > MAX_QUERY_LENGTH:
        return (
            f"A search is at most {MAX_QUERY_LENGTH} characters; this one has {len(query):,}. "
            "Shorten it and search again."
        )
    if words > MAX_QUERY_WORDS:
        return (
            f"A search is at most {MAX_QUERY_WORDS} words; this one has {words}. "
            "Keep the words that matter most and search again."
        )
    return ""


@input_path("search-query")
def search_notes(query: str, *, language_code: str = "en") -> list[SearchHit]:
    """The matches, best first: notes and standalone pages as ids with their scores; the
    newest SEARCH_CANDIDATES of each kind, ranked (capped() tells when there were more).

    Two queries whatever the number of notes; an empty list for queries under 2 characters
    and for queries over the bounds (query_problem).
    """
    query = (query or "").strip()
    if len(query) < MIN_QUERY_LENGTH or query_problem(query):
        return []
    if use_full_text():
        return _pg_hits(query, search_config(language_code))
    return _fallback_hits(query)


# --- Highlighting ------------------------------------------------------------------------------


def _pattern(terms: list[str], words: list[str]) -> re.Pattern | None:
    """Query terms match anywhere (the theme's `includes`); database-matched words whole."""
    alternatives = [(term, False) for term in terms] + [(word, True) for word in words]
    alternatives = [item for item in alternatives if item[0]]
    if not alternatives:
        return None
    alternatives.sort(key=lambda item: len(item[0]), reverse=True)
    parts = [
        rf"\b{re.escape(text)}\b" if whole else re.escape(text) for text, whole in alternatives
    ]
    return re.compile("|".join(parts), re.I)


# --- Results ----------------------------------------------------------------------------------


@dataclass
class SearchResult:
    kind: str
    title: str
    title_html: SafeString
    url: str
    excerpt_html: SafeString
    date: dt.datetime | None
    tags: list = field(default_factory=list)
    has_math: bool = False

    @property
    def date_text(self) -> str:
        return date_short(self.date) if self.date else ""


def _headline_words(*headlines: str | None) -> list[str]:
    words: list[str] = []
    for headline in headlines:
        for word in re.findall(f"{_START}(.*?){_STOP}", headline or "", re.S):
            word = word.strip()
            if word and word.lower() not in (item.lower() for item in words):
                words.append(word)
    return words


def _headline(field_name: str, ts_query, config: str, **options):
    from django.contrib.postgres.search import SearchHeadline

    # The text as far as it is indexed: what a match can be found in, and a bounded read.
    return SearchHeadline(
        indexed_text(field_name),
        ts_query,
        config=config,
        start_sel=_START,
        stop_sel=_STOP,
        fragment_delimiter=_FRAGMENT,
        **options,
    )


def load_results(
    hits: list[SearchHit], query: str, *, language_code: str = "en"
) -> list[SearchResult]:
    """Display data for a slice of hits: one query per kind plus the notes' tags."""
    note_ids = [hit.pk for hit in hits if hit.kind == "note"]
    page_ids = [hit.pk for hit in hits if hit.kind == "page"]
    # Only what a result shows: not the stored vector, the Markdown, the card, the text.
    # Unordered: the hits give the order.
    notes_qs = Note.objects.filter(pk__in=note_ids).only(*RESULT_FIELDS, "tag_order")
    notes_qs = notes_qs.prefetch_related("tags").order_by()
    pages_qs = Page.objects.filter(pk__in=page_ids).only(*RESULT_FIELDS).order_by()
    plain_notes = notes_qs if note_ids else None
    plain_pages = pages_qs if page_ids else None
    objects = None
    if use_full_text():
        config = search_config(language_code)
        ts_query = _pg_query(query, config)
        annotations = {
            "_title_hl": _headline("title", ts_query, config, highlight_all=True),
            "_lead_hl": _headline("summary", ts_query, config, highlight_all=True),
            "_text_hl": _headline(
                "rendered_text", ts_query, config, max_fragments=3, max_words=35, min_words=15
            ),
        }
        objects = _loaded(
            plain_notes.annotate(**annotations) if note_ids else None,
            plain_pages.annotate(**annotations) if page_ids else None,
        )
    if objects is None:  # no full-text search, or its matched words took too long to find
        objects = _rows(plain_notes, plain_pages)
    terms = _positive_words(query)
    results = []
    for hit in hits:
        item = objects.get((hit.kind, hit.pk))
        if item is None:
            continue
        words = _headline_words(
            getattr(item, "_title_hl", None),
            getattr(item, "_lead_hl", None),
            getattr(item, "_text_hl", None),
        )
        results.append(_result(hit.kind, item, _pattern(terms, words)))
    return results


def _loaded(notes_qs, pages_qs) -> dict | None:
    """The rows of a page of results by (kind, pk); None when PostgreSQL could not find the
    matched words within SEARCH_HEADLINE_TIMEOUT_MS (the query is cancelled, nothing else)."""
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            # Local: it ends with the transaction, or with the savepoint when it rolls back.
            timeout = str(int(settings.SEARCH_HEADLINE_TIMEOUT_MS))
            cursor.execute(
                "SELECT current_setting('statement_timeout'),"
                " set_config('statement_timeout', %s, true)",
                [timeout],
            )
            before = cursor.fetchone()[0]
            rows = _rows(notes_qs, pages_qs)
            cursor.execute("SELECT set_config('statement_timeout', %s, true)", [before])
            return rows
    except OperationalError as error:
        if getattr(error.__cause__, "sqlstate", None) != "57014":  # query_canceled
            raise
        logger.warning("search highlights took over %s ms", settings.SEARCH_HEADLINE_TIMEOUT_MS)
        return None


def _rows(notes_qs, pages_qs) -> dict:
    objects = {("note", item.pk): item for item in (notes_qs if notes_qs is not None else [])}
    objects.update({("page", item.pk): item for item in (pages_qs if pages_qs is not None else [])})
    return objects


def _result(kind: str, item, pattern: re.Pattern | None) -> SearchResult:
    title = item.title or item.slug
    # The passage around the first match outside a formula, else the summary (the theme's
    # preview), else the note's opening. `.` never matches a query: a query of only negated
    # words still gets a preview.
    found = excerpt_of(item, lead=SEARCH_LEAD, around=pattern or _NOTHING)
    preview = found.html(highlight=pattern)
    if kind == "note":
        url = f"/notes/{item.slug}/"
        date = item.local_date
        tags = item.ordered_tags()
    else:
        url = f"/{item.slug}/"
        date = item.local_date
        tags = []
    return SearchResult(
        kind=kind,
        title=title,
        title_html=mark_safe(mark(title, pattern)),  # noqa: S308 - escaped by mark
        url=url,
        # Trusted: escaped text, marks and KaTeX output, cleaned by the excerpt allowlist.
        excerpt_html=mark_safe(preview),  # noqa: S308
        date=date,
        tags=tags,
        has_math=found.has_math,
    )


# --- The page ---------------------------------------------------------------------------------


def _page_number(value: str | None) -> int:
    try:
        return max(1, int(value or 1))
    except (TypeError, ValueError):
        return 1


def search_page(request, page: Page):
    """The standalone page with layout "search": the form and a page of results."""
    site = SiteSettings.objects.current()
    asked = request.GET.get("q", "").strip()
    problem = query_problem(asked)
    query = asked[:MAX_QUERY_LENGTH]
    searched = len(query) >= MIN_QUERY_LENGTH and not problem
    hits = search_notes(query, language_code=site.language_code) if searched else []
    per_page = max(1, site.pager_size or 8)
    last = max(1, -(-len(hits) // per_page))
    current = min(_page_number(request.GET.get("page")), last)
    shown = hits[(current - 1) * per_page : current * per_page]
    results = load_results(shown, query, language_code=site.language_code) if shown else []
    path = request.path
    meta = PageMeta(
        title=f"{page.title} | {site.title}",
        description=page.description or page.summary or site.description,
        canonical=page.canonical_url or absolute(request, site, path),
        noindex=page.robots_noindex or bool(query),
    )
    context = {
        "page": page,
        "meta": meta,
        "query": query,
        "searched": searched,
        "problem": problem,
        "results": results,
        "result_count": len(hits),
        "result_capped": capped(hits),
        "placeholder": page.placeholder or f"{page.title} ↵",
        "pagination": pagination_window(current, last),
        "current_page": current,
        "last_page": last,
        "previous_page": current - 1 if current > 1 else None,
        "next_page": current + 1 if current < last else None,
        "assets": {"math": True, "code": False, "algorithm": False, "mermaid": False},
    }
    return render(request, "notes/search.html", context)
