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


def png_claiming(
    width: int, height: int, *, pixel_data: bool = True, rgba: bool = False, interlaced=False
) -> bytes:
    """A PNG of width × height pixels, all black (grey, or `rgba`): a few kilobytes that decode
    into a huge bitmap (a decompression bomb; 24 megapixels of RGBA are 96 MB). Without pixel
    data only the header makes the claim. The rows are compressed a piece at a time, so the
    test never holds the bitmap either."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data)
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    channels, colour = (4, 6) if rgba else (1, 0)
    header = struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 1 if interlaced else 0)
    if interlaced:
        passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4)]
        passes += [(1, 0, 2, 2), (0, 1, 1, 2)]
        sizes = [(-(-(width - x) // dx), -(-(height - y) // dy)) for x, y, dx, dy in passes]
        rows = [(w, h) for w, h in sizes if w > 0 and h > 0]
    else:
        rows = [(width, height if pixel_data else 1)]
    packer = zlib.compressobj(9)
    compressed = []
    for pass_width, pass_height in rows:
        row = b"\0" * (pass_width * channels + 1)
        for start in range(0, pass_height, 4096):
            compressed.append(packer.compress(row * min(4096, pass_height - start)))
    compressed.append(packer.flush())
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", b"".join(compressed))
        + chunk(b"IEND", b"")
    )
