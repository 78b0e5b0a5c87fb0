"""Rate limits for logging in and for password reset requests, counted in the database.

The counts are rows of RateLimitEvent (accounts.models), one per counted event, not cache keys:
a cache evicts them (allkeys-lru, under a flood of cached pages) or, full and without
eviction, refuses to store them, and a limiter that cannot count must not let attempts
through. Each limit is a sliding window: an event counts for `window`
seconds after it happened. An attempt is recorded first (committed on its own) and the counts
read after, so of any number of parallel attempts at most the limit see a count within it.
Rows that have left every window are deleted by a sweep, at most once a minute per process.
If the database cannot be asked, the attempt is refused ("fails closed"); a login could not
have succeeded without the database anyway.

Logging in (settings, all overridable by environment variables), within ACCOUNTS_LOGIN_WINDOW:
- ACCOUNTS_LOGIN_CLIENT_LIMIT failed attempts per account (normalised username) from one
  client: the browser, if it has logged in to that account before (a signed device cookie
  with a random id of its own), else the client address (an IPv6 /64 counts as one). An
  attacker's wrong passwords pause their own client, not the account: its owner, from their
  own browser or from anywhere else, still logs in.
- ACCOUNTS_LOGIN_ADDRESS_LIMIT failed attempts per client address over all accounts, from
  browsers that have not logged in to the account tried: one address cannot try a few
  passwords on each of many accounts.
- ACCOUNTS_LOGIN_ACCOUNT_LIMIT failed attempts per account from all such browsers together:
  many addresses cannot share out the guesses on one account. Reaching it pauses only new
  browsers; the owner's known browsers keep their own limit.
Once a limit is reached the attempt is refused before the password is checked, so a correct
password reveals nothing either, and it is not counted; a successful login clears its
client's count.

Password reset: ACCOUNTS_RESET_LIMIT requests per address (refused with a message) and per
email address (silently not mailed, so the response never tells whether the address exists),
within ACCOUNTS_RESET_WINDOW seconds.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import ipaddress
import logging
import math
import secrets
import time
import unicodedata
from dataclasses import dataclass, field

from django.conf import settings
from django.core import signing
from django.db import DatabaseError, connection
from django.db.models import Q
from django.http import HttpRequest, HttpResponse

from .models import RateLimitEvent

logger = logging.getLogger(__name__)


DEVICE_COOKIE = "scidraft_device"
_DEVICE_SALT = "accounts.device"
_DEVICE_MAX_AGE = 60 * 60 * 24 * 365
# How long a client is asked to wait when the limits cannot be read (the database is down).
UNAVAILABLE_RETRY = 30
SWEEP_SECONDS = 60


def clock() -> float:
    """The clock the windows read (tests move it)."""
    return time.time()


def _setting(name: str, default: int) -> int:
    return int(getattr(settings, name, default))


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()[:32]


def _moment(seconds: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, tz=dt.UTC)


# --- Sliding windows ------------------------------------------------------------------------


class SlidingWindow:
    """`limit` events per `window` seconds for each identifier of one scope."""

    def __init__(self, scope: str, limit: int, window: int):
        self.scope = scope
        self.limit = max(1, limit)
        self.window = max(1, window)


@dataclass(frozen=True)
class Counted:
    """One identifier under one window, as an attempt counts it."""

    window: SlidingWindow
    ident: str

    @property
    def key(self) -> tuple[str, str]:
        return self.window.scope, _digest(self.ident)


@dataclass
class Tally:
    """The events recorded for one attempt (their ids) and, per window, the times of the
    others still inside it, oldest first."""

    recorded: list[int] = field(default_factory=list)
    others: dict[tuple[str, str], list[float]] = field(default_factory=dict)

    def count(self, counted: Counted) -> int:
        """Events in the window, this attempt's included."""
        return len(self.others[counted.key]) + 1

    def retry_after(self, counted: Counted, now: float) -> int:
        """Seconds until one more event fits in the window beside the others."""
        times = self.others[counted.key]
        if len(times) < counted.window.limit:
            return 0
        leaving = times[len(times) - counted.window.limit]
        return max(1, math.ceil(leaving + counted.window.window - now))


