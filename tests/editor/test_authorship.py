"""Confirming or declining a byline from the editor."""

from __future__ import annotations

import pytest

from notes import services


def _confirm_as_coauthor(client, author, other_author, note, target: str):
    """`other_author` added to the note's byline by `author`, then confirming it with `target`
    as `next`: (the answer, the co-author's Author)."""
    bert = services.author_for_user(other_author)
    services.note_save(
        note_id=note.pk, user=author, base_version=note.version,
        fields={"authors": [author.author.handle, bert.handle]},
    )  # fmt: skip
    client.force_login(other_author)
    response = client.post(f"/write/{note.pk}/authors/{bert.pk}/confirm/", {"next": target})
    return response, bert


@pytest.mark.parametrize(
    "target",
    ["//evil.example", "https://evil.example/write/", "/\\evil.example", "javascript:alert(1)"],
)
def test_confirming_a_byline_never_redirects_off_site(client, author, other_author, note, target):
    """A `next` naming another site (protocol-relative, absolute, with a backslash) or a
    javascript: URL is ignored: the confirmation is made and the dashboard follows."""
    from notes.models import AuthorConsent

    response, bert = _confirm_as_coauthor(client, author, other_author, note, target)
    assert response.status_code == 302 and response["Location"] == "/write/"
    consent = AuthorConsent.objects.get(note=note, author=bert)
    assert consent.state == AuthorConsent.State.CONFIRMED


def test_confirming_a_byline_goes_back_to_the_page_of_this_site_it_names(
    client, author, other_author, note
):
    """A same-site path as `next` (the editor page's own form sends one) is followed."""
    target = f"/write/{note.pk}/"
    response, _ = _confirm_as_coauthor(client, author, other_author, note, target)
    assert response.status_code == 302 and response["Location"] == target
