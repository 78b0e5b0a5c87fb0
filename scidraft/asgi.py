"""The ASGI application: the site over HTTP (Django's ASGI handler, the same middleware as
under gunicorn) and writing together over WebSockets at /live/notes/<id>/ (collaboration/),
behind the session and an origin check. Served by daphne: `manage.py runserver` (daphne's)
in development, `daphne scidraft.asgi:application` beside gunicorn in production.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "scidraft.settings")
# Django first: the routing below imports models.
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402

from collaboration.origins import SiteOriginValidator, refuse_socket  # noqa: E402
from collaboration.routing import websocket_urlpatterns  # noqa: E402

websocket = (
    SiteOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)))
    if settings.LIVE_EDITING
    else refuse_socket
)

application = ProtocolTypeRouter({"http": django_asgi_app, "websocket": websocket})
