"""Django's JSON serializer, keeping microseconds: the stock encoder cuts datetimes and times to
milliseconds, so a restored row would differ from the backed-up one. Loads with the stock
JSON deserializer (`loaddata data.json`)."""

from __future__ import annotations

import datetime as dt

from django.core.serializers.json import Deserializer  # noqa: F401 - the format's loader
from django.core.serializers.json import Serializer as JSONSerializer


class Serializer(JSONSerializer):
    def _value_from_field(self, obj, field):
        value = super()._value_from_field(obj, field)
        if isinstance(value, dt.datetime | dt.time):
            return value.isoformat()
        return value
