from django.urls import path

from scidraft.site.caching import cached_page

from . import views

app_name = "site"

urlpatterns = [
    path("custom.css", cached_page(views.custom_css), name="custom_css"),
]
