"""image_upload: images are checked by their content, stored in the note's folder under a name
of ours, and refused with a clear message otherwise."""

from __future__ import annotations

import hashlib
import io
import re

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.storage import default_storage
from PIL import Image

from images.models import NoteImage
from images.services import DAMAGED, NOT_AN_IMAGE, SVG_REFUSED, image_check, image_upload
from notes import services as note_services

from .samples import image_bytes, png_claiming, png_upload, upload

SVG_WITH_SCRIPT = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n'
    b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">'
    b'<script>alert(document.cookie)</script><rect width="10" height="10"/></svg>'
)
HTML_PAGE = b"<!doctype html><html><body><script>alert(document.cookie)</script></body></html>"


def stored_files(note) -> list[str]:
    folder = f"notes/{note.pk}"
    if not default_storage.exists(folder):
        return []
    return default_storage.listdir(folder)[1]


def refusal(note, user, file) -> str:
    with pytest.raises(ValidationError) as caught:
        image_upload(note_id=note.pk, user=user, uploaded_file=file)
    assert not NoteImage.objects.exists() and stored_files(note) == []  # nothing kept
    return " ".join(caught.value.messages)


@pytest.mark.parametrize(
    "format, extension, content_type",
    [
        ("PNG", "png", "image/png"),
        ("JPEG", "jpg", "image/jpeg"),
        ("GIF", "gif", "image/gif"),
        ("WEBP", "webp", "image/webp"),
    ],
)
def test_each_accepted_format_is_stored_under_its_hash_with_its_own_extension_and_type(
    author, note, format, extension, content_type
):
    """PNG, JPEG, GIF and WebP are kept byte for byte in notes/<id>/<hash>.<ext>, with the
    detected Content-Type and size, and the Markdown to insert points at them."""
    data = image_bytes(format, size=(5, 3))
    result = image_upload(
        note_id=note.pk, user=author, uploaded_file=upload("Heat map_2.bin", data, "x/unknown")
    )
    image = result.image
    digest = hashlib.sha256(data).hexdigest()
    assert result.created
    assert image.file.name == f"notes/{note.pk}/{digest[:32]}.{extension}"
    assert image.content_type == content_type
    assert (image.width, image.height, image.size) == (5, 3, len(data))
    assert image.sha256 == digest and image.uploaded_by == author
    assert image.original_name == "Heat map_2.bin"
    with default_storage.open(image.file.name) as stored:
        assert stored.read() == data
    assert result.markdown == f"![Heat map 2](/media/notes/{note.pk}/{digest[:32]}.{extension})"


def test_a_png_named_jpg_is_stored_as_png(author, note):
    """The extension comes from the content, never from the client's name or type."""
    result = image_upload(
        note_id=note.pk,
        user=author,
        uploaded_file=upload("photo.jpg", image_bytes("PNG"), "image/jpeg"),
    )
    assert result.image.file.name.endswith(".png")
    assert result.image.content_type == "image/png"


@pytest.mark.parametrize("name", ["x.png", "x.gif", "x.html"])
def test_an_html_page_named_like_an_image_is_refused(author, note, name):
    """HTML with a script is refused whatever its name and claimed type say."""
    message = refusal(note, author, upload(name, HTML_PAGE, "image/png"))
    assert message == NOT_AN_IMAGE


@pytest.mark.parametrize(
    "name, data",
    [
        ("drawing.svg", SVG_WITH_SCRIPT),
        ("drawing.png", SVG_WITH_SCRIPT),  # an SVG in disguise
        ("plain.svg", b'<svg xmlns="http://www.w3.org/2000/svg"><circle r="4"/></svg>'),
        ("upper.svg", b"\xef\xbb\xbf  <!-- made by hand -->\n<SVG width='1' height='1'></SVG>"),
    ],
)
def test_svg_is_refused_with_advice_to_export_as_png(author, note, name, data):
    """SVG, with or without a script and whatever its name, gets the SVG message."""
    assert refusal(note, author, upload(name, data, "image/svg+xml")) == SVG_REFUSED


def test_a_valid_gif_with_html_appended_is_kept_only_as_a_gif(author, note):
    """A GIF/HTML polyglot that is a real GIF is stored as .gif with Content-Type image/gif,
    so that it is only ever served as an image (the views test checks nosniff)."""
    polyglot = image_bytes("GIF") + HTML_PAGE
    result = image_upload(
        note_id=note.pk, user=author, uploaded_file=upload("page.html", polyglot, "text/html")
    )
    assert result.image.file.name.endswith(".gif")
    assert result.image.content_type == "image/gif"


