"""Read rules of notes (querysets) and model-level validation."""

from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.auth.models import Group, User
from django.core.exceptions import ValidationError
from django.utils import timezone

from notes.models import Author, Note, NoteAuthor, Status, Tag
from scidraft.site.models import MenuItem, SiteSettings
from tests.factories import note_row

NOW = timezone.now()


@pytest.mark.django_db
def test_published_excludes_drafts_future_notes_and_empty_bodies():
    """Readers see published, due notes with content (an empty note is "not yet published")."""
    note_row("live")
    note_row("draft", status=Status.DRAFT)
    note_row("review", status=Status.REVIEW)
    note_row("scheduled", date=NOW + dt.timedelta(days=1))
    note_row("empty", body="  \n\t")
    assert list(Note.objects.published().values_list("slug", flat=True)) == ["live"]
    assert list(Note.objects.scheduled().values_list("slug", flat=True)) == ["scheduled"]


@pytest.mark.django_db
def test_a_scheduled_note_becomes_published_at_its_date():
    """The same row is scheduled before its date and published after, with no write."""
    note_row("later", date=NOW + dt.timedelta(hours=1))
    assert not Note.objects.published(now=NOW).exists()
    assert Note.objects.published(now=NOW + dt.timedelta(hours=2)).exists()


@pytest.mark.django_db
def test_feed_order_is_weight_first_then_newest():
    """Hugo's default order: weighted notes first (ascending), then by date, newest first."""
    note_row("old", date=NOW - dt.timedelta(days=3))
    note_row("new", date=NOW - dt.timedelta(days=1))
    note_row("pinned", date=NOW - dt.timedelta(days=9), weight=1)
    order = list(Note.objects.published().in_feed_order().values_list("slug", flat=True))
    assert order == ["pinned", "new", "old"]


@pytest.mark.django_db
def test_a_feed_page_read_from_the_index_is_the_same_slice_of_the_feed_order():
    """page_in_feed_order (two index reads) gives exactly in_feed_order()[offset:offset+limit]
    for every page, pinned notes (negative and positive weights) and equal dates included."""
    for number in range(9):
        note_row(f"n{number}", date=NOW - dt.timedelta(days=number % 4))
    for number, weight in enumerate([3, -1, 3, 1]):
        note_row(f"p{number}", date=NOW - dt.timedelta(days=number), weight=weight)
    notes = Note.objects.published(now=NOW)
    expected = list(notes.in_feed_order().values_list("slug", flat=True))
    total, pinned = notes.count_in_feed()
    assert (total, pinned) == (13, 4)
    for limit in (1, 3, 5, 13):
        for offset in range(0, 14):
            page = notes.page_in_feed_order(offset, limit, pinned)
            assert [note.slug for note in page] == expected[offset : offset + limit]


@pytest.mark.django_db
def test_local_date_prints_in_the_offset_it_was_written_in():
    """A note written at 07:20+09:00 shows 07:20 whatever the server's time zone."""
    moment = dt.datetime(2026, 9, 22, 7, 20, tzinfo=dt.timezone(dt.timedelta(hours=9)))
    note = note_row("tokyo", date=moment, date_offset_minutes=540)
    note.refresh_from_db()
    assert note.local_date.strftime("%b %d, %Y · %H:%M %z") == "Sep 22, 2026 · 07:20 +0900"


@pytest.mark.django_db
def test_editable_by_follows_the_roles():
    """Authors edit the notes that name them; Editors and superusers edit any; anonymous
    users, inactive accounts and a creator no longer named edit none."""
    from django.contrib.auth.models import AnonymousUser

    owner = User.objects.create_user("owner")
    coauthor = User.objects.create_user("coauthor")
    stranger = User.objects.create_user("stranger")
    editor = User.objects.create_user("editor")
    editor.groups.add(Group.objects.get(name="Editor"))
    mine = note_row("mine", created_by=owner)
    NoteAuthor.objects.create(
        note=mine, author=Author.objects.create(name="Owner", handle="owner", user=owner)
    )
    shared = note_row("shared", created_by=stranger)
    NoteAuthor.objects.create(
        note=shared, author=Author.objects.create(name="Co", handle="co", user=coauthor)
    )

    def editable(user):
        return set(Note.objects.editable_by(user).values_list("slug", flat=True))

    assert editable(owner) == {"mine"}
    assert editable(coauthor) == {"shared"}
    assert editable(stranger) == set()  # created "shared", is not named on it
    assert editable(editor) == {"mine", "shared"}
    assert editable(AnonymousUser()) == set()
    owner.is_active = False
    assert editable(owner) == set()
    assert mine.pk


