"""Tags are public only once a published, due note carries them.

A tag typed on a draft used to have a page and an RSS feed at /tags/<slug>/ and was offered
to every Author by the editor's autocomplete. Here every public address is checked for every
role, the autocomplete for every role, and the page cache across publish and unpublish.
"""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import Client
from django.utils import timezone

from notes import services
from notes.models import Note, NoteAuthor, Page, Tag
from notes.sitemaps import CHUNK
from tests.factories import draft_note, publish, published_note, unpublish, write

ROLES = ("anonymous", "author", "other_author", "editor", "admin")
SECRET = "Zanzibar Secret Project"
SECRET_SLUG = "zanzibar-secret-project"


@pytest.fixture
def users(author, other_author, editor_user, admin_user) -> dict:
    return {
        "author": author,
        "other_author": other_author,
        "editor": editor_user,
        "admin": admin_user,
    }


def client_for(role: str, users: dict) -> Client:
    client = Client()
    if role != "anonymous":
        client.force_login(users[role])
    return client


@pytest.fixture
def draft_tag(author, note) -> Note:
    """Ada's draft, the only note with the secret tag; a published note carries a public tag."""
    write(note, author, body="Draft text.", tags=[SECRET, "Open Topic"])
    published_note(author, "Published work", "Published text about things.", tags=["Open Topic"])
    Page.objects.create(slug="search", title="Search", layout=Page.Layout.SEARCH)
    return note


# Every public address that names tags, and whether it is the secret tag's own address.
TAG_ADDRESSES = [
    f"/tags/{SECRET_SLUG}/",
    f"/tags/{SECRET_SLUG}/page/1/",
    f"/tags/{SECRET_SLUG}/index.xml",
]
LISTINGS = [
    "/",
    "/notes/",
    "/tags/",
    "/index.xml",
    "/index.json",
    "/sitemap.xml",
    "/search/?q=Zanzibar",
    "/search/?q=published",
    "/notes/published-work/",
    "/authors/ada/",
]


