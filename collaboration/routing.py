from django.urls import re_path

from .consumers import NoteConsumer

# y-websocket's provider joins its server URL and room name with "/": the room "12/" and the
# room "12" both reach note 12.
websocket_urlpatterns = [
    re_path(r"^live/notes/(?P<note_id>[0-9]+)/?$", NoteConsumer.as_asgi(), name="live-note"),
]
