from django.contrib import admin
from markdownx.widgets import AdminMarkdownxWidget

from .models import Author, Environment, Note, NoteAuthor, NoteBibliography, NoteRevision, Page, Tag


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


class MarkdownBodyMixin:
    """The body field is edited with the django-markdownx editor."""

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        if db_field.name == "body":
            kwargs["widget"] = AdminMarkdownxWidget
        return super().formfield_for_dbfield(db_field, request, **kwargs)


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
