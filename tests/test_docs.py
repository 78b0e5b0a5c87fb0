"""README.md and docs/: short README, links that resolve in a clone, no machine paths or
history."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

from tests.conftest import ROOT

DOCS = sorted((ROOT / "docs").glob("*.md"))
DOCUMENTS = [ROOT / "README.md", *DOCS]

_FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")
# Where a developer's files live, never a clone's or a server's.
_MACHINE_PATH = re.compile(
    r"(?<![\w.~-])(?:/work/|/home/|/Users/|/root/|/tmp/|/private/var/|/mnt/|[A-Z]:\\\\Users)"
)
# History: numbered issues and working sessions belong to the tracker, not to the docs.
_HISTORY = re.compile(r"\b(?:issue|session)s?\s*#?\d+|\(#\d+\)", re.IGNORECASE)


def _prose(text: str) -> str:
    """The text without fenced blocks and code spans (where a link is an example)."""
    return _CODE_SPAN.sub("", _FENCE.sub("", text))


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, markup and punctuation dropped, spaces
    as hyphens."""
    text = re.sub(r"`([^`]*)`", r"\1", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    kept = []
    for char in text:
        if char in " -_" or unicodedata.category(char)[0] in "LNM":
            kept.append("-" if char == " " else char)
    return "".join(kept)


def anchors(path: Path) -> set[str]:
    text = _FENCE.sub("", path.read_text())
    seen: dict[str, int] = {}
    found = set(_ANCHOR.findall(text))
    for heading in _HEADING.findall(text):
        slug = github_slug(heading)
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def links(path: Path) -> list[str]:
    return _LINK.findall(_prose(path.read_text()))


def test_the_readme_is_at_most_200_lines():
    """The README stays an overview; the detail goes to docs/."""
    lines = (ROOT / "README.md").read_text().count("\n")
    assert lines <= 200, f"README.md has {lines} lines; move detail to docs/"


def test_the_readme_indexes_every_document():
    """Each docs/*.md is linked from the README's index."""
    linked = {target.split("#")[0] for target in links(ROOT / "README.md")}
    missing = [p.name for p in DOCS if f"docs/{p.name}" not in linked]
    assert not missing, f"not linked from README.md: {missing}"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_every_relative_link_resolves_to_a_file_and_heading(document):
    """A relative link names a file of the clone, and its #fragment a heading (or an explicit
    anchor) of that file."""
    broken = []
    for target in links(document):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path_part, _, fragment = target.partition("#")
        destination = (document.parent / path_part).resolve() if path_part else document
        if not destination.exists() or ROOT.resolve() not in destination.parents:
            broken.append(f"{target}: no such file")
            continue
        if fragment and destination.suffix == ".md" and fragment not in anchors(destination):
            broken.append(f"{target}: no heading #{fragment} in {destination.name}")
    assert not broken, f"{document.name}: {broken}"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_no_document_names_a_machine_path_or_history(document):
    """No path of a developer's machine, no numbered issue or session."""
    text = document.read_text()
    paths = sorted({m.group(0) for m in _MACHINE_PATH.finditer(text)})
    history = sorted({m.group(0) for m in _HISTORY.finditer(text)})
    assert not paths, f"{document.name} names machine paths: {paths}"
    assert not history, f"{document.name} names history: {history}"


SOURCE_SUFFIXES = {".py", ".js", ".mjs", ".css", ".html", ".md", ".sh", ".yml", ".toml"}
SKIPPED = {".git", ".venv", "node_modules", "vendor", "staticfiles", "media", "test-artifacts"}
_DOC_REFERENCE = re.compile(r"docs/([\w.-]+\.md)((?:#[\w-]+)(?:,\s*#[\w-]+)*)?")


def sources() -> list[Path]:
    found = []
    for path in ROOT.rglob("*"):
        parts = set(path.relative_to(ROOT).parts)
        if path.suffix in SOURCE_SUFFIXES and path.is_file() and not parts & SKIPPED:
            found.append(path)
    return found


def test_every_reference_to_docs_in_the_code_resolves():
    """Each `docs/<file>.md#anchor` a comment cites names a document and headings it has, and
    nothing cites the theme's specification, which a clone does not have."""
    broken, spec = [], []
    for path in sources():
        text = path.read_text(errors="replace")
        if "theme-spec" in text and path != Path(__file__):
            spec.append(str(path.relative_to(ROOT)))
        for name, fragments in _DOC_REFERENCE.findall(text):
            document = ROOT / "docs" / name
            if not document.exists():
                broken.append(f"{path.relative_to(ROOT)}: docs/{name}")
                continue
            for fragment in re.findall(r"#([\w-]+)", fragments or ""):
                if fragment not in anchors(document):
                    broken.append(f"{path.relative_to(ROOT)}: docs/{name}#{fragment}")
    assert not spec, f"cite docs/theme.md instead of the theme's specification: {spec}"
    assert not broken, f"references to docs that do not resolve: {broken}"


def test_the_code_names_no_numbered_issue():
    """Comments say why, not which ticket: no "issue N" in the code (a library's own tracker,
    "its issue N", excepted)."""
    pattern = re.compile(r"(?<!its )\b(?:issues?\s+#?\d+|issue #\d+)|\(#\d+\)", re.IGNORECASE)
    found = []
    for path in sources():
        if path.suffix == ".md" or path == Path(__file__):
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if pattern.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}")
    assert not found, f"numbered issues in the code: {found}"


def test_the_code_names_no_path_of_a_developers_machine():
    """No source file names where a developer keeps their files (/work/, /home/, /Users/)."""
    pattern = re.compile(r"(?<![\w.~-])(?:/work/|/home/|/Users/)")
    found = []
    for path in sources():
        if path == Path(__file__):
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if pattern.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}")
    assert not found, f"machine paths in the code: {found}"


def test_the_checks_catch_what_they_are_for(tmp_path):
    """The link, anchor, path and history checks each fail on a bad example."""
    (tmp_path / "a.md").write_text("# Title: one, two\n\n## Same\n\n## Same\n")
    assert anchors(tmp_path / "a.md") == {"title-one-two", "same", "same-1"}
    bad = tmp_path / "b.md"
    bad.write_text("[x](a.md#nope) [y](gone.md) `[z](ignored.md)` ![i](a.md)\n")
    assert links(bad) == ["a.md#nope", "gone.md", "a.md"]
    assert _MACHINE_PATH.search("see /home/me/x and /work/wt")
    assert not _MACHINE_PATH.search("/data/media and deploy/nginx.conf")
    assert _HISTORY.search("as in issue 16") and _HISTORY.search("Session 3")
    assert not _HISTORY.search("the session's cookie")
