"""Image uploads into a note: checked by content, stored in the note's folder.

The client's file name and Content-Type are never trusted: Pillow
must recognise the bytes as PNG, JPEG, GIF or WebP and decode them; the stored name is the
content hash with the extension of the detected format, and the Content-Type served later is
the detected one. SVG is refused: it is a document that can carry scripts.

Decoding is bounded (a 91 KB PNG of 24 megapixels decodes into 96 MB, and 8 at
once grew a worker by 770 MB). The pixel count is read from the header and refused above
IMAGE_UPLOAD_MAX_PIXELS before anything is decoded, with Pillow's own decompression-bomb guard
set to the same number. A PNG's pixel data is then checked as it is inflated, a piece at a
time, without a bitmap; a JPEG is decoded at an eighth of its size; GIF and WebP, which
Pillow can only decode whole, are decoded one at a time per process (DECODES_AT_ONCE).
"""

from __future__ import annotations

import hashlib
import io
import re
import struct
import threading
import zlib
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.base import ContentFile
from django.db import IntegrityError, transaction
from django.template.defaultfilters import filesizeformat
from PIL import Image, UnidentifiedImageError

from notes.models import Note
from scidraft.bounds import input_path

from .models import FORMATS, NoteImage

SVG_REFUSED = "SVG is not accepted: export as PNG."
NOT_AN_IMAGE = (
    "This file is not a PNG, JPEG, GIF or WebP image (its content was checked, not its name)."
)
DAMAGED = "This image is damaged or incomplete: it could not be decoded."
# SVG is XML: its opening tag comes within the first bytes, after an XML declaration,
# comments or a doctype.
_SVG_TAG = re.compile(rb"<svg[\s>/]", re.I)
# Pillow names JPEG files that carry more pictures (phones' MPO: stereo pairs, depth maps)
# "MPO"; they are JPEGs, and browsers show the first picture.
_SAME_AS = {"MPO": "JPEG"}
# Whole decodes (GIF, WebP; a progressive JPEG's coefficients) a process runs at a time: each
# may take width × height × 4 bytes, so concurrent uploads queue instead of adding up.
DECODES_AT_ONCE = 1
_decoding = threading.BoundedSemaphore(DECODES_AT_ONCE)
# Inflated PNG data looked at a time.
_PNG_PIECE = 1 << 16


@dataclass(frozen=True)
class CheckedImage:
    format: str  # Pillow's name: PNG, JPEG, GIF, WEBP
    extension: str
    content_type: str
    width: int
    height: int


@dataclass(frozen=True)
class ImageUploadResult:
    image: NoteImage
    markdown: str
    created: bool


def _size(count: int) -> str:
    return filesizeformat(count).replace("\xa0", " ")


def too_large(limit: int, size: int | None = None) -> ValidationError:
    found = _size(size) if size is not None else f"over {_size(limit)}"
    return ValidationError(
        f"The image is {found}; the largest accepted is {_size(limit)}. "
        "Compress it or scale it down and upload it again."
    )


def _too_many_pixels(limit: int, width: int | None = None, height: int | None = None):
    found = (
        f"{width} × {height} pixels ({width * height / 1e6:.1f} megapixels)"
        if width is not None and height is not None
        else "too large to decode safely"
    )
    return ValidationError(
        f"The image is {found}; the largest accepted is {limit / 1e6:.1f} megapixels. "
        "Scale it down and upload it again."
    )


@input_path("image-bytes")
def image_check(data: bytes) -> CheckedImage:
    """What the bytes are, by content only; ValidationError with a clear message otherwise."""
    if not data:
        raise ValidationError("The file is empty.")
    if _SVG_TAG.search(data[:4096]):
        raise ValidationError(SVG_REFUSED)
    limit = settings.IMAGE_UPLOAD_MAX_PIXELS
    allowed = list(FORMATS)
    try:
        # open() reads the header only: the pixel count is checked before anything is decoded
        # (and Pillow's own guard, set from the same setting, refuses more at open()).
        pillow_limit(limit)
        with Image.open(io.BytesIO(data), formats=allowed) as probe:
            found = _SAME_AS.get(probe.format, probe.format)
            width, height = probe.size
            if found not in FORMATS:
                raise ValidationError(NOT_AN_IMAGE)
            if width * height > limit:
                raise _too_many_pixels(limit, width, height)
            probe.verify()
        # verify() only checks structure (PNG checksums); the pixel data is checked too, to
        # find truncated or corrupt images, in bounded memory.
        _check_pixels(data, found, width, height)
    except ValidationError:
        raise
    except Image.DecompressionBombError:
        # Pillow's own guard, raised by open() itself beyond twice Image.MAX_IMAGE_PIXELS.
        raise _too_many_pixels(limit) from None
    except UnidentifiedImageError:
        raise ValidationError(NOT_AN_IMAGE) from None
    except Exception:
        # Pillow's decoders fail on hostile input with many exception types (OSError,
        # SyntaxError, struct.error, IndexError…): any failure means the file is refused.
        raise ValidationError(DAMAGED) from None
    extension, content_type = FORMATS[found]
    return CheckedImage(found, extension, content_type, width, height)


