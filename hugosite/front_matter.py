"""Front matter: split from a file's body, parsed as TOML or YAML within bounds, and its values
(dates, booleans, lists, whole numbers) read as Hugo reads them. Model-free, like the rest of
hugosite.reading."""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from dataclasses import dataclass
from typing import Any

import yaml


class FrontMatterError(ValueError):
    """Front matter that cannot be parsed; `line` is 1-based within the file."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.line = line

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


@dataclass
class FrontMatter:
    data: dict[str, Any]
    body: str
    format: str | None  # "toml", "yaml" or None when the file has no front matter
    body_line: int  # 1-based line of the file where the body starts


# --- Front matter ------------------------------------------------------------------------------

_DELIMITERS = {"+++": "toml", "---": "yaml"}


def split_front_matter(text: str) -> FrontMatter:
    """Separate TOML (`+++`) or YAML (`---`) front matter from the Markdown body."""
    text = text.lstrip("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() not in _DELIMITERS:
        return FrontMatter({}, text, None, 1)
    fence = lines[0].strip()
    kind = _DELIMITERS[fence]
    for index in range(1, len(lines)):
        if lines[index].strip() == fence:
            raw = "".join(lines[1:index])
            body = "".join(lines[index + 1 :])
            data = _parse_front_matter(raw, kind)
            return FrontMatter(data, body, kind, index + 2)
    raise FrontMatterError(f"front matter opened with {fence} is never closed", line=1)


def _parse_front_matter(raw: str, kind: str) -> dict[str, Any]:
    try:
        data = _front_matter_data(raw, kind)
    except RecursionError:  # the parsers recurse once a level: 5,000 `[` ran out of stack
        raise FrontMatterError(f"nested more than {MAX_DEPTH} levels deep", line=2) from None
    expanded_size_check(data)
    return data


def _front_matter_data(raw: str, kind: str) -> dict[str, Any]:
    if kind == "toml":
        try:
            data = tomllib.loads(raw)
        except tomllib.TOMLDecodeError as error:
            # tomllib reports "(at line N, column M)" relative to the front matter block.
            match = re.search(r"at line (\d+)", str(error))
            line = int(match.group(1)) + 1 if match else None
            raise FrontMatterError(f"invalid TOML: {error}", line=line) from None
    else:
        try:
            data = yaml.safe_load(raw) or {}
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            line = mark.line + 2 if mark is not None else None
            problem = getattr(error, "problem", None) or str(error)
            raise FrontMatterError(f"invalid YAML: {problem}", line=line) from None
    if not isinstance(data, dict):
        raise FrontMatterError("front matter must be a table of keys and values", line=2)
    return data


# --- Values ------------------------------------------------------------------------------------


def parse_date(value: Any) -> tuple[dt.datetime, int | None]:
    """A front-matter date as an aware datetime and the UTC offset (minutes) it was written in.

    Bare dates and naive times are UTC, as Hugo reads them.
    """
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, dt.date):
        moment = dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        text = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
        try:
            moment = dt.datetime.fromisoformat(text)
        except ValueError:
            raise FrontMatterError(f"cannot read the date {value!r}") from None
    else:
        raise FrontMatterError(f"cannot read the date {value!r}")
    if moment.tzinfo is None:
        return moment.replace(tzinfo=dt.UTC), None
    offset = moment.utcoffset()
    return moment, int(offset.total_seconds() // 60) if offset is not None else None


def _as_bool(value: Any, key: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "false"}:
        return value.strip().lower() == "true"
    raise FrontMatterError(f"{key} must be true or false, not {value!r}")


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [str(item) for item in value if str(item).strip()]
    raise FrontMatterError(f"expected a list, got {value!r}")


def _as_int(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise FrontMatterError(f"{key} must be a whole number, not {value!r}")
    try:
        return int(value)
    except ValueError:
        raise FrontMatterError(f"{key} must be a whole number, not {value!r}") from None


# What one front matter or data file may hold once YAML's aliases are expanded (each use of an
# anchor is a copy in the JSON it becomes: nine aliases nine deep were 48 M values from 400
# bytes), and how deeply it may nest.
MAX_VALUES = 100_000
MAX_DEPTH = 64


def expanded_size_check(value: Any) -> None:
    """FrontMatterError when `value`, as JSON would spell it out, holds more than MAX_VALUES
    values or nests deeper than MAX_DEPTH. Walked without recursion, counting every use of a
    shared (aliased) value, and stopped at the bound."""
    count, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        count += 1
        if count > MAX_VALUES:
            raise FrontMatterError(
                f"more than {MAX_VALUES:,} values once its YAML aliases are expanded"
            )
        if depth > MAX_DEPTH:
            raise FrontMatterError(f"nested more than {MAX_DEPTH} levels deep")
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list | tuple):
            stack.extend((child, depth + 1) for child in item)


def jsonable(value: Any) -> Any:
    """Front-matter values kept in params must survive a JSON column (the value passed
    expanded_size_check when its file was read)."""
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(item) for item in value]
    return value
