"""The Django admin: every model has a page that loads for a superuser and is closed to others."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.contrib.auth.models import Group, User
from django.urls import reverse

from notes.models import Note
from scidraft.site.models import SiteSettings

# Models whose rows only their save paths write; the admin shows them but offers no "add".
READ_ONLY_ADD = {"notes.noterevision", "bibliography.bibentry", "site.sitesettings"}


def registered_models():
    return sorted(admin.site._registry, key=lambda model: model._meta.label_lower)


def admin_url(model, action: str, *args) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{action}", args=args)


@pytest.fixture
def superuser(db):
    return User.objects.create_superuser("root", "root@example.org", "correct horse battery")


@pytest.mark.parametrize("model", registered_models(), ids=lambda m: m._meta.label_lower)
def test_changelist_add_and_change_pages_load_for_a_superuser(
    client, superuser, demo_loaded, model
):
    """List, add and change pages of every registered model answer 200 (or 403 for "add"
    where rows are written by the application only)."""
    client.force_login(superuser)
    changelist = client.get(admin_url(model, "changelist"), follow=True)
    assert changelist.status_code == 200
    add = client.get(admin_url(model, "add"))
    expected_add = 403 if model._meta.label_lower in READ_ONLY_ADD else 200
    if model._meta.label_lower == "site.sitesettings" and not SiteSettings.objects.exists():
        expected_add = 200
    assert add.status_code == expected_add
    instance = model._default_manager.first()
    assert instance is not None, f"the demo content has no {model._meta.label}"
    change = client.get(admin_url(model, "change", instance.pk))
    assert change.status_code == 200


@pytest.mark.parametrize("model", registered_models(), ids=lambda m: m._meta.label_lower)
def test_admin_pages_send_anonymous_users_to_the_login_page(client, db, model):
    """No admin page answers an anonymous visitor with content."""
    response = client.get(admin_url(model, "changelist"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


def test_staff_without_permissions_is_refused(client, db):
    """A staff account with no permission sees no model pages (403)."""
    user = User.objects.create_user("staff", password="correct horse battery", is_staff=True)
    client.force_login(user)
    assert client.get(admin_url(Note, "changelist")).status_code == 403
    assert client.get(admin_url(SiteSettings, "changelist")).status_code == 403


def test_editor_manages_notes_but_not_site_settings(client, demo_loaded):
    """An Editor's group grants notes and environments, not site settings or users."""
    editor = User.objects.create_user("editor", password="correct horse battery", is_staff=True)
    editor.groups.add(Group.objects.get(name="Editor"))
    client.force_login(editor)
    assert client.get(admin_url(Note, "changelist")).status_code == 200
    note = Note.objects.first()
    assert client.get(admin_url(Note, "change", note.pk)).status_code == 200
    assert client.get(admin_url(SiteSettings, "changelist")).status_code == 403
    assert client.get(admin_url(User, "changelist")).status_code == 403


def test_note_body_uses_the_preview_widget_and_no_anonymous_preview_is_mounted(
    client, superuser, demo_loaded
):
    """The body field of a draft previews through the note's own endpoint; no anonymous
    Markdown preview or upload URL is served."""
    client.force_login(superuser)
    draft = Note.objects.create(slug="admin-draft", title="Draft", body="x", status="draft")
    response = client.get(admin_url(Note, "change", draft.pk))
    assert f'data-preview-url="/write/{draft.pk}/preview/"'.encode() in response.content
    client.logout()
    assert client.post("/markdownx/markdownify/", {"content": "# x"}).status_code == 404
    assert client.post("/markdownx/upload/").status_code == 404


def test_bibfile_parse_report_is_escaped_in_the_admin(client, superuser, db):
    """Keys and reasons from an uploaded file are shown as text, never as HTML."""
    from bibliography.services import bibfile_import

    result = bibfile_import(
        name="bib/x.bib", raw="@article{<img src=x onerror=alert(1)>, title={a}\n"
    )
    client.force_login(superuser)
    response = client.get(admin_url(type(result.bibfile), "change", result.bibfile.pk))
    assert b"<img src=x" not in response.content
    assert b"&lt;img src=x onerror=alert(1)&gt;" in response.content
