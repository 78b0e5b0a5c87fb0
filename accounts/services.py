"""Rate limits for logging in and for password reset requests, counted in Django's cache;
and, at the end, the Admin's management of people (invite, role, deactivate).

The cache is Redis in production (REDIS_URL), so the counts are shared by every process; the
local-memory default counts per process. Each limit is a sliding window made of fifteen buckets
(one minute each for a 15-minute window): a count is the sum of the buckets inside the window,
and each bucket is incremented atomically (cache.incr), so concurrent requests cannot slip past
a limit between a check and a write.

Logging in (settings, all overridable by environment variables):
- ACCOUNTS_LOGIN_ACCOUNT_LIMIT failed attempts per account (normalised username), and
- ACCOUNTS_LOGIN_ADDRESS_LIMIT failed attempts per client address (an IPv6 /64 counts as one),
  each within ACCOUNTS_LOGIN_WINDOW seconds. The two limits are independent: an attacker behind
  one address cannot lock more than a handful of accounts (the address limit stops them first),
  and failures on one account never block other accounts. A browser that has logged in to an
  account before carries a signed device cookie for it and is not held back by its address's
  limit for that account, so a noisy neighbour behind the same NAT cannot lock everyone out.
  Once a limit is reached the attempt is refused before the password is checked, so a correct
  password reveals nothing either; a successful login clears the account's count.

Password reset: ACCOUNTS_RESET_LIMIT requests per address (refused with a message) and per
email address (silently not mailed, so the response never tells whether the address exists),
within ACCOUNTS_RESET_WINDOW seconds.

A cache outage never locks anyone out: the limiter logs it and lets the attempt through (the
password is still checked).
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import logging
import math
import re
import time
import unicodedata
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.core import signing
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.core.mail import send_mail
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from django.utils.text import slugify

from notes.models import Author
from scidraft.site.models import SiteSettings

logger = logging.getLogger(__name__)

BUCKETS = 15
DEVICE_COOKIE = "scidraft_device"
_DEVICE_SALT = "accounts.device"
_DEVICE_MAX_AGE = 60 * 60 * 24 * 365


def clock() -> float:
    """The clock the windows read (tests move it)."""
    return time.time()


def _setting(name: str, default: int) -> int:
    return int(getattr(settings, name, default))


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()[:32]


# --- Sliding windows ------------------------------------------------------------------------


class SlidingWindow:
    """`limit` events per `window` seconds for each identifier, in cache buckets."""

    def __init__(self, scope: str, limit: int, window: int):
        self.scope = scope
        self.limit = max(1, limit)
        self.window = max(1, window)
        self.bucket_seconds = max(1, math.ceil(self.window / BUCKETS))
        self.span = math.ceil(self.window / self.bucket_seconds)  # buckets in the window

    def _key(self, ident: str, index: int) -> str:
        return f"accounts:rl:{self.scope}:{_digest(ident)}:{index}"

    def _indexes(self, now: float) -> range:
        current = int(now // self.bucket_seconds)
        return range(current - self.span + 1, current + 1)

    def counts(self, ident: str, now: float) -> list[tuple[int, int]]:
        """(bucket index, count) for each bucket inside the window, oldest first."""
        indexes = self._indexes(now)
        keys = {self._key(ident, index): index for index in indexes}
        found = cache.get_many(list(keys))
        return [(index, int(found.get(key) or 0)) for key, index in keys.items()]

    def total(self, ident: str, now: float) -> int:
        return sum(count for _, count in self.counts(ident, now))

    def hit(self, ident: str, now: float) -> str:
        """Count one event now; returns the bucket key (for `undo`)."""
        key = self._key(ident, int(now // self.bucket_seconds))
        timeout = self.window + 2 * self.bucket_seconds
        cache.add(key, 0, timeout)
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, timeout)
        return key

    @staticmethod
    def undo(key: str) -> None:
        with contextlib.suppress(ValueError):  # expired meanwhile
            cache.decr(key)

    def clear(self, ident: str, now: float) -> None:
        cache.delete_many([self._key(ident, index) for index in self._indexes(now)])

    def retry_after(self, ident: str, now: float) -> int:
        """Seconds until one more event fits in the window; 0 if it fits now."""
        counts = self.counts(ident, now)
        remaining = sum(count for _, count in counts)
        if remaining < self.limit:
            return 0
        for index, count in counts:
            remaining -= count
            if remaining < self.limit:
                # Bucket `index` leaves the window when bucket index + span begins.
                return max(1, math.ceil((index + self.span) * self.bucket_seconds - now))
        return self.window  # not reached: the loop empties the window


def login_account_window() -> SlidingWindow:
    return SlidingWindow(
        "login-account",
        _setting("ACCOUNTS_LOGIN_ACCOUNT_LIMIT", 5),
        _setting("ACCOUNTS_LOGIN_WINDOW", 15 * 60),
    )


def login_address_window() -> SlidingWindow:
    return SlidingWindow(
        "login-address",
        _setting("ACCOUNTS_LOGIN_ADDRESS_LIMIT", 20),
        _setting("ACCOUNTS_LOGIN_WINDOW", 15 * 60),
    )


def reset_address_window() -> SlidingWindow:
    return SlidingWindow(
        "reset-address",
        _setting("ACCOUNTS_RESET_LIMIT", 5),
        _setting("ACCOUNTS_RESET_WINDOW", 3600),
    )


def reset_email_window() -> SlidingWindow:
    return SlidingWindow(
        "reset-email", _setting("ACCOUNTS_RESET_LIMIT", 5), _setting("ACCOUNTS_RESET_WINDOW", 3600)
    )


# --- Who is asking ----------------------------------------------------------------------------


def normalise_username(username: str) -> str:
    """The account a rate limit counts against: NFKC, trimmed, case-folded."""
    return unicodedata.normalize("NFKC", username).strip().casefold()


def client_address(request: HttpRequest | None) -> str:
    """The client's address: REMOTE_ADDR, or X-Forwarded-For behind trusted proxies.

    X-Forwarded-For is read only when ACCOUNTS_TRUSTED_PROXY_COUNT says how many proxies of ours
    sit in front of the app, and then only the entry the outermost of them appended (entries
    further left are whatever the client chose to send). An IPv6 address counts by its /64,
    which one subscriber usually holds whole.
    """
    if request is None:
        return "unknown"
    address = request.META.get("REMOTE_ADDR", "")
    proxies = _setting("ACCOUNTS_TRUSTED_PROXY_COUNT", 0)
    if proxies > 0:
        forwarded = [
            part.strip()
            for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")
            if part.strip()
        ]
        if len(forwarded) >= proxies:
            address = forwarded[-proxies]
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address or "unknown"
    if ip.version == 6:
        if ip.ipv4_mapped:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def remember_device(response: HttpResponse, username: str) -> None:
    """After a successful login: this browser is known to the account (see the module doc)."""
    response.set_signed_cookie(
        DEVICE_COOKIE,
        _digest(normalise_username(username)),
        salt=_DEVICE_SALT,
        max_age=_DEVICE_MAX_AGE,
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )


def _known_device(request: HttpRequest | None, account: str) -> bool:
    if request is None:
        return False
    try:
        value = request.get_signed_cookie(
            DEVICE_COOKIE, default=None, salt=_DEVICE_SALT, max_age=_DEVICE_MAX_AGE
        )
    except signing.BadSignature:
        return False
    return value == _digest(account)


def format_wait(seconds: int) -> str:
    if seconds < 60:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    minutes = math.ceil(seconds / 60)
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


# --- Logging in -------------------------------------------------------------------------------


@dataclass
class LoginAttempt:
    """One login attempt, counted as a failure until `succeeded()` says otherwise."""

    blocked: bool = False
    retry_after: int = 0
    reason: str = ""  # "account" or "address" when blocked
    account: str = ""
    address_key: str | None = None

    @property
    def message(self) -> str:
        wait = format_wait(self.retry_after)
        if self.reason == "account":
            return (
                "Too many failed attempts to log in to this account. For its safety, logging "
                f"in to it is paused: try again in {wait}."
            )
        return (
            "Too many failed log-in attempts from your network. Logging in from it is "
            f"paused: try again in {wait}."
        )

    def failed(self) -> None:
        """The password was wrong: the counts made by login_attempt stand."""

    def succeeded(self) -> None:
        """Correct password: clear the account's count and take back the address's."""
        try:
            if self.account:
                login_account_window().clear(self.account, clock())
            if self.address_key:
                SlidingWindow.undo(self.address_key)
        except Exception:
            logger.warning("login rate limiter: cache unavailable", exc_info=True)


def login_attempt(request: HttpRequest | None, username: str) -> LoginAttempt:
    """Count an attempt to log in as `username` and say whether it may check the password.

    The attempt is counted first (atomically) and checked after, so parallel requests cannot
    all pass a check made before any of them was counted.
    """
    now = clock()
    account = normalise_username(username)
    address = client_address(request)
    by_account = login_account_window()
    by_address = login_address_window()
    try:
        account_key = by_account.hit(account, now)
        address_key = by_address.hit(address, now)
        over = []
        if by_account.total(account, now) > by_account.limit:
            over.append(("account", by_account, account))
        if by_address.total(address, now) > by_address.limit and not _known_device(
            request, account
        ):
            over.append(("address", by_address, address))
        if over:
            # Refused without checking the password: not a failure, so not counted.
            SlidingWindow.undo(account_key)
            SlidingWindow.undo(address_key)
            retry_after, reason = max(
                (window.retry_after(ident, now), reason) for reason, window, ident in over
            )
            logger.info("login refused by the %s rate limit (address %s)", reason, address)
            return LoginAttempt(blocked=True, retry_after=max(1, retry_after), reason=reason)
    except Exception:
        logger.warning("login rate limiter: cache unavailable; not limiting", exc_info=True)
        return LoginAttempt()
    return LoginAttempt(account=account, address_key=address_key)


# --- Password reset ---------------------------------------------------------------------------


@dataclass
class ResetAttempt:
    blocked: bool = False  # this address asked too often: the form says so
    send: bool = True  # False when this email address was asked for too often: silently skipped
    retry_after: int = 0

    @property
    def message(self) -> str:
        return (
            "Too many password reset requests from your network: "
            f"try again in {format_wait(self.retry_after)}."
        )


def reset_attempt(request: HttpRequest | None, email: str) -> ResetAttempt:
    """Count a password reset request from this address for `email`."""
    now = clock()
    address = client_address(request)
    by_address = reset_address_window()
    by_email = reset_email_window()
    try:
        key = by_address.hit(address, now)
        if by_address.total(address, now) > by_address.limit:
            SlidingWindow.undo(key)
            return ResetAttempt(blocked=True, retry_after=by_address.retry_after(address, now))
        target = unicodedata.normalize("NFKC", email).strip().casefold()
        by_email.hit(target, now)
        if by_email.total(target, now) > by_email.limit:
            logger.info("password reset mail for one address held back by rate limit")
            return ResetAttempt(send=False)
    except Exception:
        logger.warning("reset rate limiter: cache unavailable; not limiting", exc_info=True)
    return ResetAttempt()


# --- People: invitations, roles, deactivation (Admins only) -----------------------------------
#
# Roles (ARCHITECTURE "Roles"): Admin is a superuser; Editor and Author are the groups of that
# name (notes migration 0002). An invited user is active with an unusable password until they
# open the link in the invitation and choose one; a deactivated user cannot log in (Django's
# backend refuses inactive users, which also ends their open sessions) and keeps their notes.

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
