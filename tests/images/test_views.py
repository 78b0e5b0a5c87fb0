"""The image upload endpoint of the editor and the admin, and the serving of stored
images (nosniff, the checked Content-Type, inline under a safe name)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.test import Client
from django.urls import reverse

from images.models import NoteImage
from images.services import SVG_REFUSED, image_upload

from .samples import image_bytes, png_upload, upload

SCRIPTS = Path(__file__).resolve().parents[2] / "static" / "js"
HTML_PAGE = b"<!doctype html><html><body><script>alert(document.cookie)</script></body></html>"


def upload_url(note) -> str:
    return reverse("editor:image_upload", kwargs={"note_id": note.pk})


def post_image(client, note, file, **extra):
    return client.post(upload_url(note), {"image": file}, headers=extra or None)


@pytest.fixture
def author_client(author):
    client = Client()
    client.force_login(author)
    return client


# --- Upload: the file in `image`, the Markdown back in `image_code` ----------------------------


def test_the_scripts_speak_the_protocol_the_endpoint_answers():
    """The editor's and the admin's scripts post the file as `image` and read `image_code` and
    the refusal's `image` messages from the JSON."""
    for name in ("image-upload.js", "admin-preview.js"):
        script = (SCRIPTS / name).read_text()
        assert '.append("image", file)' in script, name
        assert ".image_code" in script and "data.image.join" in script, name


