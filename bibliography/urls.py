from django.urls import path

from scidraft.site.caching import cached_page

from . import views

app_name = "bibliography"

urlpatterns = [
    path("bib/<path:name>", cached_page(views.bibfile_download), name="bibfile_download"),
]