@pytest.mark.parametrize(
    "data",
    [
        b"GIF89a<script>alert(document.cookie)</script>",
        b"GIF89a/*\x00\x00\x00\x00*/=alert(document.cookie);//",
        b"\x89PNG\r\n\x1a\n<html><script>alert(1)</script></html>",
    ],
    ids=["gif-header-html", "gif-header-js", "png-signature-html"],
)
def test_an_image_header_in_front_of_a_script_is_refused(author, note, data):
    """A file that only starts like an image, with HTML or JavaScript after the magic bytes,
    does not decode and is refused."""
    assert refusal(note, author, upload("trick.gif", data, "image/gif")) in {
        NOT_AN_IMAGE,
        DAMAGED,
    }


def test_a_truncated_image_is_refused_as_damaged(author, note):
    """Half a JPEG does not decode: a clear message, nothing stored."""
    data = image_bytes("JPEG", size=(64, 64), color=(10, 120, 200))
    assert refusal(note, author, upload("cut.jpg", data[: len(data) // 2])) == DAMAGED


def test_an_empty_file_is_refused(author, note):
    assert refusal(note, author, upload("empty.png", b"")) == "The file is empty."


def test_a_file_over_the_size_limit_is_refused_with_both_sizes(author, note, settings):
    """IMAGE_UPLOAD_MAX_BYTES bounds the upload; the message names the size and the limit."""
    settings.IMAGE_UPLOAD_MAX_BYTES = 1000
    data = image_bytes("PNG", size=(40, 40), noise=True)
    assert len(data) > 1000
    message = refusal(note, author, upload("big.png", data))
    assert re.search(
        r"The image is [\d.]+ (bytes|KB); the largest accepted is 1000 bytes\.", message
    )


def test_the_size_limit_does_not_trust_the_declared_size(author, note, settings):
    """A client that under-declares the size is still refused: at most limit + 1 bytes are
    read."""
    settings.IMAGE_UPLOAD_MAX_BYTES = 1000
    file = upload("big.png", image_bytes("PNG", size=(40, 40), noise=True))
    file.size = 10
    assert "the largest accepted is 1000 bytes" in refusal(note, author, file)


def test_an_image_of_more_pixels_than_the_limit_is_refused_before_decoding(author, note):
    """A 31 KB PNG that would decode into 30 megapixels is refused from its header, with its
    dimensions and the limit (IMAGE_UPLOAD_MAX_PIXELS, 24 megapixels by default)."""
    bomb = png_claiming(6000, 5000)
    assert len(bomb) < 64 * 1024
    message = refusal(note, author, upload("bomb.png", bomb))
    assert message.startswith("The image is 6000 × 5000 pixels (30.0 megapixels)")
    assert "the largest accepted is 24.0 megapixels" in message


def test_a_decompression_bomb_beyond_pillows_own_guard_is_refused(author, note):
    """A header claiming 10 gigapixels trips Pillow's DecompressionBombError at open: the
    same clear refusal."""
    message = refusal(
        note, author, upload("bomb.png", png_claiming(100_000, 100_000, pixel_data=False))
    )
    assert "too large to decode safely" in message
    assert "the largest accepted is 24.0 megapixels" in message


def test_the_pixel_limit_is_a_setting(author, note, settings):
    settings.IMAGE_UPLOAD_MAX_PIXELS = 100
    message = refusal(note, author, upload("wide.png", image_bytes("PNG", size=(20, 10))))
    assert message.startswith("The image is 20 × 10 pixels")


def test_the_stored_name_never_comes_from_the_clients_path(author, note):
    """A client name with a path (`../../`, a Windows path) neither leaves the note's folder
    nor names the file; only its last part is kept, as a label."""
    for name in ("../../../etc/passwd.png", "..\\..\\boot.ini.png", "/abs/path/x.png"):
        data = image_bytes("PNG", color=(len(name), 0, 0))
        image = image_upload(note_id=note.pk, user=author, uploaded_file=upload(name, data)).image
        assert re.fullmatch(rf"notes/{note.pk}/[0-9a-f]{{32}}\.png", image.file.name)
        assert "/" not in image.original_name and "\\" not in image.original_name
    assert sorted(NoteImage.objects.values_list("original_name", flat=True)) == [
        "boot.ini.png",
        "passwd.png",
        "x.png",
    ]


def test_each_note_has_its_own_folder(author, note):
    """The same picture in two notes is two files, each in its note's folder."""
    second = note_services.note_create(user=author, title="Wave equation")
    data = image_bytes("PNG")
    first_image = image_upload(note_id=note.pk, user=author, uploaded_file=upload("a.png", data))
    second_image = image_upload(note_id=second.pk, user=author, uploaded_file=upload("a.png", data))
    assert first_image.image.file.name.startswith(f"notes/{note.pk}/")
    assert second_image.image.file.name.startswith(f"notes/{second.pk}/")
    assert len(stored_files(note)) == len(stored_files(second)) == 1


def test_the_same_picture_twice_in_a_note_is_one_file(author, note):
    """Dropping an image again gives back the stored one (created False), no copy."""
    first = image_upload(note_id=note.pk, user=author, uploaded_file=png_upload("a.png"))
    again = image_upload(note_id=note.pk, user=author, uploaded_file=png_upload("b.png"))
    assert not again.created and again.image == first.image
    assert again.markdown == first.markdown
    assert len(stored_files(note)) == 1


def test_alt_text_from_a_hostile_name_cannot_break_the_markdown(author, note):
    """The alt text keeps letters, digits and spaces only: no `]`, `(`, `<` or newline from
    the client's name reaches the Markdown."""
    name = "x](javascript:alert(1)) <img src=x onerror=alert(1)>\n[.png"
    markdown = image_upload(
        note_id=note.pk, user=author, uploaded_file=upload(name, image_bytes("PNG"))
    ).markdown
    assert re.fullmatch(r"!\[[\w ]*\]\(/media/notes/\d+/[0-9a-f]{32}\.png\)", markdown)
    assert markdown.startswith("![x javascript alert 1 img src x onerror alert 1](")


def test_authors_and_editors_upload_into_notes_they_may_edit(editor_user, note):
    """An Editor may upload into any note (ARCHITECTURE "Roles")."""
    result = image_upload(note_id=note.pk, user=editor_user, uploaded_file=png_upload())
    assert result.image.uploaded_by == editor_user


@pytest.mark.parametrize("who", ["anonymous", "other author"])
def test_someone_who_may_not_edit_the_note_is_refused(other_author, note, who):
    """Anonymous users and other Authors get PermissionDenied; nothing is stored."""
    user = AnonymousUser() if who == "anonymous" else other_author
    with pytest.raises(PermissionDenied):
        image_upload(note_id=note.pk, user=user, uploaded_file=png_upload())
    assert not NoteImage.objects.exists() and stored_files(note) == []


def test_deleting_a_note_deletes_its_stored_images(
    author, note, django_capture_on_commit_callbacks
):
    """The files go once the deletion commits (a rolled-back delete keeps them)."""
    name = image_upload(note_id=note.pk, user=author, uploaded_file=png_upload()).image.file.name
    assert default_storage.exists(name)
    with django_capture_on_commit_callbacks(execute=True):
        note.delete()
    assert not NoteImage.objects.exists()
    assert not default_storage.exists(name)


def test_image_check_reports_format_and_dimensions():
    """image_check alone (no storage): what the bytes are."""
    checked = image_check(image_bytes("WEBP", size=(7, 4)))
    assert (checked.format, checked.extension, checked.content_type) == (
        "WEBP",
        "webp",
        "image/webp",
    )
    assert (checked.width, checked.height) == (7, 4)


def test_a_phone_jpeg_with_extra_pictures_is_a_jpeg(author, note):
    """Pillow calls a JPEG with a second picture (MPO, as phones write) "MPO": stored as .jpg
    with image/jpeg, not refused or crashed on."""
    buffer = io.BytesIO()
    first, second = Image.new("RGB", (4, 4), "red"), Image.new("RGB", (4, 4), "blue")
    first.save(buffer, "MPO", save_all=True, append_images=[second])
    image = image_upload(
        note_id=note.pk, user=author, uploaded_file=upload("IMG_0001.JPG", buffer.getvalue())
    ).image
    assert image.file.name.endswith(".jpg") and image.content_type == "image/jpeg"


@pytest.mark.parametrize("format", ["BMP", "TIFF", "ICO", "PPM"])
def test_other_raster_formats_are_refused(author, note, format):
    """Only PNG, JPEG, GIF and WebP are accepted, even when Pillow could read the file."""
    assert refusal(note, author, upload(f"x.{format.lower()}", image_bytes(format))) == NOT_AN_IMAGE