def pillow_limit(pixels: int) -> None:
    """Pillow's decompression-bomb guard at `pixels`, for every use of Pillow in the process:
    it warns above, and refuses at open() above twice as many."""
    Image.MAX_IMAGE_PIXELS = pixels


def _check_pixels(data: bytes, found: str, width: int, height: int) -> None:
    """Raise if the first picture's pixel data is truncated or corrupt, holding at most a
    fraction of its bitmap (see the module docstring)."""
    if found == "PNG":
        _check_png_data(data)
        return
    with _decoding, Image.open(io.BytesIO(data), formats=[found]) as image:
        if found == "JPEG":
            # libjpeg decodes every block, scaled down by 8 in each direction.
            image.draft(image.mode, (max(1, width // 8), max(1, height // 8)))
        image.load()


# Adam7: the seven passes of an interlaced PNG, as (x0, y0, dx, dy).
_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2))
_ADAM7 += ((0, 1, 1, 2),)
_PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def _check_png_data(data: bytes) -> None:
    """Inflate the image data (the IDAT chunks) a piece at a time and check it is complete,
    with a valid filter type at the start of every row, as Pillow's decoder would; nothing
    is kept but counters. verify() has checked the chunks and their checksums."""
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", data[16:29])
    bits = depth * _PNG_CHANNELS[colour]
    passes = _ADAM7 if interlace else ((0, 0, 1, 1),)
    rows = []  # (offset of the first row in the inflated data, bytes per row with its filter)
    offset = 0
    for x0, y0, dx, dy in passes:
        columns, count = -(-(width - x0) // dx), -(-(height - y0) // dy)
        if columns <= 0 or count <= 0:
            continue
        stride = 1 + (columns * bits + 7) // 8
        rows.append((offset, stride, count))
        offset += stride * count
    expected = offset

    inflater = zlib.decompressobj()
    seen = 0

    def take(piece: bytes) -> None:
        nonlocal seen
        end = min(seen + len(piece), expected)
        for first, stride, count in rows:
            last = first + stride * (count - 1)
            if last < seen or first >= end:
                continue
            start = first + max(0, -(-(seen - first) // stride)) * stride
            filters = piece[start - seen : min(end, last + 1) - seen : stride]
            if filters and max(filters) > 4:
                raise ValueError("invalid PNG filter type")
        seen += len(piece)

    # Like Pillow's decoder, no more is inflated than the rows need: what follows them (the
    # stream's checksum, stray data) is not looked at.
    position = 8
    while position + 8 <= len(data) and seen < expected:
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        if kind == b"IEND":
            break
        if kind == b"IDAT":
            pending = data[position + 8 : position + 8 + length]
            while seen < expected and not inflater.eof:
                piece = inflater.decompress(pending, min(_PNG_PIECE, expected - seen))
                if not piece:
                    break  # this chunk is used up
                take(piece)
                pending = inflater.unconsumed_tail
        position += 12 + length
    if seen < expected:
        raise ValueError("truncated PNG image data")


def _read_limited(uploaded_file) -> bytes:
    """The upload's bytes, refusing more than IMAGE_UPLOAD_MAX_BYTES (without trusting the
    declared size: at most one byte past the limit is read)."""
    limit = settings.IMAGE_UPLOAD_MAX_BYTES
    declared = getattr(uploaded_file, "size", None) or 0
    if declared <= limit:
        uploaded_file.seek(0)
        data = uploaded_file.read(limit + 1)
        declared = len(data)
    if declared > limit:
        raise too_large(limit, declared)
    return data


def image_upload(*, note_id: int, user, uploaded_file) -> ImageUploadResult:
    """Check an uploaded image and store it in the note's folder; the Markdown to insert.

    PermissionDenied if `user` may not edit the note; ValidationError (a message for the
    author) if the file is too large, not an accepted image, or damaged. The same picture
    uploaded again into the same note gives back the stored one.
    """
    if not Note.objects.editable_by(user).filter(pk=note_id).exists():
        raise PermissionDenied("You may not edit this note.")
    data = _read_limited(uploaded_file)
    checked = image_check(data)
    digest = hashlib.sha256(data).hexdigest()
    existing = NoteImage.objects.filter(note_id=note_id, sha256=digest).first()
    if existing is not None:
        return ImageUploadResult(existing, existing.markdown, created=False)
    original = (getattr(uploaded_file, "name", "") or "").replace("\\", "/").rsplit("/", 1)[-1]
    image = NoteImage(
        note_id=note_id,
        original_name=original[:255],
        content_type=checked.content_type,
        width=checked.width,
        height=checked.height,
        size=len(data),
        sha256=digest,
        uploaded_by=user,
    )
    content = ContentFile(data)
    # Object stores (django-storages) take the stored Content-Type from this attribute.
    content.content_type = checked.content_type
    image.file.save(f"{digest[:32]}.{checked.extension}", content, save=False)
    try:
        with transaction.atomic():
            image.full_clean(validate_unique=False, validate_constraints=False)
            image.save()
    except IntegrityError:
        # The same picture arrived twice at once: keep the row that won.
        image.file.delete(save=False)
        existing = NoteImage.objects.get(note_id=note_id, sha256=digest)
        return ImageUploadResult(existing, existing.markdown, created=False)
    except BaseException:
        image.file.delete(save=False)
        raise
    return ImageUploadResult(image, image.markdown, created=True)
