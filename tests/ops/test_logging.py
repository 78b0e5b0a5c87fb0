"""JSON log lines: python-json-logger's formatter with SciDraft's field names."""

from __future__ import annotations

import json
import logging

from pythonjsonlogger.json import JsonFormatter as LibraryJsonFormatter

from ops.logging import JsonFormatter


def _record(message: str, *args, **extra) -> logging.LogRecord:
    record = logging.LogRecord("scidraft.test", logging.WARNING, __file__, 1, message, args, None)
    record.__dict__.update(extra)
    return record


def test_the_formatter_is_python_json_loggers():
    """The JSON is written by the library, configured, not by a formatter of ours."""
    assert isinstance(JsonFormatter(), LibraryJsonFormatter)


def test_fields_keep_their_names_and_values():
    """`message`, `level`, `logger` and a UTC `time`; extras as given, non-JSON values as
    text, non-ASCII text as written; a request's object is left out, its method and path kept."""

    class Request:
        method = "POST"
        path = "/write/3/preview/"

    record = _record("Théorème %s", "3", free_mb=12, ratio=0.5, ok=True, obj=object(),
                     request=Request())  # fmt: skip
    line = JsonFormatter().format(record)
    entry = json.loads(line)
    assert "Théorème 3" in line
    assert (entry["message"], entry["level"], entry["logger"]) == (
        "Théorème 3",
        "WARNING",
        "scidraft.test",
    )
    assert entry["time"].endswith("+00:00")
    assert (entry["free_mb"], entry["ratio"], entry["ok"]) == (12, 0.5, True)
    assert entry["obj"].startswith("<object object")
    assert (entry["method"], entry["path"]) == ("POST", "/write/3/preview/")
    assert "request" not in entry
    assert not {"levelname", "name", "exc_info", "args", "msg"} & set(entry)


def test_a_stack_goes_in_stack():
    """stack_info=True gives the stack under `stack`."""
    record = _record("here")
    record.stack_info = "Stack (most recent call last):\n  File x"
    entry = json.loads(JsonFormatter().format(record))
    assert entry["stack"].startswith("Stack (most recent call last)")
