from django.contrib import admin, messages
from django.contrib.admin import widgets
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponse, HttpResponseNotAllowed
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from editor.views import for_reviewers, problems_html
from scidraft.markup import render as markup_render

from . import services
from .models import (
    Author,
    Environment,
    Note,
    NoteAuthor,
    NoteBibliography,
    NoteRevision,
    Page,
    Status,
    Tag,
)
from .rendering import context_for

# Who may use the admin's site-context preview (add pages and standalone pages).
PREVIEW_PERMISSIONS = ("notes.add_note", "notes.change_note", "notes.add_page", "notes.change_page")


class LiveVersionInline(admin.TabularInline):
    """A published note's rows are its live version: read-only here (see NoteAdmin)."""

    extra = 0
    ordering = ["position"]

    def _live(self, obj) -> bool:
        return obj is not None and obj.status == Status.PUBLISHED

    def has_add_permission(self, request, obj=None):
        return not self._live(obj) and super().has_add_permission(request, obj)

    def has_change_permission(self, request, obj=None):
        return not self._live(obj) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return not self._live(obj) and super().has_delete_permission(request, obj)


class NoteAuthorInline(LiveVersionInline):
    model = NoteAuthor
    autocomplete_fields = ["author"]


class NoteBibliographyInline(LiveVersionInline):
    model = NoteBibliography
    autocomplete_fields = ["bibfile"]


class AdminNotePreviewWidget(widgets.AdminTextareaWidget):
    """The admin's textarea, previewing through an endpoint behind login and permissions (the
    note's /write/<id>/preview/, answering sanitised HTML) and uploading into the note's folder
    (/write/<id>/images/). static/js/admin-preview.js posts the text a short pause after typing
    and shows the answer under the field; the editor page has its own editor
    (editor.forms.NoteBodyWidget)."""

    # Milliseconds without typing before the preview is asked for.
    PREVIEW_DELAY_MS = 400

    def __init__(self, preview_url: str, *, uploads: bool, attrs=None):
        super().__init__(attrs)
        self.preview_url = preview_url
        self.uploads = uploads

    def get_context(self, name, value, attrs=None):
        context = super().get_context(name, value, attrs)
        widget_attrs = context["widget"]["attrs"]
        widget_attrs["data-preview-url"] = self.preview_url
        # Images go into a note's folder (editor:image_upload, a sibling): none before it exists.
        widget_attrs["data-upload-url"] = (
            self.preview_url.replace("/preview/", "/images/") if self.uploads else ""
        )
        widget_attrs["data-preview-delay"] = self.PREVIEW_DELAY_MS
        return context

    def render(self, name, value, attrs=None, renderer=None):
        textarea = super().render(name, value, attrs, renderer)
        field_id = (attrs or {}).get("id") or f"id_{name}"
        return format_html(
            '{}<p class="admin-upload-status" id="{}_upload_status" aria-live="polite"></p>'
            '<div class="admin-preview" id="{}_preview" aria-live="polite"></div>',
            textarea,
            field_id,
            field_id,
        )

    class Media:
        # The rendered body's own stylesheets: without KaTeX's, each formula also shows its
        # MathML as text (every formula twice); without admin-preview.css a reference list
        # numbers its entries twice ("1. [1]").
        css = {
            "all": [
                "vendor/katex/katex.min.css",
                "vendor/pseudocode/pseudocode.min.css",
                "vendor/pygments.css",
                "css/admin-preview.css",
            ]
        }
        js = ["js/admin-preview.js"]


class MarkdownBodyMixin:
    """The body field previews through an endpoint behind login and permissions that renders
    with the published renderer: a note's own /write/<id>/preview/ on its change page, else the
    admin's site-context preview."""

    def preview_url(self, obj) -> str:
        return reverse("admin:notes_note_preview")

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)
        field = form.base_fields.get("body")
        if field is not None:  # the form class is built for this request: ours to change
            url = self.preview_url(obj)
            uploads = url != reverse("admin:notes_note_preview")
            field.widget = AdminNotePreviewWidget(preview_url=url, uploads=uploads)
            field.widget.is_required = field.required
            # A body is kept as written: Django's CharField strips it, and a saved change form
            # lost the body's leading and trailing newlines.
            field.strip = False
        return form


