"""Checking an upload's pixels costs bounded memory.

A 91 KB PNG of 24 megapixels decoded into 96 MB, and 8 at once grew a worker by 770 MB: a PNG
is now checked as it is inflated, without a bitmap; a JPEG is decoded at an eighth of its
size; GIF and WebP are decoded one at a time; Pillow's own guard follows the pixel setting.
"""

from __future__ import annotations

import io
import os
import random
import struct
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from PIL import Image, ImageFile

from images import services
from images.services import image_check

from .samples import image_bytes, png_claiming

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def no_decoding(monkeypatch):
    """Fail the test if Pillow decodes any pixel data."""

    def refuse(self, *args, **kwargs):
        raise AssertionError(f"Pillow decoded a {self.format} of {self.size}")

    monkeypatch.setattr(ImageFile.ImageFile, "load", refuse)


@pytest.mark.parametrize("interlaced", [False, True], ids=["plain", "interlaced"])
def test_a_24_megapixel_png_is_accepted_without_being_decoded(no_decoding, interlaced):
    """The issue's file (91 KB, RGBA, just under 24 megapixels) is checked row by row as it
    is inflated: Pillow never builds its 96 MB bitmap."""
    data = png_claiming(6000, 3999, rgba=True, interlaced=interlaced)
    assert len(data) < 100 * 1024
    checked = image_check(data)
    assert (checked.format, checked.width, checked.height) == ("PNG", 6000, 3999)


def test_a_png_over_the_pixel_limit_is_refused_before_any_inflating(no_decoding, monkeypatch):
    """Over IMAGE_UPLOAD_MAX_PIXELS the header decides: neither Pillow nor the row check
    touches the pixel data."""
    monkeypatch.setattr(services, "_check_pixels", lambda *args: pytest.fail("pixels read"))
    with pytest.raises(ValidationError, match="30.0 megapixels"):
        image_check(png_claiming(6000, 5000, rgba=True))


def test_a_png_whose_rows_stop_early_is_refused_as_incomplete():
    """A well-formed stream with too few rows: damaged, whatever Pillow would have filled in."""
    width, height = 40, 30
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    rows = zlib.compress(b"\0" * ((width + 1) * (height - 1)))
    data = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", rows)
    with pytest.raises(ValidationError, match="damaged or incomplete"):
        image_check(data + _chunk(b"IEND", b""))


@pytest.mark.slow
def test_eight_large_uploads_at_once_do_not_grow_the_process():
    """8 threads checking a 24-megapixel PNG, in a fresh process: it grows by a few
    MB (it grew by 585 MB here, 770 MB in the report)."""
    script = """
import os, resource, sys, threading
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "scidraft.settings")
import django
django.setup()
from images.services import image_check
from tests.images.samples import png_claiming
data = png_claiming(6000, 3999, rgba=True)
image_check(data)  # imports and caches settle before the measurement
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
threads = [threading.Thread(target=image_check, args=(data,)) for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)
"""
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**_environment(), "DEBUG": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    grown_mb = int(result.stdout.split()[-1])
    assert grown_mb < 32, f"the process grew by {grown_mb} MB"


def _environment() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}


def test_pillows_own_guard_follows_the_setting(settings):
    """Pillow's MAX_IMAGE_PIXELS is IMAGE_UPLOAD_MAX_PIXELS from start-up, and follows it:
    any use of Pillow in the process refuses what the uploads refuse (above twice the limit,
    at open(), before reading pixels)."""
    assert Image.MAX_IMAGE_PIXELS == settings.IMAGE_UPLOAD_MAX_PIXELS
    settings.IMAGE_UPLOAD_MAX_PIXELS = 1_000
    with pytest.raises(ValidationError, match="too large to decode safely"):
        image_check(png_claiming(100, 100))  # 10,000 pixels: over twice the limit
    assert Image.MAX_IMAGE_PIXELS == 1_000
    with pytest.raises(Image.DecompressionBombError):
        Image.open(io.BytesIO(png_claiming(100, 100)))


