from django.urls import path

from . import views

app_name = "site"

urlpatterns = [
    path("custom.css", views.custom_css, name="custom_css"),
]
