"""Image files made on the fly for the upload tests (and the editor's permission matrix)."""

from __future__ import annotations

import io
import random
import struct
import zlib

from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image


def image_bytes(
    format: str, size: tuple[int, int] = (3, 2), color=(200, 30, 30), *, noise: bool = False
) -> bytes:
    """A valid image in Pillow's `format` (PNG, JPEG, GIF, WEBP, BMP…): one colour, or
    random pixels that do not compress (`noise`, the same on every run)."""
    if noise:
        pixels = random.Random(size[0] * size[1]).randbytes(size[0] * size[1] * 3)
        picture = Image.frombytes("RGB", size, pixels)
    else:
        picture = Image.new("RGB", size, color)
    buffer = io.BytesIO()
    picture.convert("P" if format == "GIF" else "RGB").save(buffer, format)
    return buffer.getvalue()


def upload(name: str, data: bytes, content_type: str = "image/png") -> SimpleUploadedFile:
    """A file as the browser sends it; the name and Content-Type are the client's claims."""
    return SimpleUploadedFile(name, data, content_type=content_type)


def png_upload(name: str = "figure.png") -> SimpleUploadedFile:
    return upload(name, image_bytes("PNG"))


def png_claiming(width: int, height: int, *, pixel_data: bool = True) -> bytes:
    """A grey PNG of width × height pixels, all black: a few kilobytes that decode into a huge
    bitmap (a decompression bomb). Without pixel data only the header makes the claim."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data)
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    rows = zlib.compress(b"\0" * ((width + 1) * (height if pixel_data else 1)), 9)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")
    )
