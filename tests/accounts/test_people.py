"""People management (Admins only, /write/people/): invitations by email with a one-time link,
roles, deactivation; and the invitation page in accounts (/accounts/invite/<uid>/<token>/)."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group, User
from django.contrib.auth.tokens import default_token_generator
from django.core import mail
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from accounts import services
from notes import services as note_services
from notes.models import Author, Note, Status
from scidraft.site.models import SiteSettings

from .conftest import PASSWORD, login

NEW_PASSWORD = "a long and unusual passphrase 42"
XSS = '<script>alert("x")</script>'


@pytest.fixture
def admin(db):
    return User.objects.create_superuser("root", "root@example.org", PASSWORD)


@pytest.fixture
def writer(db):
    user = User.objects.create_user("bert", "bert@example.org", PASSWORD)
    user.groups.add(Group.objects.get(name="Author"))
    return user


def _invite(client, admin, **fields):
    client.force_login(admin)
    data = {"name": "Grace Hopper", "email": "grace@example.org", "role": "author", **fields}
    return client.post(reverse("editor:people_invite"), data)


def _link(message) -> str:
    match = re.search(r"https?://\S+/accounts/invite/\S+/", message.body)
    assert match, message.body
    return match.group(0)


def _accept(client, link: str, password: str = NEW_PASSWORD):
    """Open the link (the token moves to the session), then choose the password."""
    path = link.split("://", 1)[1].split("/", 1)[1]
    first = client.get("/" + path)
    if first.status_code != 302:
        return first
    return client.post(first["Location"], {"new_password1": password, "new_password2": password})


def test_invite_creates_a_user_and_profile_and_mails_a_working_link(client, admin):
    """The invitee gets one email whose link lets them choose a password; they are then
    logged in, and can log in again with that password."""
    response = _invite(client, admin)
    assert response.status_code == 302 and response["Location"] == reverse("editor:people")
    user = User.objects.get(email="grace@example.org")
    assert user.username == "grace" and user.is_active and not user.has_usable_password()
    assert services.role_of(user) == "author"
    assert list(user.groups.values_list("name", flat=True)) == ["Author"]
    assert user.author.name == "Grace Hopper" and user.author.email == "grace@example.org"

    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["grace@example.org"]
    assert "grace" in message.body  # the user name to log in with
    link = _link(message)
    assert link.startswith("http://testserver/accounts/invite/")

    visitor = client.__class__()
    done = _accept(visitor, link)
    assert done.status_code == 302 and done["Location"] == reverse("editor:dashboard")
    user.refresh_from_db()
    assert user.check_password(NEW_PASSWORD)
    assert visitor.get(reverse("editor:dashboard")).status_code == 200  # logged in
    assert login(client.__class__(), "grace", NEW_PASSWORD).status_code == 302


def test_an_invitation_link_works_once(client, admin):
    """A used link is refused: the page says it is not valid and sets nothing."""
    _invite(client, admin)
    link = _link(mail.outbox[0])
    _accept(client.__class__(), link)
    again = _accept(client.__class__(), link, password="another passphrase 99")
    assert again.status_code == 200
    assert "not valid" in again.content.decode()
    assert User.objects.get(username="grace").check_password(NEW_PASSWORD)


def test_invalid_tokens_are_refused(client, admin):
    """A made-up token, or a password-reset token, does not open the invitation page."""
    _invite(client, admin)
    user = User.objects.get(username="grace")
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    for token in ("abc-123", default_token_generator.make_token(user)):
        response = client.__class__().get(f"/accounts/invite/{uid}/{token}/", follow=True)
        assert response.status_code == 200
        assert "not valid" in response.content.decode()
    assert not User.objects.get(pk=user.pk).has_usable_password()


def test_a_deactivated_invitee_cannot_use_their_link(client, admin):
    """Deactivating someone voids the invitation already mailed to them."""
    _invite(client, admin)
    link = _link(mail.outbox[0])
    user = User.objects.get(username="grace")
    services.user_deactivate(user_id=user.pk, by=admin)
    response = _accept(client.__class__(), link)
    assert "not valid" in response.content.decode()
    assert not User.objects.get(pk=user.pk).has_usable_password()


def test_the_link_uses_the_sites_configured_address(client, admin):
    site = SiteSettings.objects.current()
    site.base_url = "https://notes.example.net/blog/"
    site.save()
    _invite(client, admin)
    assert _link(mail.outbox[0]).startswith("https://notes.example.net/accounts/invite/")


def test_invite_as_editor_grants_the_editor_role(client, admin):
    _invite(client, admin, role="editor")
    user = User.objects.get(username="grace")
    assert services.role_of(user) == "editor" and user.is_staff
    assert user.has_perm("notes.review_note")


def test_invite_can_claim_an_imported_author_profile(client, admin):
    """An author profile without a user (from an import) becomes the invitee's."""
    profile = Author.objects.create(name="G. Hopper", handle="ghopper")
    _invite(client, admin, author=profile.pk)
    profile.refresh_from_db()
    assert profile.user.username == "grace" and profile.email == "grace@example.org"
    assert Author.objects.count() == 1


def test_invite_refuses_an_email_already_in_use(client, admin, alice):
    """The form says why; no second account is made and no mail is sent."""
    response = _invite(client, admin, email="ALICE@example.org")
    assert response.status_code == 400
    assert "already exists" in response.content.decode()
    assert User.objects.filter(email__iexact="alice@example.org").count() == 1
    assert mail.outbox == []


