"""Stored note images, mounted at MEDIA_URL (scidraft/urls.py). The upload endpoint is the
editor's (`editor:image_upload`, editor/urls.py)."""

from django.urls import path

from . import views

app_name = "images"

urlpatterns = [
    path("<path:name>", views.media, name="media"),
]
