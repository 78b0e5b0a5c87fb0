"""What a load changes, what it may change (LoadPolicy), and its report."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from ..problems import Problem

CONFIG_PARTS = ("settings", "menus", "entry sets")

# What a report calls one row of each kind.
_ROW_NAMES = {
    "settings": "settings",
    "menus": "menu item",
    "entry sets": "entry set",
    "bibliography files": "bibliography file",
    "data files": "data file",
    "images": "image",
    "notes": "note",
    "pages": "page",
}
# Kinds whose rows are described by the names of their changed fields only (bodies are long).
_NAMES_ONLY = {"bibliography files", "data files", "images", "notes", "pages"}


@dataclass
class RowChange:
    """One row a load creates, updates or deletes, or would but leaves as it is (`kept` says
    why). `fields` maps each changed field to (its value now, the loaded site's)."""

    kind: str
    key: str
    action: str  # "create", "update" or "delete"
    fields: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    kept: str = ""
    row: Any = field(default=None, repr=False, compare=False)  # the row as it was read

    def describe(self) -> str:
        """`menu item notes: created: name 'Notes', url '/notes/'`; a kept row says
        `menu item notes: kept (…); would be updated: name 'Mine' → 'Notes'`."""
        what = f"{_ROW_NAMES.get(self.kind, self.kind)} {self.key}".strip()
        verb = {"create": "created", "update": "updated", "delete": "deleted"}[self.action]
        if self.kept:
            verb = f"{self.kept}; would be {verb}"
        if self.action == "delete" or not self.fields:
            return f"{what}: {verb}"
        if self.kind in _NAMES_ONLY:
            detail = ", ".join(self.fields)
        elif self.action == "create":
            detail = ", ".join(
                f"{name} {_shown(new)}"
                for name, (_, new) in self.fields.items()
                if new not in ("", None)
            )
        else:
            detail = ", ".join(
                f"{name} {_shown(old)} → {_shown(new)}" for name, (old, new) in self.fields.items()
            )
        return f"{what}: {verb}: {detail}"


def _shown(value: Any, limit: int = 60) -> str:
    text = (
        repr(value) if not isinstance(value, list | dict) else json.dumps(value, ensure_ascii=False)
    )
    return text if len(text) <= limit else text[: limit - 1] + "…"


class LoadPolicy:
    """Which rows a load may change: import_hugo's rule.

    Notes, pages and bibliography files are written as the Hugo site has them (matched by
    slug and name, idempotently). Settings, menus and entry sets are site-wide: a part is
    loaded into a fresh site (no settings changed from the defaults, no menu, no entry set)
    or when named in `replace`; otherwise a part that differs stays as it is, and the report
    says so and what would change.
    """

    def __init__(self, *, replace: Collection[str] = ()):
        unknown = set(replace) - set(CONFIG_PARTS)
        if unknown:
            raise ValueError(f"Not a config part: {', '.join(sorted(unknown))}")
        self.replace = frozenset(replace)

    def part_kept(self, part: str, *, fresh: bool) -> str:
        """Why the config `part` stays as it is (the site has its own), or "" to load it."""
        if fresh or part in self.replace:
            return ""
        return f"kept (use --replace-{part.replace(' ', '-')} to replace)"

    def concerns(self, change: RowChange) -> bool:
        """Whether `change` is this load's business at all (a row it would delete may not be)."""
        return True

    def row_kept(self, change: RowChange) -> str:
        """Why the row of `change` stays as it is, or "" to write it. Asked before a note, page
        or bibliography file is written (whether or not it differs), and for each change of a
        config part that is loaded."""
        return ""


REPLACE_ALL = LoadPolicy(replace=CONFIG_PARTS)


def changed_fields(instance, values: dict) -> dict[str, tuple[Any, Any]]:
    """{name: (the instance's value, the wanted one)} of the values that differ."""
    return {
        name: (getattr(instance, name), value)
        for name, value in values.items()
        if getattr(instance, name) != value
    }


@dataclass
class LoadReport:
    """What loading a Hugo site did, per kind of object."""

    counts: dict[str, Counter] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    # Every row updated or deleted, settings, menus and entry sets also when created, and
    # every row kept as it was although the site differs (RowChange.kept says why).
    changes: list[RowChange] = field(default_factory=list)

    def count(self, kind: str, outcome: str) -> None:
        self.counts.setdefault(kind, Counter())[outcome] += 1

    def add(self, other: LoadReport) -> None:
        """Add `other`'s counts and changes to this report's (not its problems)."""
        for kind, counter in other.counts.items():
            self.counts.setdefault(kind, Counter()).update(counter)
        self.changes.extend(other.changes)

    @property
    def kept(self) -> list[RowChange]:
        return [change for change in self.changes if change.kept]

    @property
    def changed(self) -> bool:
        return any(counter["created"] or counter["updated"] for counter in self.counts.values())

    def lines(self) -> list[str]:
        rows = []
        for kind, counter in self.counts.items():
            parts = ", ".join(
                f"{counter[outcome]} {outcome}"
                for outcome in ("created", "updated", "unchanged", "kept")
                if counter[outcome]
            )
            rows.append(f"{kind}: {parts}")
        rows.extend(f"problem: {problem}" for problem in self.problems)
        return rows
