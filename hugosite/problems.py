"""What a Hugo site's reading could not read, file by file."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Problem:
    path: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"
