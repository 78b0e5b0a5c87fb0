"""No user enumeration through password reset: whatever the address, the asker sees the same
thing (status, redirect, page), the rate limits answer alike, a failing mail server changes
nothing they can see, and a reset link says nothing about which accounts exist. Only whether
a mail goes out differs, and only the mailbox's owner sees that."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.contrib.auth.tokens import default_token_generator
from django.core.mail.backends.base import BaseEmailBackend
from django.test import Client
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

RESET = "/accounts/password/reset/"
KNOWN = "alice@example.org"
_TOKEN = re.compile(rb'name="csrfmiddlewaretoken" value="[^"]*"')
UNKNOWN = "nobody@example.org"


class BrokenBackend(BaseEmailBackend):
    """A mail server that is down."""

    def send_messages(self, email_messages):
        raise ConnectionRefusedError("mail server down")


def ask(email: str, address: str = "203.0.113.5") -> tuple:
    """What the asker sees: the POST's status and redirect, then the page it leads to (the
    address they typed, which a re-shown form echoes, and its per-response masked CSRF token
    left out)."""
    client = Client()
    posted = client.post(RESET, {"email": email}, REMOTE_ADDR=address)
    location = posted.get("Location", "")
    page = client.get(location) if location else posted
    content = _TOKEN.sub(b"TOKEN", page.content.replace(email.encode(), b"EMAIL"))
    return posted.status_code, location, page.status_code, content


@pytest.fixture
def accounts(alice):
    """Accounts a reset may be asked for: active, inactive, without a usable password."""
    inactive = User.objects.create_user("ina", "ina@example.org", "a long passphrase 1")
    inactive.is_active = False
    inactive.save()
    User.objects.create_user("unusable", "unusable@example.org")  # no password: unusable
    return {"known": KNOWN, "inactive": "ina@example.org", "unusable": "unusable@example.org"}


def test_every_kind_of_address_gets_the_same_answer(accounts, mailoutbox):
    """Known, unknown, inactive, unusable-password and a known address in other letter case:
    byte-identical answers; mail goes only to the active accounts' own addresses."""
    emails = [KNOWN, KNOWN.upper(), UNKNOWN, accounts["inactive"], accounts["unusable"]]
    answers = {email: ask(email) for email in emails}
    assert len(set(answers.values())) == 1, {email: a[:3] for email, a in answers.items()}
    assert answers[UNKNOWN][:2] == (302, "/accounts/password/reset/sent/")
    assert sorted(mail.to[0] for mail in mailoutbox) == [KNOWN, KNOWN]


def test_the_per_email_limit_is_silent_for_known_and_unknown_addresses(alice, mailoutbox):
    """Past the per-email limit (asked from many networks) nothing changes for the asker, for
    an address with an account and one without; the known one just stops getting mail."""
    for email in (KNOWN, UNKNOWN):
        answers = {ask(email, address=f"198.51.100.{number}") for number in range(8)}
        assert len(answers) == 1, email
        assert next(iter(answers))[:2] == (302, "/accounts/password/reset/sent/")
    assert 0 < len(mailoutbox) < 8


def test_the_per_network_limit_answers_alike_for_known_and_unknown(alice, mailoutbox):
    """Once a network has asked too often, its next request is refused (429, a message) the
    same way whichever address it names."""
    for _ in range(5):
        ask(UNKNOWN)
    refused = [ask(email) for email in (KNOWN, UNKNOWN)]
    assert refused[0] == refused[1]
    assert refused[0][0] == 429
    assert b"Too many password reset requests" in refused[0][3]
    assert mailoutbox == []


def test_a_failing_mail_server_does_not_show(alice, settings):
    """A mail that cannot be sent (only known addresses get one) gives the same answer as an
    unknown address, not an error page."""
    settings.EMAIL_BACKEND = f"{__name__}.BrokenBackend"
    assert ask(KNOWN) == ask(UNKNOWN)


def test_reset_links_say_nothing_about_accounts(alice):
    """A link for an account that does not exist and a link with a wrong token for one that
    does lead to the same "not valid" page."""
    pages = []
    for uid in (alice.pk, alice.pk + 1000):
        client = Client()
        url = f"/accounts/reset/{urlsafe_base64_encode(force_bytes(uid))}/wrong-token/"
        response = client.get(url, follow=True)
        pages.append((response.status_code, response.redirect_chain, response.content))
    assert pages[0] == pages[1]
    assert b"This link is not valid" in pages[0][2]


def test_a_link_mailed_before_deactivation_is_not_valid(accounts):
    """A deactivated account cannot be taken back through a reset link mailed before."""
    user = User.objects.get(email=accounts["inactive"])
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    token = default_token_generator.make_token(user)
    response = Client().get(f"/accounts/reset/{uid}/{token}/", follow=True)
    assert b"This link is not valid" in response.content
