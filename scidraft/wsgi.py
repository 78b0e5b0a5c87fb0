"""WSGI entry point (gunicorn scidraft.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "scidraft.settings")

application = get_wsgi_application()
