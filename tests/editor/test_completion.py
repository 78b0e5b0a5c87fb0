"""The labels of other notes for completing \\ref{slug:label} (editor/completion.py)."""

from __future__ import annotations

import pytest

from notes import services
from notes.models import Note
from tests.people import user_in_group

pytestmark = pytest.mark.django_db


def _labelled(user, title: str, body: str, *, publish: bool = False) -> Note:
    note = services.note_create(user=user, title=title)
    note = services.note_save(
        note_id=note.pk, user=user, base_version=note.version, fields={"body": body}
    ).note
    if publish:
        services.note_publish(note_id=note.pk, user=user, base_version=note.version)
    return Note.objects.get(pk=note.pk)


def _refs(client, note, query=""):
    response = client.get(f"/write/{note.pk}/labels/", {"q": query})
    assert response.status_code == 200
    return response.json()


def test_labels_of_published_notes_and_of_the_authors_own_drafts(
    client, author, other_author, note
):
    """An author sees slug:label of published notes and of notes they may edit, never of
    another author's draft, nor of the note being edited (its labels come with the preview)."""
    _labelled(other_author, "Public", ":::lemma[A]{#lem-pub}\nx\n:::\n", publish=True)
    _labelled(other_author, "Private draft", ":::lemma[B]{#lem-secret}\nx\n:::\n")
    _labelled(author, "Mine", "$$\nx \\label{eq:mine}\n$$\n")
    services.note_save(
        note_id=note.pk, user=author, base_version=note.version,
        fields={"body": ":::lemma[C]{#lem-here}\nx\n:::\n"},
    )  # fmt: skip
    client.force_login(author)
    refs = {entry["ref"]: entry for entry in _refs(client, note)["results"]}
    assert set(refs) == {"public:lem-pub", "mine:eq:mine"}
    assert refs["public:lem-pub"] == {"ref": "public:lem-pub", "text": "Lemma 1", "title": "Public"}


def test_query_matches_slugs_and_titles_then_labels_after_a_colon(client, author, note):
    """?q= before a colon matches slugs and titles; after one it is the exact slug and the
    start of the label."""
    _labelled(
        author, "Heat flow", ":::theorem[T]{#thm-max}\nx\n:::\n\n:::lemma[L]{#lem-aux}\nx\n:::\n"
    )
    _labelled(author, "Waves", ":::theorem[W]{#thm-wave}\nx\n:::\n")
    client.force_login(author)
    assert {e["ref"] for e in _refs(client, note, "heat")["results"]} == {
        "heat-flow:thm-max", "heat-flow:lem-aux",
    }  # fmt: skip
    assert {e["ref"] for e in _refs(client, note, "heat-flow:thm")["results"]} == {
        "heat-flow:thm-max"
    }
    assert _refs(client, note, "nothing-like-it")["results"] == []


def test_queries_stay_constant_as_notes_grow(client, author, note, django_assert_num_queries):
    """One query for the note (and the session's user), one for the labels, for 3 or 30 notes."""
    client.force_login(author)

    def count() -> int:
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as queries:
            _refs(client, note)
        return len(queries)

    for index in range(3):
        _labelled(author, f"Few {index}", f":::lemma[x]{{#lem-{index}}}\nx\n:::\n")
    few = count()
    for index in range(27):
        _labelled(author, f"Many {index}", f":::lemma[x]{{#lem-m{index}}}\nx\n:::\n")
    assert count() == few


def test_another_authors_note_is_not_found(client, other_author, note):
    client.force_login(other_author)
    assert client.get(f"/write/{note.pk}/labels/").status_code == 404


def test_an_editor_sees_every_notes_labels(client, author, note):
    """Editors may edit every note: other authors' drafts are referable for them."""
    _labelled(author, "Draft", ":::lemma[D]{#lem-d}\nx\n:::\n")
    client.force_login(user_in_group("eve", "Editor"))
    assert "draft:lem-d" in {e["ref"] for e in _refs(client, note)["results"]}


def test_figure_and_table_labels_of_other_notes_are_completed(client, author, other_author, note):
    """A published note's figures and tables are offered as slug:fig:… and slug:tbl:… with
    their numbered text; `slug:fig` narrows to its figures."""
    _labelled(
        other_author,
        "Plots",
        "![Growth](g.png){#fig:growth}\n\nTable: Errors {#tbl:errors}\n\n| a |\n|---|\n| 1 |\n",
        publish=True,
    )
    client.force_login(author)
    refs = {entry["ref"]: entry["text"] for entry in _refs(client, note, "plots")["results"]}
    assert refs == {"plots:fig:growth": "Figure 1", "plots:tbl:errors": "Table 1"}
    assert [e["ref"] for e in _refs(client, note, "plots:fig")["results"]] == ["plots:fig:growth"]
