"""Log records as one JSON object per line (LOG_FORMAT=json), for log collectors, written by
python-json-logger.

Each line has `message`, `level`, `logger` and `time` (UTC, ISO 8601); `exception` when the
record carries one, `stack` with stack_info; any values passed with `extra=` (others than
JSON's own as their text); and `method` and `path` on Django's request log records, whose
`request` object itself is left out.
"""

from __future__ import annotations

from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonFormatter as LibraryJsonFormatter


class JsonFormatter(LibraryJsonFormatter):
    """python-json-logger's formatter with SciDraft's field names, plus the request's method and
    path (through add_fields, the library's hook for computed fields)."""

    def __init__(self) -> None:
        super().__init__(
            "{message}{levelname}{name}",
            style="{",
            rename_fields={
                "levelname": "level",
                "name": "logger",
                "exc_info": "exception",
                "stack_info": "stack",
            },
            timestamp="time",
            reserved_attrs=[*RESERVED_ATTRS, "request"],
            json_ensure_ascii=False,
        )

    def add_fields(self, log_record, record, message_dict) -> None:
        super().add_fields(log_record, record, message_dict)
        request = getattr(record, "request", None)
        if request is not None and hasattr(request, "path"):
            log_record["method"] = getattr(request, "method", None)
            log_record["path"] = request.path
