"""Image fixtures: uploads go to a folder of each test's own; users of each role."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User

from notes import services


@pytest.fixture(autouse=True)
def _media_in_tmp(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _user(name: str, group: str) -> User:
    user = User.objects.create_user(name, f"{name}@example.org", "correct horse battery staple")
    user.groups.add(Group.objects.get(name=group))
    return user


@pytest.fixture
def author(db):
    return _user("ada", "Author")


@pytest.fixture
def other_author(db):
    return _user("bert", "Author")


@pytest.fixture
def editor_user(db):
    return _user("eve", "Editor")


@pytest.fixture
def note(author):
    return services.note_create(user=author, title="Heat equation")