def test_an_upload_answers_image_code_with_the_markdown(author_client, note):
    """The file in the `image` field, as the scripts' drag-and-drop and paste send it (an XHR
    with the CSRF token), gives `{"image_code": "![…](url)"}`."""
    response = post_image(
        author_client, note, png_upload("Phase portrait.png"), X_Requested_With="XMLHttpRequest"
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    data = response.json()
    image = NoteImage.objects.get()
    assert data["image_code"] == f"![Phase portrait]({image.url})"
    assert data["url"] == image.url == f"/media/{image.file.name}"
    assert (data["width"], data["height"], data["created"]) == (3, 2, True)
    assert "no-store" in response["Cache-Control"]


def test_a_refused_upload_answers_with_its_messages(author_client, note):
    """A refusal is status 400 with `{"image": [message]}`, which the scripts show."""
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
    response = post_image(author_client, note, upload("x.svg", svg, "image/svg+xml"))
    assert response.status_code == 400
    assert response.json() == {"image": [SVG_REFUSED]}
    assert not NoteImage.objects.exists()


def test_an_upload_without_a_file_is_refused_clearly(author_client, note):
    response = author_client.post(upload_url(note), {"other": "x"})
    assert response.status_code == 400
    assert response.json() == {"image": ["Choose an image file to upload."]}


def test_an_oversize_upload_is_refused_while_it_is_read(author_client, note, settings):
    """The upload handler drops the file once it passes IMAGE_UPLOAD_MAX_BYTES (so it is
    neither kept in memory nor spooled to disk); the message names the limit."""
    settings.IMAGE_UPLOAD_MAX_BYTES = 2048
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 0  # every upload would go to a temporary file
    big = image_bytes("PNG", size=(64, 64), noise=True)
    response = post_image(author_client, note, upload("big.png", big))
    assert response.status_code == 400
    assert response.json() == {
        "image": [
            "The image is over 2.0 KB; the largest accepted is 2.0 KB. "
            "Compress it or scale it down and upload it again."
        ]
    }
    assert not NoteImage.objects.exists()


def test_the_upload_is_post_only(author_client, note):
    assert author_client.get(upload_url(note)).status_code == 405


def test_anonymous_uploads_go_to_the_login_page(client, note):
    response = post_image(client, note, png_upload())
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    assert not NoteImage.objects.exists()


def test_another_authors_upload_is_not_found(other_author, note):
    """An Author who may not edit the note gets 404, as for every editor URL; nothing kept."""
    client = Client()
    client.force_login(other_author)
    assert post_image(client, note, png_upload()).status_code == 404
    assert not NoteImage.objects.exists()


def test_an_editor_may_upload_into_any_note(editor_user, note):
    client = Client()
    client.force_login(editor_user)
    assert post_image(client, note, png_upload()).status_code == 200


def test_an_upload_without_the_csrf_token_is_refused(author, note):
    """CSRF applies, before anything else (as the middleware does for every other POST):
    admin-preview.js and image-upload.js send the token; a forged form does not."""
    anonymous = Client(enforce_csrf_checks=True)
    assert post_image(anonymous, note, png_upload()).status_code == 403
    client = Client(enforce_csrf_checks=True)
    client.force_login(author)
    assert post_image(client, note, png_upload()).status_code == 403
    client.get(reverse("editor:edit", kwargs={"note_id": note.pk}))  # sets the CSRF cookie
    token = client.cookies["csrftoken"].value
    assert post_image(client, note, png_upload(), X_CSRFToken=token).status_code == 200


# --- Serving ------------------------------------------------------------------------------------


def test_a_stored_image_is_served_with_nosniff_its_type_and_an_inline_safe_name(
    author_client, author, note
):
    """/media/<name>: the bytes with the checked Content-Type, `nosniff`, `inline` under the
    client's name made safe, and a policy under which nothing in the file could run."""
    data = image_bytes("JPEG", size=(8, 8))
    name = 'Résumé "quoted"; <b>.png'
    image = image_upload(note_id=note.pk, user=author, uploaded_file=upload(name, data)).image
    response = author_client.get(image.url)
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == data
    assert response["Content-Type"] == "image/jpeg"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Disposition"] == 'inline; filename="resume-quoted-b.jpg"'
    policy = response["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "sandbox" in policy
    assert "script-src" not in policy
    assert response["Content-Length"] == str(len(data))


def test_a_gif_html_polyglot_is_served_only_as_a_gif(author_client, author, note):
    """The polyglot that is a real GIF goes out as image/gif with nosniff: no browser reads
    it as a page or a script."""
    polyglot = image_bytes("GIF") + HTML_PAGE
    image = image_upload(
        note_id=note.pk, user=author, uploaded_file=upload("x.html", polyglot, "text/html")
    ).image
    response = author_client.get(image.url)
    assert response["Content-Type"] == "image/gif"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Disposition"].startswith("inline; filename=")
    assert response["Content-Disposition"].endswith('.gif"')


def test_head_is_answered_too(author_client, author, note):
    image = image_upload(note_id=note.pk, user=author, uploaded_file=png_upload()).image
    response = author_client.head(image.url)
    assert response.status_code == 200 and response["Content-Type"] == "image/png"


def test_only_files_recorded_as_note_images_are_served(client, note):
    """A file in the storage with no NoteImage row (whatever put it there) is a 404, and so
    is a path that tries to climb out of MEDIA_ROOT."""
    stored = default_storage.save(f"notes/{note.pk}/planted.html", ContentFile(HTML_PAGE))
    assert client.get(f"/media/{stored}").status_code == 404
    assert client.get("/media/../scidraft/settings.py").status_code == 404
    assert client.get("/media/%2e%2e/scidraft/settings.py").status_code == 404


def test_a_row_whose_file_is_gone_is_a_404(author_client, author, note):
    image = image_upload(note_id=note.pk, user=author, uploaded_file=png_upload()).image
    default_storage.delete(image.file.name)
    assert author_client.get(image.url).status_code == 404


def test_media_is_read_only(client, author, note):
    image = image_upload(note_id=note.pk, user=author, uploaded_file=png_upload()).image
    assert client.post(image.url).status_code == 405


# --- The editor page -----------------------------------------------------------------------------


def test_the_editor_wires_the_body_and_the_button_to_the_upload_endpoint(author_client, note):
    """The body's `data-upload-url` (drag-and-drop, paste into the editor) and the "Insert
    image" block both name the note's upload URL; the script is loaded."""
    response = author_client.get(reverse("editor:edit", kwargs={"note_id": note.pk}))
    html = response.content.decode()
    url = upload_url(note)
    assert f'data-upload-url="{url}"' in html
    assert f'class="image-upload" data-upload-url="{url}"' in html
    assert "Insert image" in html
    assert re.search(r'<script src="/static/js/image-upload\.js" defer>', html)


def test_the_editor_lists_the_notes_images_with_their_markdown(author_client, author, note):
    """The images panel shows each image of the note and the Markdown that inserts it."""
    image = image_upload(
        note_id=note.pk, user=author, uploaded_file=png_upload("Energy plot.png")
    ).image
    response = author_client.get(reverse("editor:edit", kwargs={"note_id": note.pk}))
    html = response.content.decode()
    assert f"<code>![Energy plot]({image.url})</code>" in html
    assert f'<img src="{image.url}" alt="" width="64" loading="lazy">' in html
    assert 'Images of this note (<span class="image-upload-count">1</span>)' in html


def test_the_site_policy_lets_pages_show_images_from_the_site(author_client, note):
    """The CSP of the editor (and every page) allows img-src 'self', where /media/ is."""
    response = author_client.get(reverse("editor:edit", kwargs={"note_id": note.pk}))
    directives = dict(
        part.strip().split(" ", 1) for part in response["Content-Security-Policy"].split(";")
    )
    assert "'self'" in directives["img-src"].split()


def test_an_uploaded_image_renders_in_the_preview(author_client, author, note):
    """The inserted Markdown survives the renderer and sanitiser as an <img> of the file."""
    markdown = image_upload(note_id=note.pk, user=author, uploaded_file=png_upload("fig.png"))
    response = author_client.post(
        reverse("editor:preview", kwargs={"note_id": note.pk}), {"content": markdown.markdown}
    )
    assert f'src="{markdown.image.url}"' in response.content.decode()
    assert 'alt="fig"' in response.content.decode()


def test_upload_json_is_parseable_whatever_the_status(author_client, note):
    """The scripts parse the body whatever the status: every answer is JSON."""
    for file in (png_upload(), upload("x.png", HTML_PAGE)):
        response = post_image(author_client, note, file)
        assert isinstance(json.loads(response.content), dict)


@pytest.mark.django_db
def test_imported_hugo_bundle_resources_are_served_under_media_with_nosniff(client, settings):
    """Page-bundle images of an imported Hugo site live at /media/hugo/bundles/…: served by the
    app too (runserver, gunicorn alone), only when recorded, never sniffed as a page."""
    from pathlib import Path

    from hugosite.models import HugoAsset

    asset = HugoAsset.objects.create(kind=HugoAsset.Kind.BUNDLE, path="notes/demo/fig.png")
    target = Path(settings.MEDIA_ROOT) / asset.storage_name
    target.parent.mkdir(parents=True)
    target.write_bytes(b"\x89PNG\r\n\x1a\n")
    response = client.get("/media/hugo/bundles/notes/demo/fig.png")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert b"".join(response.streaming_content).startswith(b"\x89PNG")
    assert client.get("/media/hugo/bundles/notes/demo/other.png").status_code == 404
    (target.parent / "unrecorded.html").write_text("<script>alert(1)</script>")
    assert client.get("/media/hugo/bundles/notes/demo/unrecorded.html").status_code == 404


# --- Who may load an image: a draft's only those who may edit it ---------------------------------

MEDIA_VIEWERS = ("anonymous", "unrelated author", "co-author", "editor")


@pytest.fixture
def viewers(author, other_author, editor_user):
    """A client per role; the co-author (Bert) is put on each note by `image_in_note`."""
    from tests.people import user_in_group

    users = {
        "anonymous": None,
        "unrelated author": user_in_group("carol", "Author"),
        "co-author": other_author,
        "editor": editor_user,
    }
    clients = {}
    for role, user in users.items():
        clients[role] = Client()
        if user is not None:
            clients[role].force_login(user)
    return clients


def image_in_note(author, other_author, editor_user, *, state: str):
    """A note of Ada's with Bert as co-author and an image its body shows, in `state`: a
    draft, published, scheduled (published, due tomorrow), or published with the image only
    in its unpublished changes."""
    import datetime as dt

    from django.utils import timezone

    from notes import services
    from tests.factories import draft_note, note_image, publish, write

    note = draft_note(author, f"A {state} note")
    image = note_image(note, author)
    handles = [author.author.handle, services.author_for_user(other_author).handle]
    body = f"Text.\n\n{image.markdown}"
    fields = {"authors": handles, "body": "Text." if state == "changes" else body}
    if state == "scheduled":
        fields["date"] = timezone.now() + dt.timedelta(days=1)
    note = write(note, editor_user, **fields)
    if state != "draft":
        note = publish(note, author)
    if state == "changes":
        note = write(note, author, body=body)
    return image


# state → role → (status, Cache-Control)
PRIVATE = (200, "private, no-store")
PUBLIC = (200, "public, max-age=604800")
HIDDEN = (404, None)
MEDIA_RULES = {
    "draft": {"anonymous": HIDDEN, "unrelated author": HIDDEN, "co-author": PRIVATE,
              "editor": PRIVATE},
    "scheduled": {"anonymous": HIDDEN, "unrelated author": HIDDEN, "co-author": PRIVATE,
                  "editor": PRIVATE},
    "changes": {"anonymous": HIDDEN, "unrelated author": HIDDEN, "co-author": PRIVATE,
                "editor": PRIVATE},
    "published": {"anonymous": PUBLIC, "unrelated author": PUBLIC, "co-author": PUBLIC,
                  "editor": PUBLIC},
}  # fmt: skip


def test_a_drafts_images_are_served_only_to_those_who_may_edit_it(
    author, other_author, editor_user, viewers
):
    """Matrix of note state × role: an image is public (cached) only when the live version of
    a published, due note shows it; a draft's, a scheduled note's and one only unpublished
    changes use go to the note's authors and Editors as `private, no-store`, and are a 404 to
    everyone else."""
    failures = []
    for state, rules in MEDIA_RULES.items():
        image = image_in_note(author, other_author, editor_user, state=state)
        for role, (status, cache_control) in rules.items():
            response = viewers[role].get(image.url)
            got = (response.status_code, response.get("Cache-Control"))
            if response.status_code == 404:
                got = (404, None)
            else:
                assert b"".join(response.streaming_content)[:4] == b"\x89PNG"
            if got != (status, cache_control):
                failures.append(f"{state} as {role}: {got}")
    assert not failures, "\n".join(failures)


def test_an_image_stops_being_public_when_its_note_is_unpublished(
    author, other_author, editor_user, viewers
):
    """Unpublishing takes the image back with the note: anonymous readers get a 404."""
    from notes import services
    from notes.models import Note

    image = image_in_note(author, other_author, editor_user, state="published")
    assert viewers["anonymous"].get(image.url).status_code == 200
    note = Note.objects.get(pk=image.note_id)
    services.note_unpublish(note_id=note.pk, user=author, base_version=note.version)
    assert viewers["anonymous"].get(image.url).status_code == 404
    assert viewers["co-author"].get(image.url)["Cache-Control"] == "private, no-store"


def test_behind_nginx_a_permitted_image_is_sent_by_nginx(
    author, other_author, editor_user, viewers, settings
):
    """With MEDIA_ACCEL_REDIRECT the app decides and answers with X-Accel-Redirect to nginx's
    internal location, with the type, safe name and Cache-Control nginx keeps; a refused
    request gets no redirect."""
    settings.MEDIA_ACCEL_REDIRECT = "/internal-media/"
    image = image_in_note(author, other_author, editor_user, state="draft")
    response = viewers["co-author"].get(image.url)
    assert response.status_code == 200 and response.content == b""
    assert response["X-Accel-Redirect"] == f"/internal-media/{image.file.name}"
    assert response["Content-Type"] == "image/png"
    assert response["Cache-Control"] == "private, no-store"
    assert response["Content-Disposition"] == f'inline; filename="{image.download_name}"'
    refused = viewers["anonymous"].get(image.url)
    assert refused.status_code == 404 and "X-Accel-Redirect" not in refused


@pytest.mark.parametrize("accel", ["", "/internal-media/"])
def test_with_a_bucket_images_are_addressed_on_the_site_and_a_drafts_stay_private(
    author, other_author, editor_user, viewers, settings, accel
):
    """A storage with public URLs of its own (a bucket: here Django's in-memory storage with
    a bucket's address): the editor inserts the site's address, so a draft's image is read
    from the storage by the app for its authors only; a bucket's URL never reaches the page.
    nginx's internal location holds the volume's files, not the bucket's: not used."""
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "django.core.files.storage.InMemoryStorage",
            "OPTIONS": {"base_url": "https://bucket.example/"},
        },
    }
    settings.MEDIA_ACCEL_REDIRECT = accel
    image = image_in_note(author, other_author, editor_user, state="draft")
    assert image.url.startswith("/media/") and "bucket.example" not in image.markdown
    assert image.file.url.startswith("https://bucket.example/")
    assert viewers["anonymous"].get(image.url).status_code == 404
    response = viewers["co-author"].get(image.url)
    assert response.status_code == 200 and response["Cache-Control"] == "private, no-store"
    assert b"".join(response.streaming_content)[:4] == b"\x89PNG"
