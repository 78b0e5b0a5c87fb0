"""The editor's preview: what it shows (the render, its problems, JSON with source lines and
labels), and its limits: the user's last preview again is free, changed previews are counted per
user in the database, and past the limit refused with 429 and Retry-After."""

from __future__ import annotations

import json

import pytest
from django.db import transaction

from accounts import limits as rate_limits
from accounts.models import RateLimitEvent
from editor import previews
from editor.views import problems_html
from notes import services
from notes.models import Note, Status
from notes.rendering import context_for
from scidraft.markup import render
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


# --- What the preview shows ---------------------------------------------------------------------

SOURCE = "See \\cite{knuth} and \\cite{nobody <b>} and $x^2$.\n\n{{< references >}}\n"


def test_preview_renders_math_and_numbered_citations_and_lists_warnings(client, author, cited_note):
    """The preview resolves citations against the note's bibliographies and lists problems."""
    client.force_login(author)
    response = client.post(f"/write/{cited_note.pk}/preview/", {"content": SOURCE})
    text = response.content.decode()
    assert response.status_code == 200
    assert text.startswith('<div class="editor-problems" data-count="1">')
    assert 'class="katex"' in text
    assert '<a href="#ref-0-knuth">[1]</a>' in text and "Knuth D." in text
    assert "line 1" in text and "&lt;b&gt;" in text and "nobody <b>" not in text


def test_preview_equals_the_public_page_body(client, author, cited_note):
    """Preview output (after the problems list) is the stored rendered_html for that source."""
    client.force_login(author)
    preview = client.post(f"/write/{cited_note.pk}/preview/", {"content": SOURCE})
    services.note_save(
        note_id=cited_note.pk, user=author, base_version=cited_note.version,
        fields={"body": SOURCE},
    )  # fmt: skip
    stored = Note.objects.get(pk=cited_note.pk)
    warnings = render(SOURCE, context_for(stored)).warnings
    assert preview.content.decode() == str(problems_html(warnings)) + stored.rendered_html
    stored.status = Status.PUBLISHED
    stored.save()
    client.logout()
    public = client.get(f"/notes/{stored.slug}/").content.decode()
    assert stored.rendered_html in public


def test_preview_json_carries_lines_problems_and_labels(client, author, cited_note):
    """Asked for JSON (the editor), the preview gives the HTML with each block's source line,
    the problems with their line, code and whether they block publishing, and the labels."""
    client.force_login(author)
    source = SOURCE + "\n:::lemma[Key]{#lem-key}\nText.\n:::\n\n$$\nx \\label{eq:one}\n$$\n"
    response = client.post(
        f"/write/{cited_note.pk}/preview/", {"content": source}, HTTP_ACCEPT="application/json"
    )
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    data = response.json()
    assert '<p data-source-line="1">See' in data["html"]
    assert 'data-source-line="5" class="env env-lemma' in data["html"]
    assert data["problems"] == [
        {
            "line": 1,
            "code": "cite-missing",
            "message": data["problems"][0]["message"],
            "blocking": True,
        }
    ]
    assert "nobody <b>" in data["problems"][0]["message"]  # JSON: escaped by the client
    labels = {entry["label"]: entry for entry in data["labels"]}
    assert labels["lem-key"] == {"label": "lem-key", "kind": "lemma", "text": "Lemma 1"}
    assert labels["eq:one"]["kind"] == "equation"
    figure = client.post(
        f"/write/{cited_note.pk}/preview/",
        {"content": "![Plot](p.png){#fig:plot}\n\nTable: T {#tbl:t}\n\n| a |\n|---|\n| 1 |\n"},
        HTTP_ACCEPT="application/json",
    ).json()
    assert figure["labels"] == [
        {"label": "fig:plot", "kind": "figure", "text": "Figure 1"},
        {"label": "tbl:t", "kind": "table", "text": "Table 1"},
    ]
    # The admin's preview still gets its HTML, without source lines.
    html = client.post(f"/write/{cited_note.pk}/preview/", {"content": source}).content.decode()
    assert html.startswith('<div class="editor-problems"') and "data-source-line" not in html
