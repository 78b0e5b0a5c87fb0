"""The bounds of writing together: a connection's messages' rate, and the editors a note may
have at once (LIVE-SPEC "Limits")."""

from __future__ import annotations

import logging
import time

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
# A note's set of seats outlives its last renewal by as much again, then goes.
_SEATS_LIFETIME_MS = SEAT_SECONDS * 2000
# Take a seat: drop the lapsed ones, refuse when the note's seats are full, else sit down.
_TAKE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
"""


class EditorSeats:
    """The editors a note may have at once (LIVE_NOTE_EDITORS_MAX), counted across every app
    server in Redis (REDIS_URL): a sorted set per note, a member per connection (its channel
    name) scored by when its seat lapses. Without Redis, or while it cannot be reached, every
    seat is given (each process still counts its own connections: consumers.editors)."""

    def __init__(self, url: str | None = None):
        self.url = url

    def _url(self) -> str:
        return self.url if self.url is not None else settings.REDIS_URL

    @staticmethod
    def key(note_id: int) -> str:
        return f"{settings.CHANNEL_LAYER_PREFIX}:seats:{note_id}"

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

    async def take(self, note_id: int, member: str, *, now: float | None = None) -> bool:
        """A seat for `member`, unless the note's editors fill them all."""
        now = time.time() if now is None else now

        async def take(client) -> bool:
            taken = await client.eval(
                _TAKE,
                1,
                self.key(note_id),
                now,
                now + SEAT_SECONDS,
                settings.LIVE_NOTE_EDITORS_MAX,
                member,
                _SEATS_LIFETIME_MS,
            )
            return bool(taken)

        return await self._run(take, True)

    async def renew(self, note_id: int, member: str, *, now: float | None = None) -> None:
        """Keep `member`'s seat (sitting down again if it lapsed while Redis was away)."""
        now = time.time() if now is None else now

        async def renew(client) -> None:
            await client.zadd(self.key(note_id), {member: now + SEAT_SECONDS})
            await client.pexpire(self.key(note_id), _SEATS_LIFETIME_MS)

        await self._run(renew, None)

    async def leave(self, note_id: int, member: str) -> None:
        async def leave(client) -> None:
            await client.zrem(self.key(note_id), member)

        await self._run(leave, None)


seats = EditorSeats()
