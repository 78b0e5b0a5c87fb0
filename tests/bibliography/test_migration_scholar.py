"""Entries stored before their Scholar value was kept get it, bounded, when migrated."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from bibliography.exports import SCHOLAR_VALUE_CHARS

BEFORE = [("bibliography", "0003_bibfile_is_public")]
AFTER = [("bibliography", "0004_bibentry_scholar")]


@pytest.mark.django_db(transaction=True)
def test_stored_entries_get_their_scholar_value_cut_to_the_bound():
    """A row with a 3 M-character title, as a file read before expansion was bounded could
    store: after the migration its citation_reference is decoded and cut, like a new one's."""
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    bibfile = old.get_model("bibliography", "BibFile").objects.create(name="bib/old.bib")
    old.get_model("bibliography", "BibEntry").objects.create(
        bibfile=bibfile,
        key="huge",
        entry_type="misc",
        fields={"title": r"G\"odel " * 400_000, "year": "1931"},
        persons={"author": [r"G\"odel, Kurt"]},
    )
    try:
        executor = MigrationExecutor(connection)
        executor.migrate(AFTER)
        new = executor.loader.project_state(AFTER).apps
        scholar = new.get_model("bibliography", "BibEntry").objects.get(key="huge").scholar
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
    title, author, year = scholar.split("; ")
    assert title.startswith("citation_title=Gödel Gödel") and title.endswith("…")
    assert len(title) <= len("citation_title=") + SCHOLAR_VALUE_CHARS
    assert author == "citation_author=Gödel, Kurt"
    assert year == "citation_publication_date=1931"
