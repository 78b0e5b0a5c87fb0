"""The password policy: Django's four validators, applied wherever a password is set (the
change and reset forms are tested in test_passwords.py; here the admin's forms)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import (
    get_default_password_validators,
    validate_password,
)
from django.core.exceptions import ValidationError
from django.test import Client

from .conftest import PASSWORD

WEAK = ["password", "12345678", "short", "alice@example.org", "987654321"]


def test_the_four_validators_are_configured():
    """Similarity to the user's attributes, a minimum length of 8, common and numeric."""
    names = [type(validator).__name__ for validator in get_default_password_validators()]
    assert names == [
        "UserAttributeSimilarityValidator",
        "MinimumLengthValidator",
        "CommonPasswordValidator",
        "NumericPasswordValidator",
    ]
    length = next(
        v for v in get_default_password_validators() if hasattr(v, "min_length")
    ).min_length
    assert length >= 8


@pytest.mark.parametrize("weak", WEAK)
def test_weak_passwords_fail_validation(alice, weak):
    """Common, short, numeric and username-like passwords are refused."""
    with pytest.raises(ValidationError):
        validate_password(weak, user=alice)


def test_a_strong_password_passes(alice):
    """A long passphrase unrelated to the account is accepted."""
    validate_password("a much longer new passphrase 42", user=alice)


@pytest.fixture
def admin_client_(db):
    root = User.objects.create_superuser("root", "root@example.org", PASSWORD)
    client = Client()
    client.force_login(root)
    return client


@pytest.mark.parametrize("weak", WEAK)
def test_admin_cannot_set_a_weak_password(alice, admin_client_, weak):
    """The admin's "change password" form for a user applies the validators."""
    response = admin_client_.post(
        f"/admin/auth/user/{alice.pk}/password/", {"password1": weak, "password2": weak}
    )
    assert response.status_code == 200
    alice.refresh_from_db()
    assert alice.check_password(PASSWORD)


def test_admin_cannot_create_a_user_with_a_weak_password(admin_client_):
    """The admin's "add user" form applies them too."""
    response = admin_client_.post(
        "/admin/auth/user/add/",
        {"username": "carol", "password1": "12345678", "password2": "12345678",
         "usable_password": "true"},
    )  # fmt: skip
    assert response.status_code == 200
    assert not User.objects.filter(username="carol").exists()


def test_admin_creates_a_user_with_a_strong_password(admin_client_):
    """The same form with a strong password works: the refusal above is the policy's."""
    strong = "a much longer new passphrase 42"
    response = admin_client_.post(
        "/admin/auth/user/add/",
        {"username": "carol", "password1": strong, "password2": strong,
         "usable_password": "true"},
    )  # fmt: skip
    assert response.status_code == 302
    assert User.objects.get(username="carol").check_password(strong)
