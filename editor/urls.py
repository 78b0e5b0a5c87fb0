from django.urls import path

from . import views

app_name = "editor"

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("new/", views.note_new, name="new"),
    path("<int:note_id>/", views.note_edit, name="edit"),
    path("<int:note_id>/preview/", views.note_preview, name="preview"),
    path("<int:note_id>/autosave/", views.note_autosave, name="autosave"),
    path("<int:note_id>/revisions/", views.revision_list, name="revisions"),
    path(
        "<int:note_id>/revisions/<int:revision_id>/restore/",
        views.revision_restore_view,
        name="restore",
    ),
]
