"""The Django admin's body field is a textarea with a preview: a note's change page previews
through /write/<id>/preview/, add pages and standalone pages through an admin-only endpoint,
by a static script of ours (no inline script, for the site's Content Security Policy)."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.templatetags.static import static
from django.urls import reverse

from notes import services
from notes.admin import AdminNotePreviewWidget
from notes.models import Page
from tests.people import PASSWORD

ADMIN_PREVIEW = "/admin/notes/note/preview/"


@pytest.fixture
def superuser(db):
    return User.objects.create_superuser("root", "root@example.org", PASSWORD)


@pytest.fixture
def note(superuser):
    return services.note_create(user=superuser, title="Admin note")


def _attr(html: str, name: str) -> str:
    marker = f'{name}="'
    start = html.index(marker) + len(marker)
    return html[start : html.index('"', start)]


def _urls_path(html: str) -> str:
    return _attr(html, "data-preview-url")


def test_change_page_previews_through_the_notes_own_endpoint(client, superuser, note):
    """The change page renders and its widget posts to the note's editor preview URL."""
    client.force_login(superuser)
    response = client.get(reverse("admin:notes_note_change", args=[note.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert _urls_path(html) == reverse("editor:preview", args=[note.pk])
    assert _attr(html, "data-upload-url") == f"/write/{note.pk}/images/"
    assert int(_attr(html, "data-preview-delay")) == AdminNotePreviewWidget.PREVIEW_DELAY_MS
    assert 'class="admin-preview" id="id_body_preview"' in html
    assert 'id="id_body_upload_status"' in html
    assert f'src="{static("js/admin-preview.js")}"' in html


def test_the_admin_page_runs_no_inline_script(client, superuser, note):
    """Every script on the change page is a static file (the CSP allows no inline script),
    and the stylesheets the preview needs are linked."""
    client.force_login(superuser)
    html = client.get(reverse("admin:notes_note_change", args=[note.pk])).content.decode()
    scripts = re.findall(r"<script\b([^>]*)>", html)
    assert scripts and all("src=" in attributes for attributes in scripts)
    assert "markdownx" not in html
    for sheet in ("vendor/katex/katex.min.css", "css/admin-preview.css"):
        assert static(sheet) in html


def test_the_admin_script_speaks_both_endpoints():
    """admin-preview.js posts `content` to the preview URL and the file as `image` to the upload
    URL, with the CSRF token, and reads `image_code` back (what the endpoints answer)."""
    script = (settings.BASE_DIR / "static" / "js" / "admin-preview.js").read_text()
    assert 'getAttribute("data-preview-url")' in script
    assert 'getAttribute("data-upload-url")' in script
    assert 'form.append("content", text)' in script
    assert 'form.append("image", file)' in script
    assert '"X-CSRFToken": csrfToken()' in script
    assert "data.image_code" in script
    assert "<script" not in script and "eval(" not in script


def test_the_notes_endpoint_answers_the_admin_with_the_published_renderer(client, superuser, note):
    client.force_login(superuser)
    response = client.post(reverse("editor:preview", args=[note.pk]), {"content": "$x^2$"})
    assert response.status_code == 200 and 'class="katex"' in response.content.decode()


def test_add_page_previews_through_the_admin_only_endpoint(client, superuser):
    """Before a note has an id, the widget uses the admin's own preview endpoint."""
    client.force_login(superuser)
    response = client.get(reverse("admin:notes_note_add"))
    assert response.status_code == 200
    assert (
        _urls_path(response.content.decode())
        == ADMIN_PREVIEW
        == reverse("admin:notes_note_preview")
    )


def test_page_admin_uses_the_admin_only_endpoint(client, superuser):
    page = Page.objects.create(slug="about", title="About", body="Hi")
    client.force_login(superuser)
    response = client.get(reverse("admin:notes_page_change", args=[page.pk]))
    assert response.status_code == 200
    assert _urls_path(response.content.decode()) == ADMIN_PREVIEW


def test_admin_preview_renders_sanitised_html_with_problems(client, superuser):
    """The endpoint is the published renderer: math typeset, scripts removed, problems listed
    (escaped)."""
    client.force_login(superuser)
    source = "$\\alpha$ <script>alert(1)</script> \\cite{<b>nokey</b>}"
    response = client.post(ADMIN_PREVIEW, {"content": source})
    assert response.status_code == 200
    html = response.content.decode()
    assert 'class="katex"' in html
    assert "<script>alert(1)</script>" not in html and "<b>nokey</b>" not in html
    assert 'class="editor-problems"' in html
    assert "no-store" in response["Cache-Control"]


def test_admin_preview_is_closed_to_everyone_else(client, db):
    """Anonymous: sent to the admin login. Staff without note rights: 403. GET: 405."""
    response = client.post(ADMIN_PREVIEW, {"content": "x"})
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
    staff = User.objects.create_user("staff", password=PASSWORD, is_staff=True)
    client.force_login(staff)
    assert client.post(ADMIN_PREVIEW, {"content": "x"}).status_code == 403
    author = User.objects.create_user("ada", password=PASSWORD)
    author.groups.add(Group.objects.get(name="Author"))
    client.force_login(author)  # not staff: the admin itself refuses
    assert client.post(ADMIN_PREVIEW, {"content": "x"}).status_code == 302
    editor = User.objects.create_user("eve", password=PASSWORD, is_staff=True)
    editor.groups.add(Group.objects.get(name="Editor"))
    client.force_login(editor)
    assert client.get(ADMIN_PREVIEW).status_code == 405
    assert client.post(ADMIN_PREVIEW, {"content": "x"}).status_code == 200


def test_saving_a_note_in_the_admin_still_works(client, superuser, note):
    """The swapped widget keeps the field optional and the form saving."""
    client.force_login(superuser)
    url = reverse("admin:notes_note_change", args=[note.pk])
    form = client.get(url).context["adminform"].form
    data = {
        name: value
        for name, value in form.initial.items()
        if value is not None and name not in {"tags", "bibliographies"}
    }
    data.update(
        {
            "body": "Saved from the admin $y$.",
            "date_0": note.date.strftime("%Y-%m-%d"),
            "date_1": note.date.strftime("%H:%M:%S"),
            "keywords": "[]",
            "params": "{}",
            "share_buttons": "",
            "show_title": "unknown",
            "authorships-TOTAL_FORMS": "0",
            "authorships-INITIAL_FORMS": "0",
            "bibliography_links-TOTAL_FORMS": "0",
            "bibliography_links-INITIAL_FORMS": "0",
        }
    )
    data.pop("date", None)
    response = client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    note.refresh_from_db()
    assert note.body == "Saved from the admin $y$."
