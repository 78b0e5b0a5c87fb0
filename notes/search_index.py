"""The stored full-text vectors of notes and pages (PostgreSQL), kept on every write.

Computing each row's `tsvector` inside the query made one search read every note's whole text
(1.9 MB notes took a query from 30 ms to 1.7 s). The vector is stored in `search_vector`, under
a GIN index, and rebuilt by one UPDATE after each save that touches what is indexed: the title
(weight A), the summary and description (B) and the rendered text (C), each cut to
`SEARCH_INDEX_MAX_CHARS` characters, in the text search configuration of the site's language.
A query then only matches and ranks stored vectors; highlighting reads the same cut text.

Other databases keep the column empty and search with notes.search's fallback.
"""

from __future__ import annotations

from django.conf import settings
from django.db import connection, connections
from django.db.models.functions import Left

# What a row's vector is made of; a save that touches none of these keeps its vector.
INDEXED_FIELDS = frozenset({"title", "summary", "description", "rendered_text"})

PG_CONFIGS = {
    "en": "english",
    "de": "german",
    "fr": "french",
    "es": "spanish",
    "it": "italian",
    "nl": "dutch",
    "pt": "portuguese",
    "ru": "russian",
    "sv": "swedish",
    "da": "danish",
    "fi": "finnish",
    "no": "norwegian",
    "nb": "norwegian",
    "hu": "hungarian",
    "ro": "romanian",
    "tr": "turkish",
}


def use_full_text() -> bool:
    return connection.vendor == "postgresql"


def search_config(language_code: str = "en") -> str:
    return PG_CONFIGS.get(language_code[:2].lower(), "simple")


def site_config() -> str:
    from scidraft.site.models import SiteSettings

    return search_config(SiteSettings.objects.current().language_code)


def indexed_text(field_name: str):
    """A text column as far as it is indexed (and highlighted): its first characters."""
    return Left(field_name, settings.SEARCH_INDEX_MAX_CHARS)


def document_vector(config: str):
    """The weighted vector of a row, computed by the database from its bounded columns."""
    from django.contrib.postgres.search import SearchVector

    return (
        SearchVector(indexed_text("title"), weight="A", config=config)
        + SearchVector(
            indexed_text("summary"), indexed_text("description"), weight="B", config=config
        )
        + SearchVector(indexed_text("rendered_text"), weight="C", config=config)
    )


def touches_index(update_fields) -> bool:
    return update_fields is None or not INDEXED_FIELDS.isdisjoint(update_fields)


def vectors_store(queryset, config: str | None = None) -> int:
    """Rebuild the stored vectors of the rows of `queryset` (one UPDATE); nothing off
    PostgreSQL. Returns the number of rows updated."""
    if connections[queryset.db].vendor != "postgresql":
        return 0
    return queryset.update(search_vector=document_vector(config or site_config()))
