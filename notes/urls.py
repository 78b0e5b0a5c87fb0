from django.urls import path, re_path

from . import views

app_name = "notes"

urlpatterns = [
    path("", views.feed, {"base": "/"}, name="home"),
    path("page/<int:page>/", views.feed, {"base": "/"}, name="home_page"),
    path("notes/", views.feed, {"base": "/notes/"}, name="feed"),
    path("notes/page/<int:page>/", views.feed, {"base": "/notes/"}, name="feed_page"),
    re_path(
        r"^notes/(?P<slug>[-\w]+)/cite\.(?P<format>bib|ris|json)$",
        views.note_cite,
        name="note_cite",
    ),
    re_path(
        r"^notes/(?P<slug>[-\w]+)/references\.bib$",
        views.note_references_bib,
        name="references_bib",
    ),
    re_path(r"^notes/(?P<slug>[-\w]+)/$", views.note_detail, name="note_detail"),
    path("tags/", views.tag_list, name="tag_list"),
    re_path(r"^tags/(?P<slug>[-\w]+)/$", views.tag_detail, name="tag_detail"),
    re_path(r"^tags/(?P<slug>[-\w]+)/page/(?P<page>\d+)/$", views.tag_detail, name="tag_page"),
    re_path(r"^authors/(?P<handle>[-\w]+)/$", views.author_detail, name="author_detail"),
    re_path(
        r"^authors/(?P<handle>[-\w]+)/page/(?P<page>\d+)/$",
        views.author_detail,
        name="author_page",
    ),
    # Standalone pages live at the root (about, A–Z pages): matched last.
    re_path(r"^(?P<slug>[-\w]+)/$", views.page_detail, name="page_detail"),
]