@admin.register(Note)
class NoteAdmin(MarkdownBodyMixin, admin.ModelAdmin):
    list_display = ["__str__", "slug", "status", "date", "promotion", "updated_at"]
    list_filter = ["status", "promotion", "tags", "hidden_in_rss", "search_hidden"]
    search_fields = ["title", "slug", "summary", "body"]
    date_hierarchy = "date"
    prepopulated_fields = {"slug": ["title"]}
    filter_horizontal = ["tags"]
    inlines = [NoteAuthorInline, NoteBibliographyInline]
    readonly_fields = ["version", "created_by", "created_at", "updated_at", "render_version"]
    actions = ["publish_notes", "unpublish_notes"]
    fieldsets = [
        (None, {"fields": ["title", "slug", "body"]}),
        ("Publication", {"fields": ["status", "date", "date_offset_minutes", "weight"]}),
        ("Identity", {"fields": ["institute"]}),
        (
            "Feed and metadata",
            {
                "fields": [
                    "tags",
                    "show_title",
                    "promotion",
                    "summary",
                    "description",
                    "keywords",
                    "canonical_url",
                    "math",
                    "math_macros",
                    "params",
                ]
            },
        ),
        (
            "Visibility",
            {
                "classes": ["collapse"],
                "fields": [
                    "disable_share",
                    "share_buttons",
                    "search_hidden",
                    "hidden_in_rss",
                    "robots_noindex",
                ],
            },
        ),
        (
            "Record",
            {
                "classes": ["collapse"],
                "fields": ["version", "created_by", "created_at", "updated_at", "render_version"],
            },
        ),
    ]

    def preview_url(self, obj) -> str:
        if obj is not None and obj.pk is not None:
            return reverse("editor:preview", args=[obj.pk])
        return super().preview_url(obj)

    # The admin follows the editor's rules (notes.services): the status changes only through
    # publish and unpublish, which apply review and bylines; a published note's fields are its
    # live version, changed by publishing a working copy, so they are read-only here.

    def get_queryset(self, request):
        # A note in the trash is edited by no one (Note.objects.editable_by): Editors restore
        # it from the editor's trash page, and `manage.py purge_trash` removes it.
        return super().get_queryset(request).not_trashed()

    def get_readonly_fields(self, request, obj=None):
        fields = [*self.readonly_fields, "status"]
        if obj is not None and obj.status == Status.PUBLISHED:
            editable = [f for fieldset in self.fieldsets for f in fieldset[1]["fields"]]
            fields += [f for f in editable if f not in fields]
        return fields

    def get_prepopulated_fields(self, request, obj=None):
        if obj is not None and obj.status == Status.PUBLISHED:
            return {}
        return super().get_prepopulated_fields(request, obj)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        note = self.get_object(request, object_id)
        if note is not None and note.status == Status.PUBLISHED:
            self.message_user(
                request,
                mark_safe(  # noqa: S308 - our own text and a URL we reversed
                    "This note is published: these fields are what readers see. Edit it in "
                    f'<a href="{reverse("editor:edit", args=[note.pk])}">the editor</a>, where '
                    "changes wait as unpublished changes until they are published."
                ),
                messages.INFO,
            )
        return super().change_view(request, object_id, form_url, extra_context)

    def _each(self, request, queryset, service, done: str):
        changed = 0
        for note in queryset:
            try:
                result = service(note_id=note.pk, user=request.user, base_version=note.version)
            except (PermissionDenied, services.AuthorshipError, ValidationError) as error:
                message = " ".join(getattr(error, "messages", [str(error)]))
                self.message_user(request, f"{note}: {message}", messages.ERROR)
                continue
            changed += result.revision is not None
        self.message_user(request, f"{done}: {changed} note(s).", messages.SUCCESS)

    @admin.action(description="Publish selected notes (or their changes; review applies)")
    def publish_notes(self, request, queryset):
        self._each(request, queryset, services.note_publish, "Published or submitted")

    @admin.action(description="Unpublish selected notes")
    def unpublish_notes(self, request, queryset):
        self._each(request, queryset, services.note_unpublish, "Unpublished")

    def get_urls(self):
        preview = path(
            "preview/", self.admin_site.admin_view(self.preview_view), name="notes_note_preview"
        )
        return [preview, *super().get_urls()]

    def preview_view(self, request):
        """The preview of a note not saved yet, or of a page: the published renderer in the
        site's context (no note bibliographies yet). Staff with note or page rights only."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not any(request.user.has_perm(name) for name in PREVIEW_PERMISSIONS):
            raise PermissionDenied
        rendered = markup_render(
            request.POST.get("content", ""), context_for(None, reader=request.user)
        )
        body = for_reviewers(request, rendered.html)
        # Trusted: scidraft.markup sanitises its output; the problems list is escaped.
        return HttpResponse(mark_safe(problems_html(rendered.warnings) + body))  # noqa: S308


@admin.register(NoteRevision)
class NoteRevisionAdmin(admin.ModelAdmin):
    list_display = ["note", "number", "kind", "created_by", "created_at"]
    list_filter = ["kind"]
    search_fields = ["note__title", "note__slug", "message"]
    list_select_related = ["note", "created_by"]
    readonly_fields = [f.name for f in NoteRevision._meta.fields]

    def has_add_permission(self, request):
        # Revisions are written by the save paths only; they are a record, not a form.
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Author)
class AuthorAdmin(admin.ModelAdmin):
    list_display = ["name", "handle", "institute", "user", "is_active"]
    list_filter = ["is_active"]
    search_fields = ["name", "handle", "institute", "email"]
    prepopulated_fields = {"handle": ["name"]}
    autocomplete_fields = ["user"]


@admin.register(Tag)
class TagAdmin(admin.ModelAdmin):
    list_display = ["name", "slug"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}


@admin.register(Environment)
class EnvironmentAdmin(admin.ModelAdmin):
    list_display = ["label", "key", "plural", "counter", "numbered", "style", "position"]
    list_editable = ["position"]
    list_filter = ["style", "numbered"]
    search_fields = ["key", "label"]


@admin.register(Page)
class PageAdmin(MarkdownBodyMixin, admin.ModelAdmin):
    list_display = ["title", "slug", "layout", "status", "updated_at"]
    list_filter = ["status", "layout"]
    search_fields = ["title", "slug", "body"]
    prepopulated_fields = {"slug": ["title"]}
    filter_horizontal = ["authors"]
    readonly_fields = ["version", "created_at", "updated_at", "render_version"]
