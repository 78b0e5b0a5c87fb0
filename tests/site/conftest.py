"""Fixtures shared by the site's tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def by_dependencies(settings):
    """Pages made stale by what they show (SCIDRAFT_PAGE_INVALIDATION = "dependencies"), the
    local-memory cache standing in for Redis (SCIDRAFT_GENERATION_TTL above 0, as with
    REDIS_URL), with no generation lease: each test sets how long a stale page may be served."""
    settings.SCIDRAFT_GENERATION_TTL = 300
    settings.SCIDRAFT_GENERATION_LEASE_MS = 0
    settings.SCIDRAFT_PAGE_INVALIDATION = "dependencies"
    return settings
