"""Site settings in the Django admin (Admins manage identity, menus, feed options, entry sets,
styles): every setting is on the form, and saving any of them changes what readers see at once
(the content generation moves)."""

from __future__ import annotations

import pytest
from django import forms
from django.contrib import admin
from django.contrib.auth.models import Group, User
from django.urls import reverse

from scidraft.site.models import ContentGeneration, EntrySet, MenuItem, SiteSettings


@pytest.fixture
def superuser(db):
    return User.objects.create_superuser("root", "root@example.org", "correct horse battery")


def _post_data(form) -> dict:
    """The form's current values as a browser would post them (unticked boxes left out)."""
    data = {}
    for name, field in form.fields.items():
        value = form[name].value()
        if isinstance(field.widget, forms.CheckboxInput):
            if value:
                data[name] = "on"
            continue
        data[name] = "" if value is None else value  # value() is already prepared
    return data


def test_every_setting_is_on_the_admin_form():
    """Identity, feed, page, feed-format, style and workflow settings: none is missing."""
    model_admin = admin.site._registry[SiteSettings]
    shown = {name for _, options in model_admin.fieldsets for name in options["fields"]}
    editable = {
        field.name
        for field in SiteSettings._meta.get_fields()
        if getattr(field, "editable", False) and not field.auto_created
    } - {"updated_at"}
    assert editable <= shown, f"missing from the admin: {sorted(editable - shown)}"
    assert {"citation_style", "require_review", "rss_limit", "show_full_text_in_rss"} <= shown


def test_saving_settings_in_the_admin_applies_them_and_bumps_the_generation(client, superuser):
    """Require review and the default citation style change through the admin."""
    client.force_login(superuser)
    current = SiteSettings.objects.current()
    url = reverse("admin:site_sitesettings_change", args=[current.pk])
    form = client.get(url).context["adminform"].form
    data = _post_data(form)
    data.update({"require_review": "on", "citation_style": "alpha", "rss_limit": "20"})
    before = ContentGeneration.objects.value()
    response = client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    saved = SiteSettings.objects.current()
    assert saved.require_review and saved.citation_style == "alpha" and saved.rss_limit == 20
    assert ContentGeneration.objects.value() > before


def test_the_settings_list_goes_straight_to_the_one_row(client, superuser):
    client.force_login(superuser)
    response = client.get(reverse("admin:site_sitesettings_changelist"))
    assert response.status_code == 302
    assert response["Location"] == reverse("admin:site_sitesettings_change", args=[1])
    assert client.get(response["Location"]).status_code == 200


def test_menu_items_and_entry_sets_are_added_in_the_admin(client, superuser):
    """Their add forms render and save, and each save bumps the generation."""
    client.force_login(superuser)
    menu_add = reverse("admin:site_menuitem_add")
    assert client.get(menu_add).status_code == 200
    before = ContentGeneration.objects.value()
    response = client.post(
        menu_add,
        {
            "menu": "main", "identifier": "about", "name": "About", "url": "/about/",
            "weight": "1", "note": "",
            "children-TOTAL_FORMS": "0", "children-INITIAL_FORMS": "0",
        },
    )  # fmt: skip
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert MenuItem.objects.filter(identifier="about").exists()
    assert ContentGeneration.objects.value() > before

    entry_add = reverse("admin:site_entryset_add")
    assert client.get(entry_add).status_code == 200
    before = ContentGeneration.objects.value()
    response = client.post(
        entry_add,
        {
            "key": "math", "title_field": "mathTitle", "category_field": "mathCategory",
            "aliases_field": "mathAliases", "summary_field": "mathSummary", "tag": "",
            "count_label": "Results",
        },
    )  # fmt: skip
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert EntrySet.objects.filter(key="math").exists()
    assert ContentGeneration.objects.value() > before
    change = reverse("admin:site_entryset_change", args=[EntrySet.objects.get(key="math").pk])
    assert client.get(change).status_code == 200


def test_editors_cannot_change_site_settings(client, db):
    editor = User.objects.create_user("eve", password="correct horse battery", is_staff=True)
    editor.groups.add(Group.objects.get(name="Editor"))
    client.force_login(editor)
    url = reverse("admin:site_sitesettings_change", args=[SiteSettings.objects.current().pk])
    assert client.get(url).status_code == 403
    assert client.post(url, {"require_review": "on"}).status_code == 403
    assert not SiteSettings.objects.current().require_review
