"""The notes admin follows the editor's rules on what it lists."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from notes import services
from tests.people import PASSWORD


@pytest.mark.django_db
def test_the_note_list_and_change_page_leave_out_notes_in_the_trash(client):
    """A note in the trash is edited by no one: the admin neither lists it nor opens it."""
    root = User.objects.create_superuser("root", "root@example.org", PASSWORD)
    kept = services.note_create(user=root, title="Kept note")
    binned = services.note_create(user=root, title="Binned note")
    services.note_delete(note_id=binned.pk, user=root)
    client.force_login(root)
    listing = client.get(reverse("admin:notes_note_changelist")).content.decode()
    assert "Kept note" in listing and "Binned note" not in listing
    assert client.get(reverse("admin:notes_note_change", args=[kept.pk])).status_code == 200
    # The admin redirects a missing object to its index with a message.
    answer = client.get(reverse("admin:notes_note_change", args=[binned.pk]))
    assert answer.status_code == 302