def record(counting: list[Counted], now: float) -> Tally:
    """Record one event in each window, commit it, then read every window's events: two
    queries, whatever the number of windows."""
    at = _moment(now)
    rows = [RateLimitEvent(scope=scope, ident=ident, at=at) for scope, ident in _keys(counting)]
    if connection.features.can_return_rows_from_bulk_insert:
        RateLimitEvent.objects.bulk_create(rows)
    else:  # the ids are needed to take the events back
        for row in rows:
            row.save()
    tally = Tally(recorded=[row.pk for row in rows])
    inside = Q()
    for counted in counting:
        scope, ident = counted.key
        tally.others[counted.key] = []
        inside |= Q(scope=scope, ident=ident, at__gt=_moment(now - counted.window.window))
    found = (
        RateLimitEvent.objects.filter(inside)
        .exclude(pk__in=tally.recorded)
        .order_by("at")
        .values_list("scope", "ident", "at")
    )
    for scope, ident, moment in found:
        tally.others[(scope, ident)].append(moment.timestamp())
    sweep(now)
    return tally


def _keys(counting: list[Counted]) -> list[tuple[str, str]]:
    return [counted.key for counted in counting]


def forget(event_ids: list[int]) -> None:
    if event_ids:
        RateLimitEvent.objects.filter(pk__in=event_ids).delete()


def clear(counted: Counted) -> None:
    scope, ident = counted.key
    RateLimitEvent.objects.filter(scope=scope, ident=ident).delete()


_last_sweep = -math.inf  # time.monotonic() of this process's last sweep


def sweep(now: float, *, force: bool = False) -> int:
    """Delete the events that no window counts any more (as of `now`, the limiter's clock); at
    most once a minute per process (each limit bounds its rows to its window, so the table
    stays small between sweeps). Returns the number deleted."""
    global _last_sweep
    if not force and time.monotonic() - _last_sweep < SWEEP_SECONDS:
        return 0
    _last_sweep = time.monotonic()
    login = _setting("ACCOUNTS_LOGIN_WINDOW", 15 * 60)
    reset = _setting("ACCOUNTS_RESET_WINDOW", 3600)
    expired = Q(scope__in=LOGIN_SCOPES, at__lte=_moment(now - login)) | Q(
        scope__in=RESET_SCOPES, at__lte=_moment(now - reset)
    )
    deleted, _ = RateLimitEvent.objects.filter(expired).delete()
    return deleted


LOGIN_SCOPES = ("login-client", "login-address", "login-account")
RESET_SCOPES = ("reset-address", "reset-email")


def login_client_window() -> SlidingWindow:
    return SlidingWindow(
        "login-client",
        _setting("ACCOUNTS_LOGIN_CLIENT_LIMIT", 5),
        _setting("ACCOUNTS_LOGIN_WINDOW", 15 * 60),
    )


def login_address_window() -> SlidingWindow:
    return SlidingWindow(
        "login-address",
        _setting("ACCOUNTS_LOGIN_ADDRESS_LIMIT", 20),
        _setting("ACCOUNTS_LOGIN_WINDOW", 15 * 60),
    )


