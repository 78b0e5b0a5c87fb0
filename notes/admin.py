from django.conf import settings
from django.contrib import admin
from django.contrib.admin import widgets
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse, HttpResponseNotAllowed
from django.urls import path, reverse
from django.utils.safestring import mark_safe
from markdownx.widgets import MarkdownxWidget

from editor.forms import NotePreviewWidget
from editor.views import problems_html
from scidraft.markup import render as markup_render

from .models import Author, Environment, Note, NoteAuthor, NoteBibliography, NoteRevision, Page, Tag
from .rendering import context_for

# Who may use the admin's site-context preview (add pages and standalone pages).
PREVIEW_PERMISSIONS = ("notes.add_note", "notes.change_note", "notes.add_page", "notes.change_page")


class NoteAuthorInline(admin.TabularInline):
    model = NoteAuthor
    extra = 0
    autocomplete_fields = ["author"]
    ordering = ["position"]


class NoteBibliographyInline(admin.TabularInline):
    model = NoteBibliography
    extra = 0
    autocomplete_fields = ["bibfile"]
    ordering = ["position"]


class AdminNotePreviewWidget(NotePreviewWidget, widgets.AdminTextareaWidget):
    """The editor's markdownx widget (same endpoints) in the admin's look. The editor page's
    own preview script is not on admin pages: markdownx's timer drives the preview here."""

    template_name = MarkdownxWidget.template_name

    def __init__(self, preview_url: str, *, uploads: bool, attrs=None):
        super().__init__(preview_url, attrs)
        self.uploads = uploads

    def get_context(self, name, value, attrs=None):
        context = super().get_context(name, value, attrs)
        widget_attrs = context["widget"]["attrs"]
        widget_attrs["data-markdownx-latency"] = settings.MARKDOWNX_SERVER_CALL_LATENCY
        if not self.uploads:  # images go into a note's folder: none before it exists
            widget_attrs["data-markdownx-upload-urls-path"] = ""
        return context

    class Media:
        css = {"all": ["markdownx/admin/css/markdownx.min.css"]}


class MarkdownBodyMixin:
    """The body field is the editor's markdownx widget. Its preview posts to an endpoint behind
    login and permissions that renders with the published renderer (never markdownx's stock,
    anonymous URL): a note's own /write/<id>/preview/ on its change page, else the admin's
    site-context preview."""

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
        # Trusted: scidraft.markup sanitises its output; the problems list is escaped.
        return HttpResponse(mark_safe(problems_html(rendered.warnings) + rendered.html))  # noqa: S308


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
