from django.urls import path

from images import views as image_views

from . import (
    authorship,
    bibliographies,
    completion,
    dashboard,
    live,
    people,
    previews,
    references,
    review,
    revisions,
    trash,
    views,
)

app_name = "editor"

urlpatterns = [
    path("", dashboard.dashboard, name="dashboard"),
    path("new/", views.note_new, name="new"),
    path("<int:note_id>/", views.note_edit, name="edit"),
    path("<int:note_id>/preview/", previews.note_preview, name="preview"),
    path("<int:note_id>/delete/", trash.note_delete, name="delete"),
    path("trash/", trash.trash_list, name="trash"),
    path("trash/<int:note_id>/restore/", trash.trash_restore, name="trash_restore"),
    path("<int:note_id>/autosave/", views.note_autosave, name="autosave"),
    path("<int:note_id>/images/", image_views.upload, name="image_upload"),
    path("<int:note_id>/revisions/", revisions.revision_list, name="revisions"),
    path("<int:note_id>/live/reset/", live.live_reset, name="live_reset"),
    path(
        "<int:note_id>/revisions/<int:revision_id>/restore/",
        revisions.revision_restore_view,
        name="restore",
    ),
    path(
        "<int:note_id>/authors/<int:author_id>/confirm/",
        authorship.authorship_confirm,
        name="authorship_confirm",
    ),
    path(
        "<int:note_id>/authorship/decline/",
        authorship.authorship_decline,
        name="authorship_decline",
    ),
    path("<int:note_id>/cite-search/", bibliographies.cite_search, name="cite_search"),
    path("<int:note_id>/labels/", completion.reference_labels, name="labels"),
    path("bibliographies/", bibliographies.bibfile_list, name="bibliographies"),
    path("bibliographies/<int:bibfile_id>/", bibliographies.bibfile_detail, name="bibliography"),
    path(
        "bibliographies/<int:bibfile_id>/public/",
        bibliographies.bibfile_public,
        name="bibliography_public",
    ),
    path("references/", references.reference_changes_list, name="reference_changes"),
    path("review/", review.review_queue, name="review"),
    path("review/<int:note_id>/", review.review_note, name="review_note"),
    path("review/<int:note_id>/approve/", review.review_approve, name="review_approve"),
    path("review/<int:note_id>/send-back/", review.review_send_back, name="review_send_back"),
    path("people/", people.people_list, name="people"),
    path("people/invite/", people.people_invite, name="people_invite"),
    path("people/<int:user_id>/", people.people_change, name="people_change"),
]