def test_a_jpeg_is_decoded_at_an_eighth_of_its_size(monkeypatch):
    """Every block of a JPEG is decoded (a truncated one is refused), into a bitmap 64 times
    smaller than the picture."""
    decoded = []
    load = ImageFile.ImageFile.load

    def recording(self, *args, **kwargs):
        result = load(self, *args, **kwargs)
        decoded.append(self.size)
        return result

    monkeypatch.setattr(ImageFile.ImageFile, "load", recording)
    data = image_bytes("JPEG", size=(2400, 1600), noise=True)
    checked = image_check(data)
    assert (checked.width, checked.height) == (2400, 1600)
    assert decoded == [(300, 200)]
    with pytest.raises(ValidationError, match="damaged or incomplete"):
        image_check(data[: len(data) // 2])


def test_whole_decodes_run_one_at_a_time(monkeypatch):
    """GIF and WebP are decoded whole: concurrent uploads in one process take turns."""
    running, most = 0, 0
    lock = threading.Lock()
    load = ImageFile.ImageFile.load

    def counting(self, *args, **kwargs):
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.05)
        with lock:
            running -= 1
        return load(self, *args, **kwargs)

    monkeypatch.setattr(ImageFile.ImageFile, "load", counting)
    data = [image_bytes(format, size=(64, 64)) for format in ("GIF", "WEBP") * 3]
    threads = [threading.Thread(target=image_check, args=(item,)) for item in data]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most == services.DECODES_AT_ONCE == 1


# --- The PNG row check refuses what Pillow's decoder refuses ---------------------------------

_COMBINATIONS = [(0, 1), (0, 2), (0, 4), (0, 8), (0, 16), (2, 8), (2, 16), (3, 1), (3, 4)]
_COMBINATIONS += [(3, 8), (4, 8), (4, 16), (6, 8), (6, 16)]
_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2))
_ADAM7 += ((0, 1, 1, 2),)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _random_png(rnd: random.Random, damage: str) -> bytes:
    """A PNG of random rows (every colour type and depth, interlaced or not), damaged as
    `damage` says: a bad filter type, a broken stream, data after the rows, several IDATs."""
    colour, depth = rnd.choice(_COMBINATIONS)
    width, height, interlaced = rnd.randint(1, 30), rnd.randint(1, 30), rnd.random() < 0.5
    bits = depth * _CHANNELS[colour]
    raw = bytearray()
    for x0, y0, dx, dy in _ADAM7 if interlaced else ((0, 0, 1, 1),):
        columns, rows = -(-(width - x0) // dx), -(-(height - y0) // dy)
        for _ in range(rows if columns > 0 else 0):
            raw += bytes([rnd.randint(0, 4)]) + rnd.randbytes((columns * bits + 7) // 8)
    if damage == "filter":
        raw[0] = rnd.randint(5, 255)
    elif damage == "extra":
        raw += rnd.randbytes(rnd.randint(1, 50))
    stream = zlib.compress(bytes(raw), rnd.randint(0, 9))
    if damage == "stream":
        stream = stream[: rnd.randrange(2, len(stream))]
    header = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, int(interlaced))
    png = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
    if colour == 3:
        png += _chunk(b"PLTE", rnd.randbytes(768))
    cut = sorted(rnd.sample(range(len(stream) + 1), 2)) if damage == "split" else []
    for start, end in zip([0, *cut], [*cut, len(stream)], strict=True):
        png += _chunk(b"IDAT", stream[start:end])
    return png + _chunk(b"IEND", b"")


def _pillow_decodes(data: bytes) -> bool:
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
    except Exception:  # noqa: BLE001 - any failure is a refusal
        return False
    return True


def test_the_png_row_check_refuses_what_pillow_refuses():
    """On 600 PNGs, whole or damaged, the check without a bitmap agrees with Pillow's decoder."""
    rnd = random.Random(16)
    for number in range(600):
        damage = ("none", "filter", "stream", "extra", "split")[number % 5]
        data = _random_png(rnd, damage)
        try:
            services._check_png_data(data)
            checked = True
        except Exception:  # noqa: BLE001
            checked = False
        assert checked == _pillow_decodes(data), (number, damage)
