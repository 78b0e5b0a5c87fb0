"""The editor preview's limits: the user's last preview again is free, changed previews are
counted per user in the database, and past the limit refused with 429 and Retry-After."""

from __future__ import annotations

import json

import pytest
from django.db import transaction

from accounts import limits as rate_limits
from accounts.models import RateLimitEvent
from editor import previews
from notes import services
from scidraft.site.generation import bump_generation
from tests.accounts.conftest import Clock

pytestmark = pytest.mark.django_db


@pytest.fixture
def clock(monkeypatch):
    fake = Clock()
    monkeypatch.setattr(rate_limits, "clock", fake)
    return fake


def _preview(client, note, content: str, **fields):
    return client.post(
        f"/write/{note.pk}/preview/", {"content": content, **fields}, HTTP_ACCEPT="application/json"
    )


def _counted() -> int:
    return RateLimitEvent.objects.filter(scope=previews.SCOPE).count()


def test_changed_previews_past_the_limit_are_refused_with_retry_after(
    client, author, note, settings, clock
):
    """EDITOR_PREVIEW_LIMIT changed previews pass; the next is 429, with Retry-After and the
    message the editor shows, and is not counted; after the window it passes again."""
    settings.EDITOR_PREVIEW_LIMIT, settings.EDITOR_PREVIEW_WINDOW = 3, 60
    client.force_login(author)
    for index in range(3):
        assert _preview(client, note, f"Version {index}").status_code == 200
    refused = _preview(client, note, "Version 3")
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60
    data = json.loads(refused.content)
    assert data["status"] == "paused" and data["error"].startswith("Preview paused")
    assert _counted() == 3
    clock.advance(61)
    assert _preview(client, note, "Version 3").status_code == 200


def test_the_same_preview_again_is_answered_as_before_without_counting(
    client, author, note, settings, clock
):
    """The user's last preview asked for again is the same answer and is not counted, even
    past the limit; a changed text is counted."""
    settings.EDITOR_PREVIEW_LIMIT = 2
    client.force_login(author)
    first = _preview(client, note, "Same $x^2$ text.")
    assert first.status_code == 200 and "katex" in first.content.decode()
    for _ in range(5):
        again = _preview(client, note, "Same $x^2$ text.")
        assert again.status_code == 200 and again.content == first.content
    assert _counted() == 1
    assert _preview(client, note, "Other text.").status_code == 200
    assert _preview(client, note, "Same $x^2$ text.").status_code == 429  # no longer the last


def test_a_preview_after_a_write_is_counted_again(
    client, author, note, clock, django_capture_on_commit_callbacks
):
    """Anything written since (the content generation moved: a bibliography, another note)
    may change the render: the same text is rendered and counted again."""
    client.force_login(author)
    _preview(client, note, "Text.")
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        bump_generation()  # what every write does
    _preview(client, note, "Text.")
    assert _counted() == 2


def test_macros_and_the_kind_of_answer_are_part_of_what_is_the_same(
    client, author, note, settings, clock
):
    """The same text with other macros typed, or asked for as HTML, is another preview."""
    client.force_login(author)
    _preview(client, note, r"$\R$")
    _preview(client, note, r"$\R$", math_macros=r"\newcommand{\R}{\mathbb{R}}")
    html = client.post(f"/write/{note.pk}/preview/", {"content": r"$\R$"})
    assert html.status_code == 200 and _counted() == 3


def test_each_user_has_a_limit_of_their_own(client, author, other_author, note, settings, clock):
    """One co-author's previews do not use up another's."""
    settings.EDITOR_PREVIEW_LIMIT = 1
    services.note_save(
        note_id=note.pk, user=author, base_version=note.version,
        fields={"authors": ["ada", services.author_for_user(other_author).handle]},
    )  # fmt: skip
    client.force_login(author)
    assert _preview(client, note, "One.").status_code == 200
    assert _preview(client, note, "Two.").status_code == 429
    client.force_login(other_author)
    assert _preview(client, note, "Two.").status_code == 200


def test_the_html_preview_is_refused_with_retry_after_too(client, author, note, settings, clock):
    """The admin's preview (HTML) is counted and refused the same way."""
    settings.EDITOR_PREVIEW_LIMIT = 1
    client.force_login(author)
    assert client.post(f"/write/{note.pk}/preview/", {"content": "a"}).status_code == 200
    refused = client.post(f"/write/{note.pk}/preview/", {"content": "b"})
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
    assert "Preview paused" in refused.content.decode()


def test_a_preview_cut_short_by_time_is_not_kept(client, author, note, settings, clock):
    """A render that ran out of time is not the answer to keep: asked again, it is counted
    and rendered again."""
    settings.RENDER_TIME_PERCENT = 1e-7
    client.force_login(author)
    first = _preview(client, note, "**Bold** $x$")
    codes = {problem["code"] for problem in json.loads(first.content)["problems"]}
    assert "render-incomplete" in codes
    _preview(client, note, "**Bold** $x$")
    assert _counted() == 2


def test_an_unreadable_limit_refuses_the_preview(client, author, note, monkeypatch, clock):
    """With the database unable to count, a changed preview is refused (503, Retry-After)."""
    from django.db import DatabaseError

    def unavailable(counting, now):
        raise DatabaseError("the database is away")

    client.force_login(author)
    monkeypatch.setattr(rate_limits, "record", unavailable)
    response = _preview(client, note, "Text.")
    assert response.status_code == 503 and response["Retry-After"] == "30"
