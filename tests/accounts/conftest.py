"""Accounts fixtures: users and a clock. The rate limits count rows of the database, which
each test's transaction rolls back."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from accounts import limits
from tests.people import PASSWORD


@pytest.fixture
def alice(db):
    return User.objects.create_user("alice", "alice@example.org", PASSWORD)


@pytest.fixture
def bob(db):
    return User.objects.create_user("bob", "bob@example.org", PASSWORD)


class Clock:
    def __init__(self, start: float = 1_800_000_000.0):
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(monkeypatch):
    """The rate limiter's clock, moved by the test."""
    fake = Clock()
    monkeypatch.setattr(limits, "clock", fake)
    return fake


def login(client, username, password, address="203.0.113.5", **extra):
    """POST the login form from `address`; HTTP_* keywords are headers, the rest form fields."""
    headers = {key: value for key, value in extra.items() if key.startswith("HTTP_")}
    fields = {key: value for key, value in extra.items() if key not in headers}
    return client.post(
        "/accounts/login/",
        {"username": username, "password": password, **fields},
        REMOTE_ADDR=address,
        **headers,
    )
