"""A note's revisions in the editor: the list, the diff of two, restoring one."""

from __future__ import annotations

from notes import services
from notes.models import Note
from tests.editor.forms import editor_form


def test_revisions_diff_and_restore(client, author, note):
    """The revisions page lists who and when, diffs two bodies (escaped) and restores."""
    first = services.note_save(
        note_id=note.pk, user=author, base_version=note.version, fields={"body": "alpha <x>\n"}
    )
    services.note_save(
        note_id=note.pk, user=author, base_version=first.note.version, fields={"body": "beta\n"}
    )
    client.force_login(author)
    response = client.get(f"/write/{note.pk}/revisions/?a=2&b=3")
    text = response.content.decode()
    assert response.status_code == 200
    assert "ada" in text and "Save" in text
    assert 'class="diff revision-diff"' in text and "alpha &lt;x&gt;" in text and "beta" in text
    assert "<x>" not in text
    response = client.post(f"/write/{note.pk}/revisions/{first.revision.pk}/restore/")
    assert response.status_code == 302
    restored = Note.objects.get(pk=note.pk)
    assert restored.body == "alpha <x>\n"
    assert restored.revisions.first().kind == "restore"


def test_revisions_are_picked_from_the_list(client, author, note):
    """Each revision has a From and a To radio button in one form (the newest two checked when
    nothing is asked), a link to its own changes, and a Restore link (which asks first)."""
    saved = note
    for body in ("step one\n", "step two\n", "step three\n"):
        saved = services.note_save(
            note_id=note.pk, user=author, base_version=saved.version, fields={"body": body}
        ).note
    client.force_login(author)
    text = client.get(f"/write/{note.pk}/revisions/").content.decode()
    newest = note.revisions.order_by("-number").values_list("number", flat=True)[:2]
    assert (
        f'name="b" value="{newest[0]}" aria-label="Compare to revision {newest[0]}" checked' in text
    )
    assert (
        f'name="a" value="{newest[1]}" aria-label="Compare from revision {newest[1]}" checked'
        in text
    )
    assert f'href="?a={newest[1]}&amp;b={newest[0]}"' in text
    assert 'class="diff' not in text  # no diff until one is asked for
    revision = note.revisions.get(number=newest[1])
    assert f'href="/write/{note.pk}/revisions/{revision.pk}/restore/"' in text
    picked = client.get(f"/write/{note.pk}/revisions/?a={newest[1]}&b={newest[0]}")
    assert "Changes from revision" in picked.content.decode()
    assert "<del>two</del>" in picked.content.decode()
    assert "<ins>three</ins>" in picked.content.decode()


def test_restore_asks_first_and_shows_what_it_changes(client, author, note):
    """GET on a revision's restore address changes nothing: it shows the diff from the text
    being edited to the revision and a button that restores (POST), with Cancel."""
    first = services.note_save(
        note_id=note.pk, user=author, base_version=note.version, fields={"body": "old words\n"}
    )
    services.note_save(
        note_id=note.pk, user=author, base_version=first.note.version,
        fields={"body": "new words\n"},
    )  # fmt: skip
    client.force_login(author)
    version = Note.objects.get(pk=note.pk).version
    response = client.get(f"/write/{note.pk}/revisions/{first.revision.pk}/restore/")
    text = response.content.decode()
    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    assert f"Restore revision {first.revision.number}?" in text
    assert "<del>new</del>" in text and "<ins>old</ins>" in text
    assert 'method="post"' in text and "Cancel" in text
    unchanged = Note.objects.get(pk=note.pk)
    assert unchanged.body == "new words\n" and unchanged.version == version


def test_restoring_a_published_note_says_it_writes_the_working_copy(client, author, note):
    """The confirmation says readers keep the published version; the live body stays."""
    client.force_login(author)
    services.note_publish(note_id=note.pk, user=author, base_version=note.version)
    published = Note.objects.get(pk=note.pk)
    services.note_save(
        note_id=note.pk, user=author, base_version=published.version,
        fields={"body": "changed later\n"},
    )  # fmt: skip
    revision = published.revisions.order_by("number").first()
    text = client.get(f"/write/{note.pk}/revisions/{revision.pk}/restore/").content.decode()
    assert "unpublished changes" in text and "readers keep seeing the published version" in text
    client.post(f"/write/{note.pk}/revisions/{revision.pk}/restore/")
    assert Note.objects.get(pk=note.pk).body == published.body


def test_restore_brings_back_side_panel_fields_but_not_the_slug(client, author, note):
    """Restoring a revision restores flags, keywords and entry-set fields; the slug stays."""
    client.force_login(author)
    client.post(
        f"/write/{note.pk}/",
        editor_form(note, body="First.", search_hidden="on", keywords="k1", entry_entry_title="E1"),
    )
    first = Note.objects.get(pk=note.pk).revisions.first()
    note.refresh_from_db()
    client.post(
        f"/write/{note.pk}/", editor_form(note, body="Second.", slug="renamed", keywords="")
    )
    response = client.post(f"/write/{note.pk}/revisions/{first.pk}/restore/")
    assert response.status_code == 302
    restored = Note.objects.get(pk=note.pk)
    assert restored.body == "First." and restored.search_hidden
    assert restored.keywords == ["k1"] and restored.params == {"entryTitle": "E1"}
    assert restored.slug == "renamed"