def test_editable_by_follows_the_authors_being_edited(note, author, other_author, editor_user):
    """A published note with a working copy: who may edit it is who the copy names. A co-author
    taken off there loses access at once (the live byline still names him), one added there
    gains it; discarding the copy puts the live authors back in charge."""
    from notes import services

    bert = services.author_for_user(other_author).handle
    note = services.note_save(
        note_id=note.pk, user=editor_user, base_version=note.version,
        fields={"body": "Text.", "authors": [author.author.handle, bert]},
    ).note  # fmt: skip
    note = services.note_publish(note_id=note.pk, user=author, base_version=note.version).note

    def editable(user) -> bool:
        return Note.objects.editable_by(user).filter(pk=note.pk).exists()

    assert editable(other_author)
    note = services.note_save(
        note_id=note.pk, user=editor_user, base_version=note.version,
        fields={"authors": [author.author.handle]},
    ).note  # fmt: skip
    assert list(note.authors.values_list("handle", flat=True)) == [author.author.handle, bert]
    assert not editable(other_author) and editable(author)
    note = services.working_copy_discard(
        note_id=note.pk, user=editor_user, base_version=note.version
    ).note
    assert editable(other_author)
    from tests.people import user_in_group

    carol = user_in_group("carol", "Author")
    services.note_save(
        note_id=note.pk, user=editor_user, base_version=note.version,
        fields={"authors": [bert, services.author_for_user(carol).handle]},
    )  # fmt: skip
    assert editable(other_author) and editable(carol) and not editable(author)


@pytest.mark.django_db
def test_note_body_over_the_limit_is_refused(settings):
    """NOTE_BODY_MAX_BYTES bounds a body (in UTF-8 bytes) with a clear message."""
    settings.NOTE_BODY_MAX_BYTES = 10
    note = Note(slug="long", body="é" * 6)
    with pytest.raises(ValidationError, match="12 bytes .*the limit is 10 bytes"):
        note.full_clean()


@pytest.mark.django_db
def test_share_buttons_must_be_known_names():
    """Only the theme's seven share buttons may be listed."""
    note = Note(slug="s", body="x", share_buttons=["x", "myspace"])
    with pytest.raises(ValidationError):
        note.full_clean()


@pytest.mark.django_db
def test_tag_slug_is_urlized_from_the_name():
    """Tags get Hugo-style URLs: "Linear Algebra" → linear-algebra."""
    assert Tag.objects.create(name="Linear Algebra").slug == "linear-algebra"


@pytest.mark.django_db
def test_site_settings_is_a_single_row():
    """Saving another settings object overwrites row 1 instead of adding a row."""
    first = SiteSettings.objects.current()
    SiteSettings(title="Other").save()
    assert SiteSettings.objects.count() == 1
    first.refresh_from_db()
    assert first.title == "Other"
    assert first.promotion_position_bounds() == (3, 5)


@pytest.mark.django_db
def test_menus_have_one_level_of_children():
    """A child of a child is refused, as the theme's menu renders one level."""
    top = MenuItem.objects.create(identifier="ref", name="Reference")
    child = MenuItem.objects.create(identifier="a", name="A", url="/a/", parent=top)
    grandchild = MenuItem(identifier="b", name="B", url="/b/", parent=child)
    with pytest.raises(ValidationError):
        grandchild.full_clean()


@pytest.mark.django_db
def test_a_note_without_a_tag_order_lists_its_tags_by_name():
    """Notes from before tag_order (the migration leaves it empty) show their tags as they
    always did."""
    note = Note.objects.create(slug="older", body="x")
    note.tags.add(Tag.objects.create(name="Zeta", slug="zeta"))
    note.tags.add(Tag.objects.create(name="Alpha", slug="alpha"))
    assert note.tag_order == []
    assert [tag.name for tag in note.ordered_tags()] == ["Alpha", "Zeta"]


@pytest.mark.django_db
def test_tags_the_order_does_not_name_follow_it_by_name():
    """A tag added where the order is not kept (the admin) comes after the named ones; names
    match as tag_get_or_create files them (spaces collapsed, any case)."""
    note = Note.objects.create(slug="mixed", body="x", tag_order=["Zeta", "linear  algebra"])
    for name in ("Beta", "Linear Algebra", "Zeta", "Alpha"):
        note.tags.add(Tag.objects.create(name=name, slug=name.lower().replace(" ", "-")))
    assert [tag.name for tag in note.ordered_tags()] == ["Zeta", "Linear Algebra", "Alpha", "Beta"]


def test_existing_working_copies_get_the_authors_their_fields_name(
    note, author, other_author, editor_user
):
    """The migration that adds WorkingCopy.authors fills it from each copy's fields."""
    import importlib

    from django.apps import apps

    from notes import services

    migration = importlib.import_module("notes.migrations.0016_workingcopy_authors")
    note = services.note_save(
        note_id=note.pk, user=author, base_version=note.version, fields={"body": "Text."}
    ).note
    note = services.note_publish(note_id=note.pk, user=author, base_version=note.version).note
    bert = services.author_for_user(other_author)
    services.note_save(
        note_id=note.pk, user=editor_user, base_version=note.version,
        fields={"authors": [author.author.handle, bert.handle]},
    )  # fmt: skip
    copy = Note.objects.get(pk=note.pk).working
    copy.authors.clear()
    migration.authors_from_fields(apps, None)
    assert set(copy.authors.all()) == {author.author, bert}


