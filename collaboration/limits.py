"""The bounds of one connection: its messages' size and rate (LIVE-SPEC "Limits")."""

from __future__ import annotations

import time


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
