from django.urls import re_path

from .views import hugo_static

app_name = "hugo"

urlpatterns = [
    # Imported static/ files (/img/x.png): after every other route, notes' pages included.
    re_path(r"^(?P<path>.+\.\w+)$", hugo_static, name="hugo_static"),
]
