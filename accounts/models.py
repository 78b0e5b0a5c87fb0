"""What the rate limits count (accounts.limits), kept in the database.

Not in the cache: a cache evicts (allkeys-lru dropped the counters during a page-cache flood)
or, full and without eviction, refuses writes (and the limiter then let every attempt
through). The database keeps every row until the limiter's own sweep removes it
(docs/architecture.md, "Rate limits").
"""

from __future__ import annotations

from django.db import models


class RateLimitEvent(models.Model):
    """One event a limit counts: a failed login, a password reset request.

    `ident` is a digest of what is counted (an account and a client, an address, an email
    address), so the table holds no user names or addresses. Rows older than their limit's
    window no longer count and are deleted by the limiter's sweep.
    """

    scope = models.CharField(max_length=32)
    ident = models.CharField(max_length=64)
    at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["scope", "ident", "at"], name="accounts_rl_lookup"),
            models.Index(fields=["at"], name="accounts_rl_sweep"),
        ]

    def __str__(self) -> str:
        return f"{self.scope} {self.ident[:8]}… at {self.at:%Y-%m-%d %H:%M:%S}"