@pytest.mark.django_db
@pytest.mark.parametrize("role", ROLES)
def test_a_draft_only_tag_is_nowhere_public_for_any_role(role, users, draft_tag):
    """Its page, pages and RSS are 404 and no listing, feed, sitemap, search index or tag chip
    names it, whoever asks; the public tag beside it is served."""
    client = client_for(role, users)
    for url in TAG_ADDRESSES:
        assert client.get(url).status_code == 404, (role, url)
    for url in LISTINGS:
        response = client.get(url)
        assert response.status_code == 200, (role, url)
        text = response.content.decode()
        assert SECRET_SLUG not in text and SECRET not in text, (role, url)
    assert client.get("/tags/open-topic/").status_code == 200
    assert client.get("/tags/open-topic/index.xml").status_code == 200
    # The sitemap lists tags in the file of their key's range: the secret one is in none.
    chunks = {tag.pk // CHUNK for tag in Tag.objects.all()}
    files = "".join(client.get(f"/sitemap-tags-{k}.xml").content.decode() for k in chunks)
    assert "/tags/open-topic/" in files and SECRET_SLUG not in files
    assert "/tags/open-topic/" in client.get("/notes/published-work/").content.decode()


@pytest.mark.django_db
def test_a_tag_only_on_a_scheduled_note_is_public_once_the_note_is_due(
    client, author, note, monkeypatch
):
    """Scheduled is not published: the tag's page appears when the date passes, with no
    write (the generation knows the next due date)."""
    soon = timezone.now() + dt.timedelta(hours=1)
    write(note, author, body="Coming soon.", tags=[SECRET], date=soon)
    publish(note, author)
    assert Note.objects.get(pk=note.pk).is_scheduled
    assert client.get(f"/tags/{SECRET_SLUG}/").status_code == 404
    assert client.get(f"/tags/{SECRET_SLUG}/index.xml").status_code == 404
    assert SECRET not in client.get("/tags/").content.decode()
    assert not Tag.objects.public().filter(name=SECRET).exists()

    later = timezone.now() + dt.timedelta(hours=2)
    monkeypatch.setattr(timezone, "now", lambda: later)
    response = client.get(f"/tags/{SECRET_SLUG}/")
    assert response.status_code == 200
    assert f"/notes/{note.slug}/" in response.content.decode()
    assert SECRET in client.get("/tags/").content.decode()


@pytest.mark.django_db
def test_the_cached_tag_page_follows_publish_and_unpublish(client, author, note):
    """The tag's page appears for anonymous readers once the note is published and is cached;
    once the note is unpublished the cached page and the tag index are not served again (the
    page cache is keyed by the generation those writes bump)."""
    write(note, author, body="Text of the note.", tags=[SECRET])
    url = f"/tags/{SECRET_SLUG}/"
    assert client.get(url).status_code == 404

    publish(note, author)
    response = client.get(url)
    assert response.status_code == 200
    assert f"/notes/{note.slug}/" in response.content.decode()
    assert client.get(url + "index.xml").status_code == 200
    assert client.get(url)["X-Cache"] == "hit"
    assert SECRET in client.get("/tags/").content.decode()
    assert client.get("/tags/")["X-Cache"] == "hit"

    unpublish(note, author)
    assert client.get(url).status_code == 404
    assert client.get(url + "index.xml").status_code == 404
    assert SECRET not in client.get("/tags/").content.decode()


# --- The editor's autocomplete -----------------------------------------------------------------

# role → whether the secret tag (only on Ada's draft) and an unused tag are offered.
OFFERED = {
    "anonymous": (False, False),
    "author": (True, False),
    "other_author": (False, False),
    "editor": (True, True),
    "admin": (True, True),
}


@pytest.mark.django_db
@pytest.mark.parametrize("role", ROLES)
def test_offered_tags_per_role(role, users, draft_tag):
    """Tag.objects.offered_to: public tags for all, a draft's tags for those who may edit the
    draft, every tag (unused ones too) for Editors and admins."""
    services.tag_get_or_create("Unused Tag")
    user = users.get(role)
    if user is None:
        from django.contrib.auth.models import AnonymousUser

        user = AnonymousUser()
    names = set(Tag.objects.offered_to(user).values_list("name", flat=True))
    assert "Open Topic" in names
    assert (SECRET in names, "Unused Tag" in names) == OFFERED[role], names


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["author", "other_author", "editor", "admin"])
def test_editor_page_datalist_offers_only_what_the_user_may_see(role, users, draft_tag):
    """The editor page of a note of one's own lists the public tags, and the draft's tag only
    for its author and for Editors and admins."""
    user = users[role]
    own = services.note_create(user=user, title=f"Note of {role}")
    text = client_for(role, users).get(f"/write/{own.pk}/").content.decode()
    assert '<option value="Open Topic">' in text
    assert (f'<option value="{SECRET}">' in text) == OFFERED[role][0], role


@pytest.mark.django_db
def test_a_coauthor_is_offered_the_tags_of_the_shared_draft(client, other_author, draft_tag):
    """Co-authors may edit the draft, so its tags are theirs to reuse."""
    NoteAuthor.objects.create(
        note=draft_tag, author=services.author_for_user(other_author), position=1
    )
    assert Tag.objects.offered_to(other_author).filter(name=SECRET).exists()
    client.force_login(other_author)
    text = client.get(f"/write/{draft_tag.pk}/").content.decode()
    assert f'<option value="{SECRET}">' in text


@pytest.mark.django_db
def test_public_tags_cost_one_query_whatever_the_number_of_notes(author, django_assert_num_queries):
    """Tag.objects.public() is one query with a subquery, not one per tag or note."""
    for index in range(5):
        extra = draft_note(author, f"Extra {index}", body="Text.", tags=[f"T{index}", "Shared"])
        if index % 2:
            publish(extra, author)
    with django_assert_num_queries(1):
        names = sorted(Tag.objects.public().values_list("name", flat=True))
    assert names == ["Shared", "T1", "T3"]
    with django_assert_num_queries(1):
        offered = sorted(Tag.objects.offered_to(author).values_list("name", flat=True))
    assert offered == ["Shared", "T0", "T1", "T2", "T3", "T4"]
