from django.contrib import admin
from django.utils.html import format_html_join

from .models import BibEntry, BibFile


@admin.register(BibFile)
class BibFileAdmin(admin.ModelAdmin):
    list_display = ["name", "entry_count", "problem_count", "owner", "updated_at"]
    search_fields = ["name", "description"]
    autocomplete_fields = ["owner"]
    readonly_fields = ["entry_count", "sha256", "report", "created_at", "updated_at"]
    exclude = ["parse_report"]

    @admin.display(description="problems")
    def problem_count(self, obj: BibFile) -> int:
        return len(obj.parse_report)

    @admin.display(description="parse report")
    def report(self, obj: BibFile):
        if not obj.parse_report:
            return "Every block parsed."
        # format_html_join escapes each value: keys and reasons come from the uploaded file.
        return format_html_join(
            "\n",
            "<div>line {}: {} — {}</div>",
            (
                (item.get("line", "?"), item.get("key") or "(no key)", item.get("reason", ""))
                for item in obj.parse_report
            ),
        )


@admin.register(BibEntry)
class BibEntryAdmin(admin.ModelAdmin):
    list_display = ["key", "entry_type", "title", "year", "bibfile"]
    list_filter = ["entry_type", "bibfile"]
    search_fields = ["key", "fields__title", "persons__author"]
    list_select_related = ["bibfile"]
    readonly_fields = ["bibfile", "key", "entry_type", "fields", "persons", "source", "position"]

    def has_add_permission(self, request):
        # Entries come from parsing their file; edit the file instead.
        return False
