"""Image bytes: growing hostile images (decompression bombs among them) are accepted or
refused with a clear error within the path's bounds, Pillow's native memory counted."""

from __future__ import annotations

import io

import pytest
from django.core.exceptions import ValidationError
from hypothesis import given
from PIL import Image

from images.services import image_check
from scidraft.bounds import INPUT_PATHS

from ..images.samples import image_bytes, png_claiming
from .harness import HOSTILE, assert_within, cases, fresh, measure, sizes

INPUT_PATH = "image-bytes"
PATH = INPUT_PATHS[INPUT_PATH]
LARGEST = 8192  # pixels a side: 67 megapixels, past IMAGE_UPLOAD_MAX_PIXELS
UNDER = 4898  # pixels a side just under it: images that are decoded


def _gif_frames(side: int) -> bytes:
    frames = [Image.new("P", (side, side), i % 255) for i in range(max(2, side // 64))]
    buffer = io.BytesIO()
    frames[0].save(buffer, "GIF", save_all=True, append_images=frames[1:])
    return buffer.getvalue()


def _header_only(kind: str, side: int) -> bytes:
    data = image_bytes(kind, (8, 8))
    return data[: len(data) // 2]


CASES = {
    "png bomb": lambda side: png_claiming(side, side),
    "rgba png bomb": lambda side: png_claiming(side, side, rgba=True),
    "interlaced png bomb": lambda side: png_claiming(side, side, interlaced=True),
    "png header only": lambda side: png_claiming(side, side, pixel_data=False),
    "jpeg": lambda side: image_bytes("JPEG", (min(side, UNDER), min(side, UNDER))),
    "gif frames": lambda side: _gif_frames(min(side, 1024)),
    "webp": lambda side: image_bytes("WEBP", (min(side, UNDER), min(side, UNDER))),
    "truncated jpeg": lambda side: _header_only("JPEG", side),
    "svg": lambda side: b"<?xml version='1.0'?>" + b"<!-- x -->" * side + b"<svg>",
}


@pytest.mark.slow
@HOSTILE
@given(case=cases(CASES), side=sizes(LARGEST, smallest=64))
def test_growing_hostile_images_are_checked_within_the_bounds(case, side):
    """Accepted or refused with a ValidationError, within the CPU and memory bounds."""
    data = CASES[case](side)
    measured = measure(image_check, data, refusals=(ValidationError,))
    assert measured.result or measured.refused
    assert_within(PATH, measured, f"{case} of {side} pixels a side ({len(data):,} bytes)")


@pytest.mark.slow
@pytest.mark.parametrize("case", ["rgba png bomb", "interlaced png bomb", "jpeg", "webp"])
def test_the_largest_hostile_images_are_checked_within_the_bounds(case):
    """Just under the pixel limit (4,898 pixels a side), within the bounds."""
    data = CASES[case](UNDER)
    measured = measure(image_check, data, refusals=(ValidationError,))
    assert_within(PATH, measured, f"{case} of {UNDER} pixels a side")


@pytest.mark.slow
@pytest.mark.parametrize("case", ["rgba png bomb", "jpeg", "gif frames", "webp"])
def test_the_largest_hostile_images_grow_a_fresh_process_within_the_bound(case):
    """In a new process, where no freed memory hides the decoder's, the largest images
    grow it within the memory bound."""
    measured = fresh(PATH, __name__, case, UNDER, warm=64)
    assert_within(PATH, measured, f"{case} of {UNDER} pixels a side, in a fresh process")
