"""Password change and reset: policy, sessions ended, the mailed link, no enumeration."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from scidraft.site.models import SiteSettings

from .conftest import PASSWORD, login

NEW = "a much longer new passphrase 42"
WEAK = ["password", "12345678", "short", "alice@example.org", "987654321"]


def change(client, old, new1, new2=None):
    return client.post(
        "/accounts/password/change/",
        {"old_password": old, "new_password1": new1, "new_password2": new2 or new1},
    )


@pytest.mark.parametrize("weak", WEAK)
def test_weak_password_is_refused_on_change(client, alice, weak):
    """Django's validators refuse common, short, numeric and username-like passwords."""
    client.force_login(alice)
    response = change(client, PASSWORD, weak)
    assert response.status_code == 200
    assert 'class="errorlist' in response.content.decode()
    alice.refresh_from_db()
    assert alice.check_password(PASSWORD)


def test_wrong_old_password_is_refused(client, alice):
    """The old password must be given correctly."""
    client.force_login(alice)
    response = change(client, "not it", NEW)
    assert "Your old password was entered incorrectly" in response.content.decode()
    alice.refresh_from_db()
    assert alice.check_password(PASSWORD)


def test_password_change_logs_out_other_sessions_and_keeps_this_one(alice):
    """After a change, another browser of the same user is logged out; this one stays in."""
    changing, other = Client(), Client()
    assert login(changing, "alice", PASSWORD).status_code == 302
    assert login(other, "alice", PASSWORD, address="198.51.100.7").status_code == 302
    response = change(changing, PASSWORD, NEW)
    assert response.status_code == 302
    assert response["Location"] == "/accounts/password/change/done/"
    assert changing.get("/accounts/password/change/done/").status_code == 200
    assert changing.get("/accounts/password/change/").status_code == 200  # still logged in
    locked_out = other.get("/accounts/password/change/")
    assert locked_out.status_code == 302
    assert locked_out["Location"].startswith("/accounts/login/")
    assert login(Client(), "alice", PASSWORD).status_code == 200  # old password refused
    assert login(Client(), "alice", NEW).status_code == 302


def _link(mail) -> str:
    match = re.search(r"https?://\S+/accounts/reset/\S+/\S+/", mail.body)
    assert match, mail.body
    return match.group(0)


def test_reset_email_is_sent_with_a_working_link(client, alice, mailoutbox):
    """The reset mail (locmem backend) carries a link that sets a new password, once."""
    other = Client()  # a session that must end when the password is reset
    other.force_login(alice)  # (before the request: a login invalidates earlier reset links)

    response = client.post("/accounts/password/reset/", {"email": "alice@example.org"})
    assert response.status_code == 302
    assert response["Location"] == "/accounts/password/reset/sent/"
    assert len(mailoutbox) == 1
    mail = mailoutbox[0]
    assert mail.to == ["alice@example.org"]
    site_title = SiteSettings.objects.current().title
    assert mail.subject == f"Password reset on {site_title}"
    assert '"alice"' in mail.body
    link = _link(mail)
    assert link.startswith("http://testserver/accounts/reset/")

    form = client.get(link, follow=True)
    assert form.status_code == 200
    assert form.redirect_chain[-1][0].endswith("/set-password/")
    assert 'name="new_password1"' in form.content.decode()
    set_url = form.redirect_chain[-1][0]
    done = client.post(set_url, {"new_password1": NEW, "new_password2": NEW})
    assert done.status_code == 302
    assert done["Location"] == "/accounts/password/reset/complete/"
    alice.refresh_from_db()
    assert alice.check_password(NEW)
    assert other.get("/accounts/password/change/").status_code == 302  # logged out

    reused = Client().get(link, follow=True)
    assert "This link is not valid" in reused.content.decode()


def test_reset_link_uses_the_sites_configured_address(client, alice, mailoutbox):
    """With a base URL in the site settings, the link uses it, not the request's Host."""
    site = SiteSettings.objects.current()
    site.base_url = "https://notes.example.org/"
    site.save()
    client.post("/accounts/password/reset/", {"email": "alice@example.org"})
    assert _link(mailoutbox[0]).startswith("https://notes.example.org/accounts/reset/")


@pytest.mark.parametrize("weak", WEAK)
def test_weak_password_is_refused_on_reset(client, alice, mailoutbox, weak):
    """The set-password form applies the same validators."""
    client.post("/accounts/password/reset/", {"email": "alice@example.org"})
    form = client.get(_link(mailoutbox[0]), follow=True)
    set_url = form.redirect_chain[-1][0]
    response = client.post(set_url, {"new_password1": weak, "new_password2": weak})
    assert response.status_code == 200
    assert 'class="errorlist' in response.content.decode()
    alice.refresh_from_db()
    assert alice.check_password(PASSWORD)


def test_reset_form_does_not_reveal_whether_an_address_has_an_account(alice, mailoutbox):
    """Known and unknown addresses get byte-identical responses; only the known one is mailed."""
    responses = []
    for email in ["alice@example.org", "nobody@example.org"]:
        client = Client()
        posted = client.post("/accounts/password/reset/", {"email": email})
        page = client.get(posted["Location"])
        responses.append((posted.status_code, posted["Location"], page.status_code, page.content))
    assert responses[0] == responses[1]
    assert [mail.to for mail in mailoutbox] == [["alice@example.org"]]


def test_reset_for_an_unusable_or_inactive_account_sends_nothing(alice, mailoutbox):
    """An inactive account gets no mail, and the same "sent" page."""
    alice.is_active = False
    alice.save()
    response = Client().post("/accounts/password/reset/", {"email": "alice@example.org"})
    assert response["Location"] == "/accounts/password/reset/sent/"
    assert mailoutbox == []
