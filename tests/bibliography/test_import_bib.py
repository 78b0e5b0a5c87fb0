"""`manage.py import_bib FILE [--name bib/x.bib]`."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from bibliography.models import BibEntry, BibFile

# Entries counted independently of the parser: an @type{key, at the start of a line.
ENTRY_KEY = re.compile(
    r"^[ \t]*@(?!string\b|comment\b|preamble\b)\w+\s*[{(]\s*([^,\s]+)\s*,", re.I | re.M
)
CLEAN = "@article{a, title={First}, year=2001}\n@book{b, title={Second}, year=2002}\n"
BROKEN = (
    "@article{a, title={First}}\n"
    "@article{b, title={unclosed}\n"
    "@book{c, title={Third}}\n"
    "@article{A, title={again}}\n"
)


def _run(*args, **options):
    """Run the command; (stdout, stderr, the CommandError or None)."""
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("import_bib", *args, stdout=out, stderr=err, **options)
    except CommandError as error:
        return out.getvalue(), err.getvalue(), error
    return out.getvalue(), err.getvalue(), None


@pytest.mark.django_db
def test_clean_file_is_imported_under_bib_and_its_file_name(tmp_path):
    """Default name bib/<file name>; entries counted on stdout; nothing on stderr."""
    path = tmp_path / "refs.bib"
    path.write_text(CLEAN)
    out, err, error = _run(str(path))
    assert error is None and err == ""
    assert out.strip() == "2 entries kept (created) in bib/refs.bib"
    bibfile = BibFile.objects.get(name="bib/refs.bib")
    assert bibfile.raw == CLEAN
    assert list(bibfile.entries.values_list("key", flat=True)) == ["a", "b"]


@pytest.mark.django_db
def test_name_option_and_reimport_outcomes(tmp_path):
    """--name chooses the name; the same file again is unchanged, an edited one updated."""
    path = tmp_path / "x.bib"
    path.write_text(CLEAN)
    assert (
        "(created) in bib/library/main.bib" in _run(str(path), "--name", "bib/library/main.bib")[0]
    )
    assert _run(str(path), name="bib/library/main.bib")[0].startswith("2 entries kept (unchanged)")
    path.write_text(CLEAN + "@misc{c, note={new}}\n")
    assert _run(str(path), name="bib/library/main.bib")[0].startswith("3 entries kept (updated)")
    assert BibEntry.objects.filter(bibfile__name="bib/library/main.bib").count() == 3


@pytest.mark.django_db
def test_failed_blocks_are_listed_as_file_line_key_reason_and_exit_1(tmp_path):
    """Every problem on stderr as FILE:LINE: key: reason; exit code 1; the rest kept."""
    path = tmp_path / "broken.bib"
    path.write_text(BROKEN)
    out, err, error = _run(str(path))
    assert out.strip() == "2 entries kept (created) in bib/broken.bib"
    assert err.splitlines() == [
        f"{path}:2: b: unbalanced braces: the entry is never closed before the next @",
        f"{path}:4: A: duplicate key: first defined on line 1; this one is ignored",
    ]
    assert error is not None and error.returncode == 1
    assert "2 block(s)" in str(error)
    assert set(BibEntry.objects.values_list("key", flat=True)) == {"a", "c"}


@pytest.mark.django_db
def test_an_unchanged_reimport_still_reports_and_fails(tmp_path):
    """Importing the same broken file twice prints the stored report again."""
    path = tmp_path / "broken.bib"
    path.write_text(BROKEN)
    _run(str(path))
    out, err, error = _run(str(path))
    assert "(unchanged)" in out and len(err.splitlines()) == 2 and error is not None


@pytest.mark.django_db
def test_a_problem_without_a_key_omits_the_key(tmp_path):
    """A block with no key (or text outside entries) prints FILE:LINE: reason."""
    path = tmp_path / "nokey.bib"
    path.write_text("@article{, title={x}}\n@book{b, title={y}}\n")
    _, err, error = _run(str(path))
    assert err.startswith(f"{path}:1: missing key:") and error is not None


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("@article{a, title={Caf\u00e9}}".encode("latin-1"), "is not UTF-8 text"),
        (b"@article{a, title={x}}\x00\x00", "binary data"),
    ],
    ids=["latin-1", "binary"],
)
def test_undecodable_files_are_refused_clearly(tmp_path, content, message):
    """Non-UTF-8 and binary files: a clear error naming the file, exit 1, nothing stored."""
    path = tmp_path / "bad.bib"
    path.write_bytes(content)
    _, _, error = _run(str(path))
    assert error is not None and error.returncode == 1
    assert str(error).startswith(f"{path}: ") and message in str(error)
    assert not BibFile.objects.exists()


@pytest.mark.django_db
def test_oversized_files_are_refused_before_reading(tmp_path, settings):
    """Over SCIDRAFT_BIB_MAX_BYTES: the size error, nothing stored."""
    settings.SCIDRAFT_BIB_MAX_BYTES = 1024
    path = tmp_path / "big.bib"
    path.write_text(CLEAN * 100)
    _, _, error = _run(str(path))
    assert error is not None and "the limit is 0.0 MB" in str(error)
    assert not BibFile.objects.exists()


@pytest.mark.django_db
def test_missing_or_unreadable_files_are_refused_clearly(tmp_path):
    """A path that is not a readable file: "cannot read", exit 1."""
    for path in (tmp_path / "absent.bib", tmp_path):
        _, _, error = _run(str(path))
        assert error is not None and str(error).startswith(f"cannot read {path}")


@pytest.mark.django_db
def test_an_invalid_name_is_refused(tmp_path):
    """--name must be a relative .bib path."""
    path = tmp_path / "x.bib"
    path.write_text(CLEAN)
    _, _, error = _run(str(path), name="../x.bib")
    assert error is not None and "not a valid bibliography name" in str(error)


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["refs.bib", "survey-refs-02.bib"])
def test_example_site_files_import_with_every_distinct_entry_kept(example_site, tmp_path, name):
    """The theme's real files: every distinct key kept, each repetition in the report."""
    path = example_site / "assets" / "bib" / name
    keys = ENTRY_KEY.findall(path.read_text(encoding="utf-8"))
    distinct = {key.lower(): key for key in reversed(keys)}  # the first spelling wins
    repeats = len(keys) - len(distinct)
    out, err, error = _run(str(path))
    assert out.strip() == f"{len(distinct)} entries kept (created) in bib/{name}"
    stored = set(BibEntry.objects.filter(bibfile__name=f"bib/{name}").values_list("key", flat=True))
    assert stored == set(distinct.values())
    report = err.splitlines()
    assert len(report) == repeats
    assert all(": duplicate key: first defined on line " in line for line in report)
    assert (error is not None) == (repeats > 0)
    if repeats:
        repeated = [
            key
            for index, key in enumerate(keys)
            if key.lower() in {k.lower() for k in keys[:index]}
        ]
        assert sorted(line.split(": ")[1] for line in report) == sorted(repeated)
