"""A reader's search query: growing hostile queries cost the same two queries and stay within
the path's bounds in this process (the database's own work is bounded by the query's length)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from notes.search import MAX_QUERY_LENGTH, search_notes, tokenise
from scidraft.bounds import INPUT_PATHS
from tests.factories import imported_page, published_note

from .harness import HOSTILE, assert_within, cases, measure, repeated, sizes, traced

INPUT_PATH = "search-query"
PATH = INPUT_PATHS[INPUT_PATH]
LARGEST = 64 * 1024

CASES = {
    "distinct words": lambda n: " ".join(f"w{i}" for i in range(n // 4)),
    "one-letter words": lambda n: " ".join(
        chr(97 + i % 26) + chr(97 + i // 26 % 26) for i in range(n // 3)
    ),
    "phrases": lambda n: repeated('"a b" ', n),
    "negations and or": lambda n: repeated("-x or y ", n),
    "unclosed quote": lambda n: '"' + "a " * (n // 2),
    "case folding": lambda n: repeated("ß ﬃ İ ", n),
    "wildcards": lambda n: repeated("%_\\ ", n),
    "punctuation": lambda n: repeated("&|!():*<-> ", n),
}


@pytest.fixture
def notes(author):
    """Twenty published notes holding the words the queries look for."""
    for number in range(20):
        published_note(author, f"Note w{number} ß", f"Text w{number} a b x y ß")


@pytest.mark.slow
@HOSTILE
@given(case=cases(CASES), size=sizes(LARGEST, smallest=8))
def test_growing_hostile_queries_search_within_the_bounds(
    notes, django_assert_max_num_queries, case, size
):
    """Any query: two database queries at most, and this process's work within the bounds."""
    query = CASES[case](size)
    with django_assert_max_num_queries(2):
        measured = measure(search_notes, query)
    assert_within(PATH, measured, f"{case} at {len(query):,} characters")


@settings(HOSTILE, max_examples=8)
@given(case=cases(CASES), size=sizes(LARGEST, smallest=8))
def test_the_terms_of_a_query_are_bounded_by_its_length(case, size):
    """A query is cut at MAX_QUERY_LENGTH before it is read: its terms and the memory they
    take do not grow with what the reader sent."""
    query = CASES[case](size)[:MAX_QUERY_LENGTH]
    assert len(tokenise(query)) <= MAX_QUERY_LENGTH // 2
    assert traced(tokenise, query) <= 1


def test_postgresql_ranks_stored_vectors_not_vectors_built_per_row(notes):
    """On PostgreSQL a search reads each note's stored search vector: building vectors from
    the texts of every published note at each query is work the query's bounds cannot hold."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from notes.search import use_full_text

    if not use_full_text():
        pytest.skip("PostgreSQL's full-text search only")
    with CaptureQueriesContext(connection) as queries:
        search_notes("note text")
    assert not any("to_tsvector" in query["sql"] for query in queries)


def test_highlighting_a_long_note_for_many_terms_is_bounded_in_time(author, client, settings):
    """ts_headline's time grows with the text times the query's terms (40 s for 60,000
    characters and sixteen terms, the database's own CPU): the page of results asks for the
    matched words within SEARCH_HEADLINE_TIMEOUT_MS, and past it is highlighted by the
    query's own words, answering at once."""
    import time

    from notes.search import use_full_text

    if not use_full_text():
        pytest.skip("PostgreSQL's full-text search only")
    settings.SEARCH_HEADLINE_TIMEOUT_MS = 200
    imported_page("search", title="Search", layout="search")
    words = (
        "alert onclick begin algorithm label state end textbf img src onerror other text "
        "here some payload"
    )  # sixteen terms, every one in the note
    published_note(author, "Hostile", repeated(words + ". ", 60_000))
    query = words
    started = time.monotonic()
    response = client.get("/search/", {"q": query})
    assert response.status_code == 200
    assert time.monotonic() - started < 5
    page = response.content.decode()
    assert "Hostile" in page and '<mark class="search-highlight">alert</mark>' in page
