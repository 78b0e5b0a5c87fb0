from django.urls import path, re_path

from . import views

app_name = "notes"

urlpatterns = [
    path("", views.note_index, name="index"),
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
]
