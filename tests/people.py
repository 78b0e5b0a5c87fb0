"""Users of each role (ARCHITECTURE "Roles") and their notes, shared by every test package.

Registered as a plugin by tests/conftest.py, so any test can ask for `author`, `editor_user`…
"""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps as django_apps
from django.contrib.auth.management import create_permissions
from django.contrib.auth.models import Group, Permission, User

from notes import services

PASSWORD = "correct horse battery staple"


def role_group(name: str) -> Group:
    """The role's group, as migrations notes 0002 and bibliography 0002 made it. A
    transactional test's flush deletes rows made by migrations (tests/conftest.py makes them
    again): the group is made again, with the permissions those migrations grant."""
    group = Group.objects.filter(name=name).first()
    if group is not None:
        return group
    roles = importlib.import_module("notes.migrations.0002_environments_and_roles")
    granted = {
        "Editor": [*roles.EDITOR_PERMISSIONS, "bibliography.edit_any_bibfile"],
        "Author": roles.AUTHOR_PERMISSIONS,
    }[name]
    for app_config in django_apps.get_app_configs():
        create_permissions(app_config, verbosity=0)
    group = Group.objects.create(name=name)
    for permission in granted:
        app_label, codename = permission.split(".")
        group.permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )
    return group


def user_in_group(name: str, group: str | None = None, **extra) -> User:
    """A user called `name`, in the role `group` (none: a plain account)."""
    user = User.objects.create_user(name, f"{name}@example.org", PASSWORD, **extra)
    if group:
        user.groups.add(role_group(group))
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
