from django.http import HttpResponse

from .models import SiteSettings


def custom_css(request):
    """The site's own stylesheet (settings), loaded after the theme's."""
    site = SiteSettings.objects.current()
    return HttpResponse(site.custom_css, content_type="text/css; charset=utf-8")
