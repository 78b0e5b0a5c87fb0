"""Editor fixtures: one user per role (ARCHITECTURE "Roles") and a note of each Author."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User

from notes import services

PASSWORD = "correct horse battery staple"


@pytest.fixture(autouse=True)
def _fast_hasher(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _user(name: str, group: str | None = None, **extra) -> User:
    user = User.objects.create_user(name, f"{name}@example.org", PASSWORD, **extra)
    if group:
        user.groups.add(Group.objects.get(name=group))
    return user


@pytest.fixture
def author(db):
    return _user("ada", "Author", first_name="Ada", last_name="Lovelace")


@pytest.fixture
def other_author(db):
    return _user("bert", "Author")


@pytest.fixture
def editor_user(db):
    return _user("eve", "Editor")


@pytest.fixture
def admin_user(db):
    return _user("root", is_superuser=True, is_staff=True)


@pytest.fixture
def note(author):
    return services.note_create(user=author, title="Heat equation")


@pytest.fixture
def others_note(other_author):
    return services.note_create(user=other_author, title="Someone else's note")
