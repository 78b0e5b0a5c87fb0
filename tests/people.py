"""Users of each role (ARCHITECTURE "Roles") and their notes, shared by every test package.

Registered as a plugin by tests/conftest.py, so any test can ask for `author`, `editor_user`…
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User

from notes import services

PASSWORD = "correct horse battery staple"


def user_in_group(name: str, group: str | None = None, **extra) -> User:
    """A user called `name`, in the role `group` (none: a plain account)."""
    user = User.objects.create_user(name, f"{name}@example.org", PASSWORD, **extra)
    if group:
        user.groups.add(Group.objects.get(name=group))
    return user


@pytest.fixture
def author(db):
    return user_in_group("ada", "Author", first_name="Ada", last_name="Lovelace")


@pytest.fixture
def other_author(db):
    return user_in_group("bert", "Author")


@pytest.fixture
def editor_user(db):
    return user_in_group("eve", "Editor")


@pytest.fixture
def admin_user(db):
    return user_in_group("root", is_superuser=True, is_staff=True)


@pytest.fixture
def note(author):
    return services.note_create(user=author, title="Heat equation")


@pytest.fixture
def others_note(other_author):
    return services.note_create(user=other_author, title="Someone else's note")
