"""People: the Admin's invitations, roles, deactivation and reactivation of users.

Roles (ARCHITECTURE "Roles"): Admin is a superuser; Editor and Author are the groups of that
name (notes migration 0002). An invited user is active with an unusable password until they
open the link in the invitation and choose one; a deactivated user cannot log in (Django's
backend refuses inactive users, which also ends their open sessions) and keeps their notes.
The rate limits of logging in and password resets are accounts.limits.
"""

from __future__ import annotations

import re

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.core.exceptions import PermissionDenied
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from django.utils.text import slugify

from notes.models import Author
from scidraft.site.models import SiteSettings

ROLES = {"author": "Author", "editor": "Editor", "admin": "Admin"}


class PeopleError(Exception):
    """An action on a user that cannot be done as asked; the message says why."""


class InviteTokenGenerator(PasswordResetTokenGenerator):
    """One-time invitation links: a salt of their own (a password-reset link is not an
    invitation, nor the reverse), and void once a password is chosen or the user deactivated.
    They expire after PASSWORD_RESET_TIMEOUT, as reset links do; an Admin can send a new one."""

    key_salt = "accounts.services.InviteTokenGenerator"

    def _make_hash_value(self, user, timestamp):
        return f"{super()._make_hash_value(user, timestamp)}{user.is_active}"


invite_tokens = InviteTokenGenerator()


def role_of(user) -> str:
    if user.is_superuser:
        return "admin"
    names = {group.name for group in user.groups.all()}
    return "editor" if "Editor" in names else "author"


def _require_admin(by) -> None:
    if not (by.is_authenticated and by.is_active and by.is_superuser):
        raise PermissionDenied("Only Admins manage people.")


def _target(user_id: int, by):
    _require_admin(by)
    user = get_user_model().objects.select_for_update().filter(pk=user_id).first()
    if user is None:
        raise PeopleError("No such user.")
    return user


def _apply_role(user, role: str) -> None:
    if role not in ROLES:
        raise PeopleError(f"Choose a role: {', '.join(ROLES.values())}.")
    user.is_superuser = role == "admin"
    # Editors and Admins also work in the Django admin (tags, environments, bibliographies).
    user.is_staff = role in {"editor", "admin"}
    user.save(update_fields=["is_superuser", "is_staff"])
    groups = {"author": ["Author"], "editor": ["Editor"], "admin": []}[role]
    user.groups.set(Group.objects.filter(name__in=groups))


def _unique_username(email: str) -> str:
    model = get_user_model()
    base = re.sub(r"[^\w.+-]", "", email.split("@", 1)[0])[:140] or "user"
    username, suffix = base, 2
    while model.objects.filter(username__iexact=username).exists():
        username, suffix = f"{base}{suffix}", suffix + 1
    return username


def _author_profile(user, *, name: str, email: str, author_id: int | None):
    if author_id is not None:
        author = Author.objects.select_for_update().filter(pk=author_id).first()
        if author is None:
            raise PeopleError("That author profile no longer exists.")
        if author.user_id is not None:
            raise PeopleError(f"The author profile “{author.name}” already belongs to a user.")
    else:
        author = Author.objects.filter(user__isnull=True, email__iexact=email).first()
    if author is None:
        base = slugify(name, allow_unicode=True) or slugify(user.username) or "author"
        handle, suffix = base[:90], 2
        while Author.objects.filter(handle=handle).exists():
            handle, suffix = f"{base[:90]}-{suffix}", suffix + 1
        author = Author(name=name, handle=handle)
    author.user = user
    author.email = author.email or email
    author.full_clean()
    author.save()
    return author


def invite_link(user, origin: str) -> str:
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    path = reverse(
        "accounts:invite_accept", kwargs={"uidb64": uid, "token": invite_tokens.make_token(user)}
    )
    return f"{origin.rstrip('/')}{path}"


def _send_invitation(user, *, by, origin: str) -> None:
    site = SiteSettings.objects.current()
    context = {
        "user": user,
        "inviter": by.get_full_name() or by.get_username(),
        "site_title": site.title,
        "link": invite_link(user, origin),
        "role": ROLES[role_of(user)],
    }
    subject = " ".join(render_to_string("registration/invite_subject.txt", context).split())
    body = render_to_string("registration/invite_email.txt", context)
    send_mail(subject, body, None, [user.email])


@transaction.atomic
def user_invite(*, email: str, name: str, role: str, by, origin: str, author_id: int | None = None):
    """A new user with an Author profile (a new one, or `author_id`, or the unclaimed profile
    with this email), and an email with a one-time link to choose a password. If the mail
    cannot be sent nothing is created, and the error says so."""
    _require_admin(by)
    model = get_user_model()
    email = model.objects.normalize_email(email.strip())
    name = " ".join(name.split())
    if not email or not name:
        raise PeopleError("Give the person's name and email address.")
    if model.objects.filter(email__iexact=email).exists():
        raise PeopleError(f"A user with the email address {email} already exists.")
    if role not in ROLES:
        raise PeopleError(f"Choose a role: {', '.join(ROLES.values())}.")
    first, _, last = name.partition(" ")
    user = model(username=_unique_username(email), email=email, first_name=first[:150],
                 last_name=last[:150], is_active=True)  # fmt: skip
    user.set_unusable_password()
    user.save()
    _apply_role(user, role)
    _author_profile(user, name=name[:200], email=email, author_id=author_id)
    try:
        _send_invitation(user, by=by, origin=origin)
    except OSError as error:  # SMTP and socket errors: undo the whole invitation
        raise PeopleError(
            f"The invitation email could not be sent ({error}); nobody was added."
        ) from error
    return user


@transaction.atomic
def user_invite_resend(*, user_id: int, by, origin: str):
    """A fresh invitation link for someone who has not chosen a password yet."""
    user = _target(user_id, by)
    if user.has_usable_password():
        raise PeopleError(f"{user.get_username()} has already accepted the invitation.")
    if not user.is_active:
        raise PeopleError(f"{user.get_username()} is deactivated: reactivate them first.")
    if not user.email:
        raise PeopleError(f"{user.get_username()} has no email address.")
    try:
        _send_invitation(user, by=by, origin=origin)
    except OSError as error:
        raise PeopleError(f"The invitation email could not be sent ({error}).") from error
    return user


@transaction.atomic
def user_set_role(*, user_id: int, role: str, by):
    user = _target(user_id, by)
    if user.pk == by.pk:
        raise PeopleError("You cannot change your own role: ask another Admin.")
    _apply_role(user, role)
    return user


@transaction.atomic
def user_deactivate(*, user_id: int, by):
    """The user can no longer log in (open sessions end too); their notes stay."""
    user = _target(user_id, by)
    if user.pk == by.pk:
        raise PeopleError("You cannot deactivate yourself.")
    if user.is_active:
        user.is_active = False
        user.save(update_fields=["is_active"])
    return user


@transaction.atomic
def user_reactivate(*, user_id: int, by):
    user = _target(user_id, by)
    if not user.is_active:
        user.is_active = True
        user.save(update_fields=["is_active"])
    return user
