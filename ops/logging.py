"""Log records as one JSON object per line (LOG_FORMAT=json), for log collectors.

Each line has `time` (UTC, ISO 8601), `level`, `logger` and `message`; `exception` when the
record carries one; `status_code`, `method` and `path` on Django's request log records; any
simple values passed with `extra=`.
"""

from __future__ import annotations

import datetime as dt
import json
import logging

# Attributes every LogRecord has; anything else on a record came from `extra=`.
_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "request"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": dt.datetime.fromtimestamp(record.created, tz=dt.UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        request = getattr(record, "request", None)
        if request is not None and hasattr(request, "path"):
            entry["method"] = getattr(request, "method", None)
            entry["path"] = request.path
        for name, value in vars(record).items():
            if name not in _STANDARD and name not in entry:
                if isinstance(value, str | int | float | bool) or value is None:
                    entry[name] = value
                else:
                    entry[name] = repr(value)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False, default=str)
