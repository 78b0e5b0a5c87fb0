"""Dashboards by role, in Chromium: an Editor sees every note and narrows
the list with the filters, in review included; an Author sees only their own; the public note
page shows Edit to a person who may edit it."""

from __future__ import annotations

import re

import pytest

from tests.browser.editing import signed_in
from tests.browser.worker import in_worker

pytestmark = pytest.mark.browser


def _site():
    """Ada (Author) with a draft and a published note, Bert (Author) with a note in review,
    Eve an Editor."""
    from notes import services
    from notes.models import Note
    from scidraft.site.models import SiteSettings
    from tests.people import user_in_group

    ada = user_in_group("ada", "Author")
    bert = user_in_group("bert", "Author")
    user_in_group("eve", "Editor")
    draft = services.note_create(user=ada, title="Ada's draft")
    services.note_save(
        note_id=draft.pk, user=ada, base_version=draft.version,
        fields={"body": "Broken \\cite{nowhere}.", "tags": ["Optics"]},
    )  # fmt: skip
    public = services.note_create(user=ada, title="Ada's paper")
    public = services.note_save(
        note_id=public.pk, user=ada, base_version=public.version, fields={"body": "Text."}
    ).note
    services.note_publish(note_id=public.pk, user=ada, base_version=public.version)
    settings = SiteSettings.objects.current()
    settings.require_review = True
    settings.save()
    waiting = services.note_create(user=bert, title="Bert's submission")
    waiting = services.note_save(
        note_id=waiting.pk, user=bert, base_version=waiting.version, fields={"body": "Text."}
    ).note
    services.note_publish(note_id=waiting.pk, user=bert, base_version=waiting.version)
    return Note.objects.get(pk=public.pk).slug


def _titles(page) -> set[str]:
    return {
        text.split(" · ")[0].strip()
        for text in page.locator(".editor-note-table tbody td:first-child").all_inner_texts()
    }


def test_an_editor_sees_every_note_and_filters_them(
    browser, transactional_db, live_server, screenshots
):
    """Eve's dashboard lists every author's notes; Status "In review" keeps Bert's submission,
    "Has problems" Ada's broken draft; Only mine empties the list."""
    in_worker(_site)
    page = signed_in(browser, live_server.url, "eve", viewport={"width": 1280, "height": 900})
    page.goto("/write/?scope=all")
    assert _titles(page) >= {"Ada's draft", "Ada's paper", "Bert's submission"}
    page.screenshot(path=str(screenshots / "editor-dashboard-editor.png"), full_page=True)
    page.get_by_label("Status").select_option("review")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url(re.compile(r"status=review"))
    assert _titles(page) == {"Bert's submission"}
    page.get_by_label("Status").select_option("")
    page.get_by_label("Has problems").check()
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url(re.compile(r"problems=1"))
    assert _titles(page) == {"Ada's draft"}
    page.goto("/write/")
    page.get_by_role("link", name="Only mine").click()
    assert _titles(page) == set()
    page.context.close()


def test_an_author_sees_only_their_notes_and_an_edit_link_on_their_page(
    browser, transactional_db, live_server
):
    """Ada's dashboard lists her two notes, not Bert's; her published note's public page shows
    Edit to her, which opens the editor; Bert sees no Edit link there."""
    slug = in_worker(_site)
    page = signed_in(browser, live_server.url, "ada")
    assert _titles(page) == {"Ada's draft", "Ada's paper"}
    page.goto(f"/notes/{slug}/")
    page.get_by_role("link", name="Edit", exact=True).click()
    page.wait_for_url(re.compile(r"/write/\d+/$"))
    page.context.close()
    page = signed_in(browser, live_server.url, "bert")
    page.goto(f"/notes/{slug}/")
    assert page.get_by_role("link", name="Edit", exact=True).count() == 0
    page.context.close()