def login_account_window() -> SlidingWindow:
    return SlidingWindow(
        "login-account",
        _setting("ACCOUNTS_LOGIN_ACCOUNT_LIMIT", 50),
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
    """After a successful login: this browser is known to the account (see the module doc),
    under a random id of its own, so that its failures are counted apart from others'."""
    response.set_signed_cookie(
        DEVICE_COOKIE,
        f"{_digest(normalise_username(username))}:{secrets.token_urlsafe(12)}",
        salt=_DEVICE_SALT,
        max_age=_DEVICE_MAX_AGE,
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )


def known_device(request: HttpRequest | None, account: str) -> str | None:
    """The id of this browser if it has logged in to `account` before, else None."""
    if request is None:
        return None
    try:
        value = request.get_signed_cookie(
            DEVICE_COOKIE, default=None, salt=_DEVICE_SALT, max_age=_DEVICE_MAX_AGE
        )
    except signing.BadSignature:
        return None
    if not value:
        return None
    owner, _, device = value.partition(":")
    # A cookie set before devices had ids names the account only: one id for all of those.
    return (device or "before-ids") if owner == _digest(account) else None


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
    # When blocked: "client" (this account from this browser or address), "account" (this
    # account from browsers new to it), "address" (this address), or "unavailable".
    reason: str = ""
    client: Counted | None = None
    recorded: list[int] = field(default_factory=list)

    @property
    def status(self) -> int:
        return 503 if self.reason == "unavailable" else 429

    @property
    def message(self) -> str:
        wait = format_wait(self.retry_after)
        if self.reason == "client":
            return (
                "Too many failed attempts to log in to this account. For its safety, logging "
                f"in to it from this browser or network is paused: try again in {wait}."
            )
        if self.reason == "account":
            return (
                "Too many failed attempts to log in to this account, from many places. "
                "Logging in to it from a browser that has not logged in to it before is "
                f"paused: try again in {wait}."
            )
        if self.reason == "unavailable":
            return f"Logging in is unavailable for a moment: try again in {wait}."
        return (
            "Too many failed log-in attempts from your network. Logging in from it is "
            f"paused: try again in {wait}."
        )

    def failed(self) -> None:
        """The password was wrong: the events recorded by login_attempt stand."""

    def succeeded(self) -> None:
        """Correct password: this attempt was no failure, and its client starts afresh."""
        try:
            forget(self.recorded)
            if self.client is not None:
                clear(self.client)
        except DatabaseError:
            logger.warning("login rate limiter: could not clear a count", exc_info=True)


def login_attempt(request: HttpRequest | None, username: str) -> LoginAttempt:
    """Count an attempt to log in as `username` and say whether it may check the password."""
    now = clock()
    account = normalise_username(username)
    device = known_device(request, account)
    address = client_address(request)
    # (what is counted, the reason given when its limit is reached); the client is counted
    # first (LoginAttempt.client).
    if device is not None:
        limits = [(Counted(login_client_window(), f"{account}|device|{device}"), "client")]
    else:
        limits = [
            (Counted(login_client_window(), f"{account}|address|{address}"), "client"),
            (Counted(login_address_window(), address), "address"),
            (Counted(login_account_window(), account), "account"),
        ]
    counting = [counted for counted, _ in limits]
    try:
        tally = record(counting, now)
        over = [
            (tally.retry_after(counted, now), reason)
            for counted, reason in limits
            if tally.count(counted) > counted.window.limit
        ]
        if over:
            # Refused without checking the password: not a failure, so not counted.
            forget(tally.recorded)
            retry_after, reason = max(over)
            logger.info("login refused by the %s rate limit (address %s)", reason, address)
            return LoginAttempt(blocked=True, retry_after=max(1, retry_after), reason=reason)
    except DatabaseError:
        logger.error("login rate limiter: database unavailable; refusing", exc_info=True)
        return LoginAttempt(blocked=True, retry_after=UNAVAILABLE_RETRY, reason="unavailable")
    return LoginAttempt(client=counting[0], recorded=tally.recorded)


# --- Password reset ---------------------------------------------------------------------------


@dataclass
class ResetAttempt:
    blocked: bool = False  # this address asked too often: the form says so
    send: bool = True  # False when this email address was asked for too often: silently skipped
    retry_after: int = 0
    unavailable: bool = False  # the limits could not be read: refused

    @property
    def status(self) -> int:
        return 503 if self.unavailable else 429

    @property
    def message(self) -> str:
        if self.unavailable:
            return (
                "Password reset is unavailable for a moment: "
                f"try again in {format_wait(self.retry_after)}."
            )
        return (
            "Too many password reset requests from your network: "
            f"try again in {format_wait(self.retry_after)}."
        )


def reset_attempt(request: HttpRequest | None, email: str) -> ResetAttempt:
    """Count a password reset request from this address for `email`."""
    now = clock()
    by_address = Counted(reset_address_window(), client_address(request))
    target = unicodedata.normalize("NFKC", email).strip().casefold()
    by_email = Counted(reset_email_window(), target)
    try:
        tally = record([by_address], now)
        if tally.count(by_address) > by_address.window.limit:
            forget(tally.recorded)
            return ResetAttempt(blocked=True, retry_after=tally.retry_after(by_address, now))
        tally = record([by_email], now)
        if tally.count(by_email) > by_email.window.limit:
            logger.info("password reset mail for one address held back by rate limit")
            return ResetAttempt(send=False)
    except DatabaseError:
        logger.error("reset rate limiter: database unavailable; refusing", exc_info=True)
        return ResetAttempt(blocked=True, retry_after=UNAVAILABLE_RETRY, unavailable=True)
    return ResetAttempt()
