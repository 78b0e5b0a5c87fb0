from django import forms
from django.contrib import admin
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from .models import CITATION_STYLES, EntrySet, MenuItem, SiteSettings


class CitationStyleInput(forms.TextInput):
    """A style name with the featured styles offered (any shipped CSL style is accepted)."""

    def render(self, name, value, attrs=None, renderer=None):
        attrs = {**(attrs or {}), "list": "citation-styles"}
        options = format_html_join("", '<option value="{}">{}</option>', CITATION_STYLES)
        field = super().render(name, value, attrs, renderer)
        return format_html('{}<datalist id="citation-styles">{}</datalist>', field, options)


@admin.register(SiteSettings)
class SiteSettingsAdmin(admin.ModelAdmin):
    def formfield_for_dbfield(self, db_field, request, **kwargs):
        if db_field.name == "citation_style":
            kwargs["widget"] = CitationStyleInput
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    fieldsets = [
        (
            None,
            {
                "fields": [
                    "title",
                    "description",
                    "base_url",
                    "language_code",
                    "copyright",
                    "footer_text",
                ]
            },
        ),
        ("Identity defaults", {"fields": ["institute", "author"]}),
        (
            "Feed",
            {
                "fields": [
                    "notes_per_page",
                    "promotions_per_page",
                    "promotion_positions",
                    "promotion_link",
                    "pager_size",
                    "recommendation_count",
                ]
            },
        ),
        (
            "Pages",
            {
                "fields": [
                    "show_share_buttons",
                    "share_buttons",
                    "show_reading_time",
                    "show_toc",
                    "show_breadcrumbs",
                    "show_post_nav_links",
                    "show_code_copy_buttons",
                    "show_related_posts",
                ]
            },
        ),
        (
            "Feeds and look",
            {
                "fields": [
                    "show_full_text_in_rss",
                    "rss_limit",
                    "default_theme",
                    "citation_style",
                    "auto_references",
                    "math",
                    "math_macros",
                    "custom_css",
                ]
            },
        ),
        ("Workflow", {"fields": ["require_review"]}),
    ]

    def has_add_permission(self, request):
        return not SiteSettings.objects.exists()

    def has_delete_permission(self, request, obj=None):
        return False

    def changelist_view(self, request, extra_context=None):
        if not self.has_view_or_change_permission(request):
            return super().changelist_view(request, extra_context)  # refuses with 403
        # One row of settings: go straight to it.
        current = SiteSettings.objects.current()
        return HttpResponseRedirect(reverse("admin:site_sitesettings_change", args=[current.pk]))


class MenuChildInline(admin.TabularInline):
    model = MenuItem
    fk_name = "parent"
    extra = 0
    fields = ["identifier", "name", "url", "weight", "note"]


@admin.register(MenuItem)
class MenuItemAdmin(admin.ModelAdmin):
    list_display = ["name", "url", "weight", "parent", "menu"]
    list_filter = ["menu"]
    search_fields = ["name", "identifier", "url"]
    inlines = [MenuChildInline]


@admin.register(EntrySet)
class EntrySetAdmin(admin.ModelAdmin):
    list_display = ["key", "title_field", "category_field", "count_label", "tag"]
    search_fields = ["key"]
