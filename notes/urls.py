from django.urls import path, re_path

from scidraft.site.caching import cached_page

from . import archives, views

app_name = "notes"

urlpatterns = [
    path("", cached_page(views.feed), {"base": "/"}, name="home"),
    path("page/<int:page>/", cached_page(views.feed), {"base": "/"}, name="home_page"),
    path("notes/", cached_page(views.feed), {"base": "/notes/"}, name="feed"),
    path("notes/page/<int:page>/", cached_page(views.feed), {"base": "/notes/"}, name="feed_page"),
    re_path(
        r"^notes/(?P<slug>[-\w]+)/cite\.(?P<format>bib|ris|json)$",
        cached_page(views.note_cite),
        name="note_cite",
    ),
    re_path(
        r"^notes/(?P<slug>[-\w]+)/references\.bib$",
        cached_page(views.note_references_bib),
        name="references_bib",
    ),
    re_path(
        r"^notes/(?P<slug>[-\w]+)/references\.(?P<format>ris|json)$",
        cached_page(views.note_references_export),
        name="references_export",
    ),
    re_path(r"^notes/(?P<slug>[-\w]+)/$", cached_page(views.note_detail), name="note_detail"),
    path("tags/", cached_page(views.tag_list), name="tag_list"),
    re_path(r"^tags/(?P<slug>[-\w]+)/$", cached_page(views.tag_detail), name="tag_detail"),
    re_path(
        r"^tags/(?P<slug>[-\w]+)/page/(?P<page>\d+)/$",
        cached_page(views.tag_detail),
        name="tag_page",
    ),
    re_path(
        r"^authors/(?P<handle>[-\w]+)/$", cached_page(views.author_detail), name="author_detail"
    ),
    re_path(
        r"^authors/(?P<handle>[-\w]+)/page/(?P<page>\d+)/$",
        cached_page(views.author_detail),
        name="author_page",
    ),
    # The archive page's years (notes.archives): a 404 under any other page.
    re_path(
        r"^(?P<slug>[-\w]+)/(?P<year>\d+)/$",
        cached_page(archives.archive_year),
        name="archive_year",
    ),
    re_path(
        r"^(?P<slug>[-\w]+)/(?P<year>\d+)/page/(?P<page>\d+)/$",
        cached_page(archives.archive_year),
        name="archive_year_page",
    ),
    # Standalone pages live at the root (about, A–Z pages): matched last.
    re_path(
        r"^(?P<slug>[-\w]+)/$",
        cached_page(views.page_detail, query=views.page_query),
        name="page_detail",
    ),
]
