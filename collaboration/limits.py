"""The bounds of writing together: a connection's messages' rate, and the editors a note may
have at once, and the seats one person may take (docs/architecture.md#writing-together, "Who, and
how much")."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import redis.asyncio
from django.conf import settings
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)


class TokenBucket:
    """`rate` messages a second sustained, `burst` at once: a message takes a token, tokens
    come back at `rate` a second up to `burst`."""

    def __init__(self, rate: float, burst: int, clock=time.monotonic):
        self.rate, self.burst, self.clock = rate, burst, clock
        self.tokens = float(burst)
        self.at = clock()

    def take(self) -> bool:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


# Seconds a seat lasts unless its connection renews it (every KEEPALIVE_SECONDS, from the
# consumer's keep-alive): an app server that dies without closing its sockets frees its seats
# this long after.
SEAT_SECONDS = 60
# A set of seats outlives its last renewal by as much again, then goes.
_SEATS_LIFETIME_MS = SEAT_SECONDS * 2000
# Take a seat: drop the lapsed ones of every set, refuse when the note's seats are full (0),
# the person's in this note (-1) or the person's overall (-2), else sit down in every set.
# KEYS: the note's set, then (when a person is named) theirs in the note and theirs overall.
_TAKE = """
for i = 1, #KEYS do redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', ARGV[1]) end
for i = 1, #KEYS do
  if redis.call('ZCARD', KEYS[i]) >= tonumber(ARGV[4 + i]) then return 1 - i end
end
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], ARGV[2], ARGV[3])
  redis.call('PEXPIRE', KEYS[i], ARGV[4])
end
return 1
"""
NOTE_FULL, USER_NOTE_FULL, USER_FULL = "note", "user-note", "user"
_REFUSALS = {0: NOTE_FULL, -1: USER_NOTE_FULL, -2: USER_FULL}


@dataclass(frozen=True)
class Seat:
    """The answer to a request for a seat: true when taken, else `full` names whose seats are
    all taken (NOTE_FULL, USER_NOTE_FULL or USER_FULL)."""

    full: str = ""

    def __bool__(self) -> bool:
        return not self.full

    def message(self) -> str:
        if self.full == USER_NOTE_FULL:
            return (
                f"You have this note open in {settings.LIVE_USER_NOTE_SEATS_MAX} windows "
                "already: close one, or this one tries again shortly."
            )
        if self.full == USER_FULL:
            return (
                f"You are writing in {settings.LIVE_USER_SEATS_MAX} windows already: close "
                "one, or this one tries again shortly."
            )
        return (
            f"{settings.LIVE_NOTE_EDITORS_MAX} editors are writing in this note already: "
            "trying again shortly."
        )


class EditorSeats:
    """The editors a note may have at once (LIVE_NOTE_EDITORS_MAX), and the seats one person
    may take in a note (LIVE_USER_NOTE_SEATS_MAX) and overall (LIVE_USER_SEATS_MAX), counted
    across every app server in Redis (REDIS_URL): a sorted set per note, per person and note,
    and per person, a member per connection (its channel name) scored by when its seat lapses.

    Each process also counts the seats its own connections hold, and the per-person caps
    apply to those first: without Redis, or while it cannot be reached, they still hold in
    each process (as the note's editors do there: consumers.editors), and Redis is asked
    only for what the process cannot answer alone."""

    def __init__(self, url: str | None = None):
        self.url = url
        self.held: dict[str, tuple[int, int | None]] = {}  # member → (note id, user id)

    def _url(self) -> str:
        return self.url if self.url is not None else settings.REDIS_URL

    @staticmethod
    def key(note_id: int) -> str:
        return f"{settings.CHANNEL_LAYER_PREFIX}:seats:{note_id}"

    @staticmethod
    def user_keys(note_id: int, user_id: int) -> tuple[str, str]:
        """The person's seats in the note, and theirs in every note."""
        prefix = settings.CHANNEL_LAYER_PREFIX
        return f"{prefix}:seats:{note_id}:user:{user_id}", f"{prefix}:seats:user:{user_id}"

    def _keys(self, note_id: int, user_id: int | None) -> list[str]:
        keys = [self.key(note_id)]
        if user_id is not None:
            keys.extend(self.user_keys(note_id, user_id))
        return keys

    def _held_here(self, note_id: int, user_id: int | None) -> Seat:
        if user_id is None:
            return Seat()
        mine = [note for note, user in self.held.values() if user == user_id]
        if mine.count(note_id) >= settings.LIVE_USER_NOTE_SEATS_MAX:
            return Seat(USER_NOTE_FULL)
        if len(mine) >= settings.LIVE_USER_SEATS_MAX:
            return Seat(USER_FULL)
        return Seat()

    async def _run(self, action, default):
        url = self._url()
        if not url:
            return default
        try:
            # A client per call: a consumer's event loop is not the next test's or server's,
            # and seats are taken only as sockets open, close and keep alive.
            async with redis.asyncio.from_url(url, socket_timeout=5) as client:
                return await action(client)
        except (RedisError, OSError):
            logger.warning("editor seats: Redis could not be reached", exc_info=True)
            return default

    async def take(
        self, note_id: int, member: str, *, user_id: int | None = None, now: float | None = None
    ) -> Seat:
        """A seat for `member` (a connection of `user_id`'s), unless the note's editors fill
        them all, or that person's own connections fill theirs."""
        here = self._held_here(note_id, user_id)
        if not here:
            return here
        now = time.time() if now is None else now
        keys = self._keys(note_id, user_id)
        maxima = [
            settings.LIVE_NOTE_EDITORS_MAX,
            settings.LIVE_USER_NOTE_SEATS_MAX,
            settings.LIVE_USER_SEATS_MAX,
        ][: len(keys)]

        async def take(client) -> Seat:
            taken = await client.eval(
                _TAKE, len(keys), *keys, now, now + SEAT_SECONDS, member, _SEATS_LIFETIME_MS,
                *maxima,
            )  # fmt: skip
            return Seat() if taken == 1 else Seat(_REFUSALS[int(taken)])

        seat = await self._run(take, Seat())
        if seat:
            self.held[member] = (note_id, user_id)
        return seat

    async def renew(
        self, note_id: int, member: str, *, user_id: int | None = None, now: float | None = None
    ) -> None:
        """Keep `member`'s seat (sitting down again if it lapsed while Redis was away)."""
        now = time.time() if now is None else now

        async def renew(client) -> None:
            for key in self._keys(note_id, user_id):
                await client.zadd(key, {member: now + SEAT_SECONDS})
                await client.pexpire(key, _SEATS_LIFETIME_MS)

        await self._run(renew, None)

    async def leave(self, note_id: int, member: str, *, user_id: int | None = None) -> None:
        self.held.pop(member, None)

        async def leave(client) -> None:
            for key in self._keys(note_id, user_id):
                await client.zrem(key, member)

        await self._run(leave, None)


seats = EditorSeats()
