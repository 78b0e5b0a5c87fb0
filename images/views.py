"""Upload (the editor's and the admin's) and serving of note images."""

from __future__ import annotations

import mimetypes

from csp.decorators import csp
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.files.storage import FileSystemStorage, default_storage
from django.core.files.uploadhandler import FileUploadHandler, SkipFile
from django.http import FileResponse, Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404
from django.utils.http import content_disposition_header
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_POST, require_safe

from hugosite.models import HugoAsset
from notes.models import Note

from .models import NoteImage
from .services import image_upload, too_large

# A stored image is never a page: nothing in it may run, even opened on its own.
MEDIA_POLICY = {
    "default-src": ["'none'"],
    "img-src": ["'self'"],
    "style-src": ["'unsafe-inline'"],
    "sandbox": [""],
}
MEDIA_MAX_AGE = 7 * 24 * 60 * 60  # as deploy/nginx.conf's `expires 7d`


class SizeLimit(FileUploadHandler):
    """Skips a file once it passes IMAGE_UPLOAD_MAX_BYTES: an oversize upload then costs
    neither memory nor temporary disk (Django spools large uploads to disk), only reading."""

    def __init__(self, request=None):
        super().__init__(request)
        self.limit = settings.IMAGE_UPLOAD_MAX_BYTES
        self.exceeded = False

    def receive_data_chunk(self, raw_data, start):
        if start + len(raw_data) > self.limit:
            self.exceeded = True
            raise SkipFile
        return raw_data

    def file_complete(self, file_size):
        return None  # the next handlers build the file


@csrf_exempt  # CSRF is checked by csrf_protect below, once the size limit is in place
@never_cache
def upload(request, note_id: int):
    """The file in the `image` field; `{"image_code": "![…](…)"}` on success,
    `{"image": ["message"]}` with status 400 otherwise (the editor's image-upload.js and the
    admin's admin-preview.js read both)."""
    # Upload handlers can only change before the body is read, which the CSRF middleware
    # would do: the Django documentation's pattern (csrf_exempt outside, csrf_protect inside).
    limit = SizeLimit(request)
    request.upload_handlers.insert(0, limit)
    return _upload(request, note_id, limit)


@csrf_protect
@login_required
@require_POST
def _upload(request, note_id: int, limit: SizeLimit):
    note = get_object_or_404(Note.objects.editable_by(request.user), pk=note_id)
    uploaded = request.FILES.get("image")
    if uploaded is None:
        if limit.exceeded:
            return JsonResponse({"image": too_large(limit.limit).messages}, status=400)
        return JsonResponse({"image": ["Choose an image file to upload."]}, status=400)
    try:
        result = image_upload(note_id=note.pk, user=request.user, uploaded_file=uploaded)
    except ValidationError as error:
        return JsonResponse({"image": error.messages}, status=400)
    image = result.image
    return JsonResponse(
        {
            "image_code": result.markdown,
            "url": image.url,
            "width": image.width,
            "height": image.height,
            "created": result.created,
        }
    )


@require_safe
@csp(MEDIA_POLICY)
def media(request, name: str):
    """A stored note image from the default storage. Only files recorded as NoteImage rows,
    with the type Pillow detected at upload, `nosniff` so that no browser reads them as HTML or
    script, and inline under a safe name. To anyone when the live version of a published, due
    note shows it (cached publicly); else only to those who may edit the note, never cached by
    others; a 404 to everyone else. Behind nginx (MEDIA_ACCEL_REDIRECT) nginx sends the bytes
    once this view has decided."""
    image = NoteImage.objects.stored_as(name).first()
    if image is None:
        return _hugo_asset(name)
    shown = NoteImage.objects.filter(pk=image.pk)
    if shown.public().exists():
        cache_control = f"public, max-age={MEDIA_MAX_AGE}"
    elif shown.editable_by(request.user).exists():
        # A draft's image, to its authors and Editors: kept by no shared cache, and gone from
        # the browser's once they sign out or leave the note.
        cache_control = "private, no-store"
    else:
        raise Http404("No such image.")  # as for a missing one: nothing says it exists
    if settings.MEDIA_ACCEL_REDIRECT and isinstance(image.file.storage, FileSystemStorage):
        response = _accel_redirect(image)
    else:
        try:
            handle = image.file.storage.open(image.file.name, "rb")
        except FileNotFoundError:
            raise Http404("No such image.") from None
        response = FileResponse(
            handle, content_type=image.content_type, filename=image.download_name
        )
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = cache_control
    return response


def _accel_redirect(image: NoteImage) -> HttpResponse:
    """The permitted image sent by nginx from its internal location of MEDIA_ROOT
    (MEDIA_ACCEL_REDIRECT, deploy/nginx.conf): nginx keeps this answer's Content-Type,
    Content-Disposition and Cache-Control."""
    response = HttpResponse(content_type=image.content_type)
    response["X-Accel-Redirect"] = settings.MEDIA_ACCEL_REDIRECT + image.file.name
    response["Content-Disposition"] = content_disposition_header(False, image.download_name)
    return response


def _hugo_asset(name: str):
    """A file imported from a Hugo site (page-bundle resources live under MEDIA_URL), under the
    same rules: only recorded files, nosniff, inline. Its type is guessed from its name, as a
    static web server would."""
    asset = next(
        (asset for asset in HugoAsset.objects.filter(path=name.split("/", 2)[-1]) if
         asset.storage_name == name),
        None,
    )  # fmt: skip
    if asset is None:
        raise Http404("No such image.")
    try:
        handle = default_storage.open(asset.storage_name, "rb")
    except FileNotFoundError:
        raise Http404("No such image.") from None
    content_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    response = FileResponse(handle, content_type=content_type)
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Disposition"] = "inline"
    response["Cache-Control"] = f"public, max-age={MEDIA_MAX_AGE}"
    return response
