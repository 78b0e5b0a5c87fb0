"""Rate limits for logging in and for password reset requests, counted in Django's cache.

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
import time
import unicodedata
from dataclasses import dataclass

from django.conf import settings
from django.core import signing
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse

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
