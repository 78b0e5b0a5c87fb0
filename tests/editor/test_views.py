"""The editor's note page: new notes, saving and publishing, autosave, conflicts, the side panel."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django.utils import timezone

from bibliography.services import bibfile_import
from notes import services
from notes.models import Note, NoteRevision, Status
from scidraft.site.models import SiteSettings
from tests.editor.forms import editor_form


def test_login_required_redirects_to_the_login_page(client, note):
    """Anonymous visitors are sent to /accounts/login/ with next=."""
    response = client.get(f"/write/{note.pk}/")
    assert response.status_code == 302
    assert response["Location"].startswith(f"/accounts/login/?next=/write/{note.pk}/")


def test_new_note_post_creates_and_redirects_to_the_editor(client, author):
    """POST /write/new/ creates a draft and opens it."""
    client.force_login(author)
    response = client.post("/write/new/", {"title": "Fresh idea"})
    note = Note.objects.get(title="Fresh idea")
    assert response.status_code == 302 and response["Location"] == f"/write/{note.pk}/"
    assert client.get("/write/new/").status_code == 405


def test_editor_page_uses_the_per_note_preview_url(client, author, note):
    """The body's textarea names the note's endpoints for the editor (preview, upload, cite
    search, labels); the CodeMirror bundle loads as a module, the admin's preview script not at
    all."""
    client.force_login(author)
    response = client.get(f"/write/{note.pk}/")
    text = response.content.decode()
    assert response.status_code == 200
    for name, path in (("preview", "preview"), ("upload", "images"), ("cite", "cite-search"),
                       ("labels", "labels")):  # fmt: skip
        assert f'data-{name}-url="/write/{note.pk}/{path}/"' in text
    assert 'name="base_version"' in text and f'value="{note.version}"' in text
    assert "katex.min.css" in text and "admin-preview.js" not in text
    assert '<script src="/static/vendor/editor/editor.js" type="module">' in text
    assert (
        text.index("js/editor-body.js")
        < text.index("vendor/editor/editor.js")
        < text.index("js/editor.js")
    )
    assert f'data-autosave-url="/write/{note.pk}/autosave/"' in text and "js/editor.js" in text


def test_editor_page_offers_writing_together_with_the_users_name_and_colour(
    client, author, note, settings
):
    """With LIVE_EDITING on, the editor form names the note's socket, the user's display name
    (escaped: it is user input) and a colour of the palette that follows the user id; the
    header has the places of the live status and of who is here."""
    from collaboration.presence import LIVE_PALETTE

    settings.LIVE_EDITING = True
    author.author.name = 'Ada "<b>" Lovelace'
    author.author.save()
    client.force_login(author)
    text = client.get(f"/write/{note.pk}/").content.decode()
    colour = LIVE_PALETTE[author.pk % len(LIVE_PALETTE)]
    assert f'data-live-url="/live/notes/{note.pk}/"' in text
    assert 'data-live-name="Ada &quot;&lt;b&gt;&quot; Lovelace"' in text
    assert f'data-live-color="{colour}" data-live-user="{author.pk}"' in text
    assert 'class="editor-presence" aria-live="polite"' in text
    assert 'class="editor-live-banner" role="alert" hidden' in text


def test_editor_page_without_live_editing_has_none_of_it(client, author, note, settings):
    """With LIVE_EDITING off the page is today's: no socket named, no live status."""
    settings.LIVE_EDITING = False
    client.force_login(author)
    text = client.get(f"/write/{note.pk}/").content.decode()
    assert "data-live-" not in text and "editor-live" not in text and "editor-presence" not in text


def test_editor_save_and_publish(client, author, note):
    """Save then Publish through the form; the public page shows the text."""
    client.force_login(author)
    response = client.post(f"/write/{note.pk}/", editor_form(note, body="Hello $y$.", tags="a, b"))
    assert response.status_code == 302
    note.refresh_from_db()
    assert note.body == "Hello $y$." and note.version == 2
    response = client.post(f"/write/{note.pk}/", editor_form(note, action="publish"))
    note.refresh_from_db()
    assert response.status_code == 302 and note.status == Status.PUBLISHED
    client.logout()
    assert client.get(f"/notes/{note.slug}/").status_code == 200


