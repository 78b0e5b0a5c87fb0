"""Image fixtures: uploads go to a folder of each test's own."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _media_in_tmp(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