def test_every_notes_model_is_imported_from_notes_models():
    """Each model of the notes app is a name of `notes.models`, whichever module defines it."""
    from django.apps import apps

    import notes.models

    for model in apps.get_app_config("notes").get_models():
        assert getattr(notes.models, model.__name__) is model
        assert model.__name__ in notes.models.__all__


def test_the_notes_model_modules_import_no_module_that_imports_them():
    """The model modules import one another one way only (type hints aside): no cycle."""
    import ast
    from pathlib import Path

    import notes.models

    folder = Path(notes.models.__file__).parent
    imports = {}
    for path in folder.glob("*.py"):
        if path.stem == "__init__":
            continue
        tree = ast.parse(path.read_text())
        imports[path.stem] = {
            node.module
            for node in tree.body
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module
        }

    def reaches(start, goal, seen=()):
        return any(
            name == goal or (name not in seen and reaches(name, goal, (*seen, name)))
            for name in imports.get(start, ())
        )

    assert imports["notes"] >= {"authors", "tags", "working"}
    assert not [name for name in imports if reaches(name, name)]


# --- Recommendations: the ring of draw keys (NoteQuerySet.recommended) -----------------------


def _ring_oracle(note: Note, start: int, count: int) -> list[tuple[str, str]]:
    """The rule, read off every candidate in Python: the published regular notes but `note`,
    by (draw_key, slug), from the first at or after `start`, wrapping round."""
    others = sorted(
        Note.objects.published()
        .regular()
        .exclude(pk=note.pk)
        .values_list("draw_key", "slug", "title")
    )
    split = next((index for index, row in enumerate(others) if row[0] >= start), len(others))
    return [(slug, title) for _, slug, title in (others[split:] + others[:split])[:count]]


@pytest.mark.django_db
def test_draw_key_is_kept_from_the_slug_on_save():
    """save() keeps draw_key as notes.feed.draw_key(slug), a slug change included."""
    from notes.feed import draw_key

    note = note_row("first-slug")
    assert Note.objects.get(pk=note.pk).draw_key == draw_key("first-slug")
    note.slug = "second-slug"
    note.save(update_fields=["slug"])
    assert Note.objects.get(pk=note.pk).draw_key == draw_key("second-slug")


@pytest.mark.django_db
def test_recommended_follows_the_ring_from_the_start():
    """The notes after `start` by draw key, wrapping round at the end of the ring, whatever
    the start: the same as reading every candidate and rotating."""
    from notes.feed import DRAW_KEYS, recommendation_start

    notes = [note_row(f"ring-{index:02d}", title=f"Ring {index}") for index in range(12)]
    keys = sorted(Note.objects.values_list("draw_key", flat=True))
    starts = [0, 1, DRAW_KEYS - 1, *keys, *(key + 1 for key in keys)]
    starts += [recommendation_start(seed, "ring-03") for seed in range(20)]
    for note in notes[:4]:
        for start in starts:
            for count in (1, 3, 11, 20):
                expected = _ring_oracle(note, start, count)
                assert Note.objects.published().recommended(note, start, count) == expected
    assert len(Note.objects.published().recommended(notes[0], 0, 20)) == 11


@pytest.mark.django_db
def test_recommended_for_a_fixed_set_of_notes():
    """The rule pinned: these slugs (their draw keys are hashes of them), this seed."""
    from notes.feed import recommendation_start

    for slug in ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"):
        note_row(slug, title=slug.title())
    picks = {
        note.slug: [
            slug
            for slug, _ in Note.objects.published().recommended(
                note, recommendation_start(7, note.slug), 3
            )
        ]
        for note in Note.objects.order_by("slug")
    }
    assert picks == FIXED_PICKS


@pytest.mark.django_db
def test_recommended_never_the_note_itself_nor_unpublished_notes():
    """Drafts, notes in review, scheduled, empty, trashed notes and promotions are never
    drawn, and neither is the note the page shows, from any start on the ring."""
    from notes.feed import DRAW_KEYS

    regular = [note_row(f"live-{index}") for index in range(4)]
    note_row("draft", status=Status.DRAFT)
    note_row("review", status=Status.REVIEW)
    note_row("scheduled", date=NOW + dt.timedelta(days=1))
    note_row("empty", body=" ")
    note_row("trashed", deleted_at=NOW)
    note_row("promoted", promotion=True)
    for note in regular:
        for start in range(0, DRAW_KEYS, DRAW_KEYS // 64):
            picked = [slug for slug, _ in Note.objects.published().recommended(note, start, 3)]
            assert sorted(picked) == sorted(other.slug for other in regular if other.pk != note.pk)


# The notes after each one's start for seed 7, by the draw keys of these slugs: a change to the
# hash, the start or the ring's order changes what every note page recommends.
FIXED_PICKS = {
    "alpha": ["charlie", "foxtrot", "hotel"],
    "bravo": ["hotel", "alpha", "delta"],
    "charlie": ["foxtrot", "hotel", "alpha"],
    "delta": ["charlie", "foxtrot", "hotel"],
    "echo": ["charlie", "foxtrot", "hotel"],
    "foxtrot": ["hotel", "alpha", "delta"],
    "golf": ["alpha", "delta", "bravo"],
    "hotel": ["alpha", "delta", "bravo"],
}