def test_a_mail_failure_adds_nobody(client, admin, monkeypatch):
    """If the invitation cannot be sent, the user and profile are not created either."""

    def refuse(*args, **kwargs):
        raise ConnectionRefusedError("mail server down")

    monkeypatch.setattr(services, "send_mail", refuse)
    response = _invite(client, admin)
    assert response.status_code == 400
    assert "could not be sent" in response.content.decode()
    assert not User.objects.filter(email="grace@example.org").exists()
    assert not Author.objects.filter(name="Grace Hopper").exists()


def test_resend_mails_a_new_link_to_a_pending_invitee(client, admin):
    _invite(client, admin)
    user = User.objects.get(username="grace")
    client.post(reverse("editor:people_change", args=[user.pk]), {"action": "resend"})
    assert len(mail.outbox) == 2
    assert _accept(client.__class__(), _link(mail.outbox[1])).status_code == 302


def test_deactivated_users_cannot_log_in_and_their_notes_stay(client, admin, writer):
    """Deactivate: the password no longer logs in, an open session ends, notes remain
    published; reactivating lets them back in."""
    note = note_services.note_create(user=writer, title="Kept note")
    Note.objects.filter(pk=note.pk).update(status=Status.PUBLISHED, body="Text.", has_body=True)
    session = client.__class__()
    session.force_login(writer)
    client.force_login(admin)
    response = client.post(
        reverse("editor:people_change", args=[writer.pk]), {"action": "deactivate"}
    )
    assert response.status_code == 302
    writer.refresh_from_db()
    assert not writer.is_active
    assert login(client.__class__(), "bert", PASSWORD).status_code == 200  # form re-shown
    assert session.get(reverse("editor:dashboard")).status_code == 302  # session ended
    assert Note.objects.filter(pk=note.pk, status=Status.PUBLISHED).exists()
    assert client.__class__().get(f"/notes/{note.slug}/").status_code == 200

    client.post(reverse("editor:people_change", args=[writer.pk]), {"action": "reactivate"})
    assert login(client.__class__(), "bert", PASSWORD).status_code == 302


def test_an_admin_cannot_deactivate_themselves_or_change_their_own_role(client, admin):
    client.force_login(admin)
    url = reverse("editor:people_change", args=[admin.pk])
    response = client.post(url, {"action": "deactivate"}, follow=True)
    assert "You cannot deactivate yourself" in response.content.decode()
    response = client.post(url, {"action": "role", "role": "author"}, follow=True)
    assert "cannot change your own role" in response.content.decode()
    admin.refresh_from_db()
    assert admin.is_active and admin.is_superuser


def test_role_changes(client, admin, writer):
    """Author → Editor → Admin → Author, each with the matching groups and flags."""
    client.force_login(admin)
    url = reverse("editor:people_change", args=[writer.pk])
    expected = {
        "editor": (["Editor"], True, False),
        "admin": ([], True, True),
        "author": (["Author"], False, False),
    }
    for role, (groups, staff, superuser) in expected.items():
        assert client.post(url, {"action": "role", "role": role}).status_code == 302
        user = User.objects.get(pk=writer.pk)
        assert services.role_of(user) == role
        assert list(user.groups.values_list("name", flat=True)) == groups
        assert (user.is_staff, user.is_superuser) == (staff, superuser)
    response = client.post(url, {"action": "role", "role": "overlord"}, follow=True)
    assert "Choose a role" in response.content.decode()


def test_unknown_actions_are_bad_requests(client, admin, writer):
    client.force_login(admin)
    response = client.post(reverse("editor:people_change", args=[writer.pk]), {"action": "x"})
    assert response.status_code == 400


def test_people_pages_are_for_admins_only(client, writer):
    """Editors and Authors get 403 on every people URL; the services refuse them too."""
    editor = User.objects.create_user("eve", "eve@example.org", PASSWORD)
    editor.groups.add(Group.objects.get(name="Editor"))
    for user in (writer, editor):
        client.force_login(user)
        assert client.get(reverse("editor:people")).status_code == 403
        assert client.post(reverse("editor:people_invite"), {}).status_code == 403
        change = reverse("editor:people_change", args=[writer.pk])
        assert client.post(change, {"action": "deactivate"}).status_code == 403
        with pytest.raises(PermissionDenied):
            services.user_deactivate(user_id=writer.pk, by=user)
    assert User.objects.get(pk=writer.pk).is_active


def test_names_on_the_people_page_are_escaped(client, admin, writer):
    """User and profile names are shown as text, never as HTML."""
    writer.first_name = XSS
    writer.save()
    Author.objects.create(user=writer, name=f"<img src=x onerror=alert(1)>{XSS}", handle="bert")
    client.force_login(admin)
    text = client.get(reverse("editor:people")).content.decode()
    assert "<script>" not in text and "<img src=x" not in text
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in text
    assert "&lt;img src=x onerror=alert(1)&gt;" in text


def test_people_page_lists_role_state_and_profile(client, admin, writer):
    """Each user's role, whether active or invited, and a link to their author profile."""
    profile = Author.objects.create(user=writer, name="Bert Writer", handle="bert")
    _invite(client, admin, role="editor")
    text = client.get(reverse("editor:people")).content.decode()
    assert "Bert Writer" in text and reverse("admin:notes_author_change", args=[profile.pk]) in text
    assert "Invited (no password yet)" in text
    assert re.search(r"grace.*?editor-people-role\">Editor<", text, re.S)
    assert re.search(r"bert.*?editor-people-role\">Author<", text, re.S)