@pytest.mark.django_db(transaction=True)
def test_editor_publish_commits_the_save_and_the_publish_at_once(client, author, note, monkeypatch):
    """Publishing a new text of a published note from the editor saves and publishes in one
    transaction: the new content generation is published once (one turnover of readers'
    cached pages, one lease wait), not once for the save and again for the publish."""
    from scidraft.site import generation

    note = services.note_publish(note_id=note.pk, user=author, base_version=note.version).note
    published = []
    original = generation.publish_generation
    monkeypatch.setattr(generation, "publish_generation", lambda: published.append(original()))
    client.force_login(author)
    response = client.post(
        f"/write/{note.pk}/", editor_form(note, body="New text.", action="publish")
    )
    note.refresh_from_db()
    assert response.status_code == 302 and note.status == Status.PUBLISHED
    assert note.body == "New text." and note.version == 4  # saved, then published again
    assert len(published) == 1


def test_editor_publish_locks_the_generation_row_last(client, author, note):
    """The site-wide content generation row is updated once, after every write to the note
    (the render included): other authors' saves wait on its lock only until this commit."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    note = services.note_publish(note_id=note.pk, user=author, base_version=note.version).note
    client.force_login(author)
    with CaptureQueriesContext(connection) as queries:
        client.post(f"/write/{note.pk}/", editor_form(note, body="Again $x$.", action="publish"))
    writes = [q["sql"] for q in queries if q["sql"].startswith(("UPDATE", "INSERT", "DELETE"))]
    bumps = [n for n, sql in enumerate(writes) if "contentgeneration" in sql]
    note_writes = [n for n, sql in enumerate(writes) if '"notes_note"' in sql.split(" SET")[0]]
    assert len(bumps) == 1 and len(note_writes) >= 2
    assert bumps[0] > max(note_writes)


def test_save_and_publish_answer_with_the_version_to_save_on(client, author, note):
    """The editor form's redirect carries the note's new version (X-Note-Version): an autosave
    on it is accepted without loading the editor page again."""
    client.force_login(author)
    response = client.post(f"/write/{note.pk}/", editor_form(note, body="One.", action="publish"))
    note.refresh_from_db()
    assert response.status_code == 302 and response["X-Note-Version"] == str(note.version)
    autosave = client.post(
        f"/write/{note.pk}/autosave/",
        {"body": "Two.", "base_version": int(response["X-Note-Version"])},
        content_type="application/json",
    )
    assert autosave.status_code == 200 and autosave.json()["status"] == "saved"


def test_editor_publish_refused_keeps_the_save(client, author, note):
    """Without the publish permission, Publish answers 403 and the text is still saved."""
    from django.contrib.auth.models import Permission

    author.groups.clear()  # an author's rights, less publish_note
    author.user_permissions.add(
        *Permission.objects.filter(codename__in=["add_note", "change_note", "view_note"])
    )
    client.force_login(author)
    response = client.post(f"/write/{note.pk}/", editor_form(note, body="Kept.", action="publish"))
    note.refresh_from_db()
    assert response.status_code == 403
    assert note.body == "Kept." and note.status == Status.DRAFT


def test_autosave_json(client, author, note):
    """Autosave answers the new version, then 409 with the current one when stale."""
    client.force_login(author)
    url = f"/write/{note.pk}/autosave/"
    payload = {"body": "typing…", "title": "Heat", "base_version": note.version}
    response = client.post(url, json.dumps(payload), content_type="application/json")
    assert response.status_code == 200
    assert response.json()["status"] == "saved" and response.json()["version"] == 2
    response = client.post(url, json.dumps(payload), content_type="application/json")
    assert response.status_code == 409
    assert response.json()["status"] == "conflict"
    assert response.json()["conflict"]["version"] == 2
    assert client.post(url, "not json", content_type="application/json").status_code == 400


def test_two_browsers_conflict_page_shows_both_versions(client, author, editor_user, note):
    """Two sessions load version 1; the second save is refused and both texts are shown."""
    from django.test import Client

    other = Client()
    other.force_login(editor_user)
    client.force_login(author)
    loaded = Note.objects.get(pk=note.pk)
    assert (
        other.post(f"/write/{note.pk}/", editor_form(loaded, body="THEIRS text")).status_code == 302
    )
    response = client.post(f"/write/{note.pk}/", editor_form(loaded, body="MINE <text>"))
    text = response.content.decode()
    assert response.status_code == 409
    assert "Someone else saved this note" in text
    assert "MINE &lt;text&gt;" in text and "THEIRS text" in text
    assert Note.objects.get(pk=note.pk).body == "THEIRS text"
    refused = note.revisions.get(kind=NoteRevision.Kind.CONFLICT)
    assert refused.body == "MINE <text>" and refused.created_by == author


def test_every_editor_response_is_no_store(client, author, note):
    """Editor pages, JSON and redirects are private, no-store (never in the page cache)."""
    responses = [client.get("/write/")]  # anonymous redirect
    client.force_login(author)
    responses += [
        client.get("/write/"),
        client.get(f"/write/{note.pk}/"),
        client.get(f"/write/{note.pk}/revisions/"),
        client.post(f"/write/{note.pk}/preview/", {"content": "x"}),
        client.post(
            f"/write/{note.pk}/autosave/",
            json.dumps({"body": "x", "base_version": note.version}),
            content_type="application/json",
        ),
        client.post("/write/new/", {"title": "n"}),
    ]
    for response in responses:
        assert "no-store" in response["Cache-Control"], response
        assert "private" in response["Cache-Control"] or "no-cache" in response["Cache-Control"]


def test_publishing_with_a_future_date_schedules_the_note(client, author, note):
    """A future date plus Publish is "scheduled": listed so, and not public yet."""
    client.force_login(author)
    future = (timezone.localtime() + dt.timedelta(days=3)).strftime("%Y-%m-%dT%H:%M")
    response = client.post(f"/write/{note.pk}/", editor_form(note, body="Later.", date=future))
    assert response.status_code == 302
    note.refresh_from_db()
    client.post(f"/write/{note.pk}/", editor_form(note, date=future, action="publish"))
    note.refresh_from_db()
    assert note.is_scheduled and not note.is_published
    text = client.get("/write/?status=scheduled").content.decode()
    assert "Heat equation" in text
    client.logout()
    assert client.get(f"/notes/{note.slug}/").status_code == 404


# --- The side panel, validation and publishing with problems ---------------------------------


def test_editor_page_has_every_side_panel_field_and_autocomplete_lists(client, author, note):
    """Slug, authors, institute, tags, flags, entry-set fields and default bibliographies are
    on the page, with datalists of the tags offered (this note's, escaped) and authors, and
    the stored preview."""
    note.tags.add(services.tag_get_or_create("Partial <differential>"))
    client.force_login(author)
    text = client.get(f"/write/{note.pk}/").content.decode()
    for name in (
        "slug", "date", "authors", "institute", "tags", "summary", "description", "show_title",
        "promotion", "weight", "keywords", "canonical_url", "disable_share", "search_hidden",
        "hidden_in_rss", "robots_noindex", "bibliographies", "entry_entry_title",
        "entry_entry_category", "entry_entry_aliases", "entry_entry_summary",
    ):  # fmt: skip
        assert f'name="{name}"' in text, name
    assert '<option value="Partial &lt;differential&gt;">' in text
    assert f'<option value="{author.author.handle}" label="Ada Lovelace">' in text
    assert 'data-completion="{&quot;environments&quot;: [' in text
    assert 'class="editor-preview note-body md-content" data-current="true"' in text
    assert "js/editor-preview.js" in text and "js/editor-fields.js" in text


def test_side_panel_save_writes_every_field(client, author, other_author, note):
    """One Save writes slug, ordered authors, tags (new ones created), flags, entry-set
    fields and default bibliographies, as one new version with a revision (the promotion
    an Author's page posts back unchanged)."""
    second = services.author_for_user(other_author)
    bibfile_import(name="bib/main.bib", raw="@book{knuth, title={The Art}, year=1968}")
    client.force_login(author)
    response = client.post(
        f"/write/{note.pk}/",
        editor_form(
            note,
            body="See \\cite{knuth}.\n\n{{< references >}}\n",
            slug="Heat, again",
            authors=f"{second.handle}, {author.author.handle}",
            institute="Fourier Lab",
            tags="PDE, Heat",
            description="About heat.",
            promotion="false",  # an Editor's to change: the page posts it back as shown
            search_hidden="on",
            keywords="heat",
            entry_entry_title="Heat equation",
            bibliographies="bib/main.bib",
        ),
    )
    assert response.status_code == 302
    saved = Note.objects.get(pk=note.pk)
    assert saved.slug == "heat-again" and saved.version == 2
    assert [link.author_id for link in saved.authorships.all()] == [second.pk, author.author.pk]
    assert sorted(saved.tags.values_list("name", flat=True)) == ["Heat", "PDE"]
    assert saved.institute == "Fourier Lab" and saved.description == "About heat."
    assert not saved.promotion and saved.search_hidden and not saved.hidden_in_rss
    assert saved.keywords == ["heat"] and saved.params == {"entryTitle": "Heat equation"}
    assert list(saved.bibliographies.values_list("name", flat=True)) == ["bib/main.bib"]
    # Rendered after the bibliography was attached: the citation resolves.
    assert not saved.render_warnings and '<a href="#ref-0-knuth">[1]</a>' in saved.rendered_html
    revision = saved.revisions.first()
    assert revision.metadata["authors"] == [second.handle, author.author.handle]
    assert revision.metadata["slug"] == "heat-again"


def test_duplicate_slug_is_refused_and_the_typed_text_kept(client, author, note):
    """A taken slug answers 400 with the error; nothing is saved, the form keeps the text."""
    services.note_create(user=author, title="Wave equation")
    client.force_login(author)
    response = client.post(
        f"/write/{note.pk}/", editor_form(note, body="Typed <text>", slug="wave-equation")
    )
    text = response.content.decode()
    assert response.status_code == 400
    assert "Another note already has the slug" in text
    assert "Typed &lt;text&gt;" in text and 'data-current="false"' in text
    assert Note.objects.get(pk=note.pk).version == note.version


def test_bad_date_is_refused(client, author, note):
    client.force_login(author)
    response = client.post(f"/write/{note.pk}/", editor_form(note, date="2026-02-31T10:00"))
    assert response.status_code == 400
    assert "Enter a valid date" in response.content.decode()
    assert Note.objects.get(pk=note.pk).version == note.version


PROBLEMS = (
    "Cited \\cite{ghost}.\n\n{{< references >}}\n\n"
    "See \\ref{nowhere}.\n\n$$x\\label{eq:a}$$\n\n$$y\\label{eq:a}$$\n\n$\\frac{1}{$\n"
)


def test_publishing_with_problems_asks_for_confirmation(client, author, cited_note):
    """Publish saves the text, then lists the blocking problems with a "Publish anyway"
    button instead of publishing; confirm=1 publishes."""
    client.force_login(author)
    response = client.post(
        f"/write/{cited_note.pk}/", editor_form(cited_note, body=PROBLEMS, action="publish")
    )
    text = response.content.decode()
    saved = Note.objects.get(pk=cited_note.pk)
    assert response.status_code == 200
    assert saved.body == PROBLEMS and saved.status == Status.DRAFT
    codes = {warning["code"] for warning in saved.render_warnings}
    assert {"cite-missing", "ref-unresolved", "duplicate-label"} <= codes
    assert {"math-error", "math-unclosed"} & codes
    assert "Publish anyway" in text and 'name="confirm" value="1"' in text
    assert "missing reference: ghost" in text and "line 1:" in text
    assert f'name="base_version" value="{saved.version}"' in text
    response = client.post(f"/write/{saved.pk}/", editor_form(saved, action="save", confirm="1"))
    assert response.status_code == 302
    assert Note.objects.get(pk=cited_note.pk).status == Status.PUBLISHED


def test_publishing_without_problems_needs_no_confirmation(client, author, cited_note):
    """A note whose only warnings are not blocking publishes at once."""
    client.force_login(author)
    body = "Fine \\cite{knuth}.\n\n{{< references >}}\n\n{{< no-such-shortcode >}}\n"
    response = client.post(
        f"/write/{cited_note.pk}/", editor_form(cited_note, body=body, action="publish")
    )
    saved = Note.objects.get(pk=cited_note.pk)
    assert response.status_code == 302 and saved.status == Status.PUBLISHED
    assert saved.render_warnings  # the unknown shortcode: listed in the panel, not blocking


def test_editor_page_lists_stored_problems_with_their_lines(client, author, note):
    """The problems panel starts with the stored render's warnings, line by line, escaped."""
    services.note_save(
        note_id=note.pk, user=author, base_version=note.version,
        fields={"body": "ok\n\n\\cite{<b>x}\n"},
    )  # fmt: skip
    client.force_login(author)
    text = client.get(f"/write/{note.pk}/").content.decode()
    assert 'class="editor-problem" type="button" data-line="3"' in text
    assert "&lt;b&gt;x" in text and "<b>x" not in text


def test_editor_continues_from_the_working_copy_of_a_published_note(client, author, note):
    """A published note's autosave leaves the public text alone; the editor opens with the
    working copy and says it is "published, with unpublished changes"; discarding goes back
    to the published text."""
    services.note_save(
        note_id=note.pk, user=author, base_version=note.version, fields={"body": "Public."}
    )
    published = services.note_publish(note_id=note.pk, user=author, base_version=2).note
    client.force_login(author)
    url = f"/write/{note.pk}/autosave/"
    payload = {"body": "Draft <edit>.", "title": note.title, "base_version": published.version}
    answer = client.post(url, json.dumps(payload), content_type="application/json").json()
    assert answer["status"] == "saved"
    assert Note.objects.get(pk=note.pk).body == "Public."
    assert "Public." in client.get(f"/notes/{note.slug}/").content.decode()
    text = client.get(f"/write/{note.pk}/").content.decode()
    assert "Draft &lt;edit&gt;." in text and "Published, with unpublished changes" in text
    assert "readers still see the published version" in text and "Publish changes" in text
    data = editor_form(Note.objects.get(pk=note.pk), body="Draft <edit>.", action="discard")
    assert client.post(f"/write/{note.pk}/", data).status_code == 302
    text = client.get(f"/write/{note.pk}/").content.decode()
    assert "Draft &lt;edit&gt;." not in text and "Published, with unpublished" not in text


def test_a_saved_body_uses_lf_line_ends(client, author, note):
    """Browsers post a textarea with CRLF; the stored body has LF, as autosave stores it."""
    client.force_login(author)
    response = client.post(f"/write/{note.pk}/", editor_form(note, body="One.\r\n\r\nTwo.\r\n"))
    assert response.status_code == 302
    assert Note.objects.get(pk=note.pk).body == "One.\n\nTwo.\n"


# --- The note's math macros, from the side panel ----------------------------------------------

MACRO_SOURCE = "Let $\\Ex[X]$ be the mean.\n"


def _json_preview(client, note, **data):
    response = client.post(
        f"/write/{note.pk}/preview/", {"content": MACRO_SOURCE, **data},
        HTTP_ACCEPT="application/json",
    )  # fmt: skip
    assert response.status_code == 200
    return response.json()


def test_the_preview_renders_with_the_macros_as_typed_before_a_save(client, author, note):
    """The side panel's macros go with each preview request: \\Ex is defined at once, and a
    definition KaTeX refuses is a problem of the preview, not an error page."""
    client.force_login(author)
    undefined = _json_preview(client, note)
    assert 'class="math-error"' in undefined["html"]
    typed = _json_preview(client, note, math_macros="\\newcommand{\\Ex}{\\mathbb{E}}")
    assert 'class="math-error"' not in typed["html"] and "mathbb" in typed["html"]
    refused = _json_preview(client, note, math_macros="\\newcommand{\\Ex}{\\frac{")
    assert refused["problems"] and 'class="math-error"' in refused["html"]
    assert Note.objects.get(pk=note.pk).math_macros == ""  # a preview saves nothing


def test_macros_saved_from_the_editor_render_the_note_and_bad_ones_are_refused(
    client, author, note
):
    """Saved with the form, the macros are the note's (its stored render uses them); a
    definition KaTeX refuses is reported on the field and nothing is saved."""
    client.force_login(author)
    note.body = MACRO_SOURCE
    note.save()
    macros = "\\newcommand{\\Ex}{\\mathbb{E}}"
    response = client.post(f"/write/{note.pk}/", editor_form(note, math_macros=macros))
    assert response.status_code == 302, response.context["form"].errors
    saved = Note.objects.get(pk=note.pk)
    assert saved.math_macros == macros and 'class="math-error"' not in saved.rendered_html
    page = client.get(f"/write/{note.pk}/").content.decode()
    assert 'name="math_macros"' in page and "\\newcommand{\\Ex}" in page
    bad = client.post(
        f"/write/{note.pk}/", editor_form(saved, math_macros="\\newcommand{\\Ex}{\\frac{")
    )
    assert bad.status_code == 400 and "errorlist" in bad.content.decode()
    assert Note.objects.get(pk=note.pk).math_macros == macros


def revisions_of(note) -> list[tuple[int, str, str]]:
    return list(note.revisions.order_by("number").values_list("number", "kind", "message"))


def test_one_publish_click_is_one_revision(client, author, note):
    """Publish saves the form, then publishes: one revision for the click (a save and a
    publish in the same second made "compare the newest two" show the same text)."""
    client.force_login(author)
    client.post(f"/write/{note.pk}/", editor_form(note, body="First.", action="publish"))
    note.refresh_from_db()
    assert [kind for _, kind, _ in revisions_of(note)] == ["save", "publish"]  # created, published
    client.post(f"/write/{note.pk}/", editor_form(note, body="Second.", action="publish"))
    note.refresh_from_db()
    numbers = revisions_of(note)
    assert numbers[-1] == (3, "publish", "Published the changes") and len(numbers) == 3
    assert note.revisions.get(number=3).body == "Second." == note.body


def test_one_click_submitting_for_review_is_one_revision(client, author, note, settings):
    """Under required review, Publish by an Author is one revision: the review request."""
    site = SiteSettings.objects.current()
    site.require_review = True
    site.save()
    client.force_login(author)
    response = client.post(f"/write/{note.pk}/", editor_form(note, body="Draft.", action="publish"))
    note.refresh_from_db()
    assert note.status == Status.REVIEW
    assert revisions_of(note)[1:] == [(2, "save", "Submitted for review")]
    # A first publication has no published version for readers to keep seeing.
    message = client.get(response.url).content.decode()
    assert "readers see the note once an Editor approves it" in message
    assert "readers see the published version" not in message


def test_the_header_counts_revisions_as_the_revision_list_does(client, author, note):
    """The editor's header names the newest revision's number, the one the revisions list
    shows (it showed the save lock's version, which a publish moves by more than one)."""
    client.force_login(author)
    for body in ("One.", "Two."):
        client.post(f"/write/{note.pk}/", editor_form(note, body=body, action="publish"))
        note.refresh_from_db()
    newest = note.revisions.order_by("-number").first().number
    assert note.version != newest
    page = client.get(f"/write/{note.pk}/").content.decode()
    assert f'revision <span class="editor-revision">{newest}</span>' in page
    listing = client.get(f"/write/{note.pk}/revisions/").content.decode()
    assert f'aria-label="Compare to revision {newest}"' in listing


def test_a_working_copy_cut_short_by_time_is_rendered_again_when_its_editor_opens(
    client, author, note, settings
):
    """A published note's working copy saved while time ran out is flagged; opening the
    editor renders it again, so its authors are not left with the render cut short."""
    note = services.note_publish(note_id=note.pk, user=author, base_version=note.version).note
    settings.RENDER_TIME_PERCENT = 1e-7
    note = services.note_save(
        note_id=note.pk, user=author, base_version=note.version, fields={"body": "**B** $x$"}
    ).note
    assert Note.objects.get(pk=note.pk).editor_copy.render_flags["incomplete"] is True
    settings.RENDER_TIME_PERCENT = 100
    client.force_login(author)
    assert client.get(f"/write/{note.pk}/").status_code == 200
    copy = Note.objects.get(pk=note.pk).editor_copy
    assert "incomplete" not in copy.render_flags and "katex" in copy.rendered_html
