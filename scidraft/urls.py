from django.contrib import admin
from django.urls import include, path

from editor.guide import syntax_guide
from scidraft.site.caching import cached_page

admin.site.site_header = "SciDraft administration"
admin.site.site_title = "SciDraft"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("scidraft.site.urls")),
    path("", include("bibliography.urls")),
    path("", include("notes.machine_urls")),
    path("accounts/", include("accounts.urls")),
    path("", include("ops.urls")),
    path("write/", include("editor.urls")),
    path("help/syntax/", cached_page(syntax_guide), name="syntax_guide"),
    path("media/", include("images.urls")),  # before notes.urls' catch-all file route
    path("", include("notes.urls")),
    path("", include("hugo.urls")),  # imported static/ files at their old paths: last
]
