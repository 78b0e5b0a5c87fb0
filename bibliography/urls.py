from django.urls import path

from . import views

app_name = "bibliography"

urlpatterns = [
    path("bib/<path:name>", views.bibfile_download, name="bibfile_download"),
]
