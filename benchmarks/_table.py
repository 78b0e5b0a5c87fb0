"""The plain-text table every benchmark prints, and its verdict (imported by the benchmark
modules)."""

from __future__ import annotations


def table(header: list[str], rows: list[list[str]], numeric: set[int] = frozenset()) -> str:
    """Columns padded to fit; `numeric` column indexes are right-aligned below the header."""
    rows = [header, *[[str(cell) for cell in row] for row in rows]]
    widths = [max(len(row[index]) for row in rows) for index in range(len(header))]
    lines = []
    for number, row in enumerate(rows):
        cells = [
            cell.rjust(widths[index]) if index in numeric and number else cell.ljust(widths[index])
            for index, cell in enumerate(row)
        ]
        lines.append("  ".join(cells).rstrip())
        if number == 0:
            lines.append("  ".join("-" * width for width in widths))
    return "\n".join(lines)


def status(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def verdict(failures: list[str], passed: str) -> str:
    """The closing line: FAIL with every failure, or PASS with `passed`."""
    return f"FAIL: {'; '.join(failures)}." if failures else f"PASS: {passed}"
