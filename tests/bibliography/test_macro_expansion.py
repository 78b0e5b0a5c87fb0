"""What `@string` macros and `#` expand to is bounded, field by field, entry by entry and for
the whole parse, and checked before the long string is built: a file that passes a bound is
refused on every write path with the line of the `@string` or entry, and nothing is stored."""

from __future__ import annotations

import io
import time
import tracemalloc

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from bibliography import services
from bibliography.models import BibEntry, BibFile
from bibliography.parsing import expanded_chars_limit, parse_bibtex
from bibliography.pybtex_reader import MAX_ENTRY_CHARS, MAX_FIELD_CHARS
from bibliography.services import BibParseStopped, bibfile_import
from notes.models import Note

OLD = "@book{old, title={The version before}, year=2001}\n"
# Macros that each double the last: a0 is 2 characters, a{k} is 2^(k+1).
DOUBLINGS = 24


def _doubling(levels: int = DOUBLINGS, titles: int = 3) -> str:
    """About 700 bytes that expand to `titles` titles of 2^(levels+1) characters each."""
    lines = ['@string{ a0 = "xx" }']
    lines += [f"@string{{ a{k} = a{k - 1} # a{k - 1} }}" for k in range(1, levels + 1)]
    lines += [f"@misc{{ title{i},\n  title = a{levels}\n}}" for i in range(titles)]
    return "\n".join(lines) + "\n"


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def _measured(text: str):
    """Parse under tracemalloc: (result, CPU seconds, peak traced bytes)."""
    tracemalloc.start()
    start = time.process_time()
    try:
        result = parse_bibtex(text)
        cpu = time.process_time() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, cpu, peak


def test_doubling_macros_are_refused_before_the_long_strings_are_built():
    """The attack (three titles of 33.5 M characters from about 700 bytes) stops at the first
    @string past the bound for one value, in little CPU time and memory: nothing is kept."""
    text = _doubling()
    assert len(text) < 1_000
    result, cpu, peak = _measured(text)
    assert result.stopped and result.entries == [] and result.preamble == []
    stop = result.problems[-1]
    # a20 is 2^21 characters, the bound itself; a21 would be twice that.
    assert MAX_FIELD_CHARS == 2**21
    assert stop.line == _line_of(text, "@string{ a21 ")
    assert "@string 'a21' expands to more than 2,097,152 characters" in stop.reason
    assert "nothing was imported" in stop.reason
    assert cpu < 1.0, f"{cpu:.2f} s of CPU"
    assert peak < 20 * 1024 * 1024, f"{peak / 1_048_576:.1f} MB at the peak"


def test_a_field_over_the_bound_names_its_entry_and_line():
    """A field that concatenates macros past MAX_FIELD_CHARS: the entry's line and name."""
    text = _doubling(levels=19, titles=0) + "@article{big,\n  title = a19 # a19 # a19\n}\n"
    result, _, peak = _measured(text)
    assert result.stopped and result.entries == []
    assert result.problems[-1].line == _line_of(text, "@article{big")
    assert "field 'title' of entry 'big' expands to more than" in result.problems[-1].reason
    assert peak < 20 * 1024 * 1024


def test_the_entry_bound_applies_after_expansion():
    """Two fields each within the value bound but together over MAX_ENTRY_CHARS: the entry's
    own text is short, yet the file is refused at its line."""
    text = (
        _doubling(levels=19, titles=0)
        + "@misc{fine, title = a18}\n"
        + "@misc{wide,\n  title = a19 # a18,\n  abstract = a19\n}\n"
    )
    assert len("@misc{wide,\n  title = a19 # a18,\n  abstract = a19\n}") < MAX_ENTRY_CHARS
    result, _, _ = _measured(text)
    assert result.stopped and result.entries == []
    assert result.problems[-1].line == _line_of(text, "@misc{wide")
    assert "the fields of entry 'wide' expand to more than 2,097,152" in result.problems[-1].reason


def test_the_whole_parse_is_bounded_by_what_it_builds():
    """Macros each within the value bound, none used twice by an entry, but together past
    expanded_chars_limit(text): refused at the @string that passes it."""
    copies = [f'@string{{ b{i} = a19 # "{i}" }}' for i in range(4)]
    text = _doubling(levels=19, titles=0) + "\n".join(copies) + "\n"
    assert expanded_chars_limit(text) == 2 * MAX_ENTRY_CHARS
    result, _, peak = _measured(text)
    assert result.stopped and result.entries == []
    assert result.problems[-1].line == _line_of(text, "@string{ b2 ")
    assert "the file's values expand to more than 4,194,304 characters" in (
        result.problems[-1].reason
    )
    assert peak < 20 * 1024 * 1024


def test_macros_within_the_bounds_are_read_as_before():
    """A megabyte macro used once, and ordinary journal macros, are kept as expanded."""
    text = (
        _doubling(levels=18, titles=0)
        + '@string{jacm = "Journal of the ACM"}\n'
        + "@article{long, title = a18, journal = jacm}\n"
        + '@article{short, title = "Short" # " title", journal = jacm}\n'
    )
    result = parse_bibtex(text)
    assert not result.stopped and result.problems == []
    long, short = result.entries
    assert len(long.fields["title"]) == 2**19 and long.fields["journal"] == "Journal of the ACM"
    assert short.fields["title"] == "Short title"


# --- Every write path ----------------------------------------------------------------------


@pytest.mark.django_db
def test_import_refuses_the_file_and_keeps_the_previous_version():
    """bibfile_import: BibParseStopped with the line; the old text and entries stay."""
    bibfile_import(name="bib/refs.bib", raw=OLD)
    text = _doubling()
    with pytest.raises(BibParseStopped) as raised:
        bibfile_import(name="bib/refs.bib", raw=text)
    assert str(raised.value).startswith(f"Line {_line_of(text, '@string{ a21 ')}: reading stopped")
    assert list(BibFile.objects.values_list("name", "raw")) == [("bib/refs.bib", OLD)]
    assert list(BibEntry.objects.values_list("key", flat=True)) == ["old"]


@pytest.mark.django_db
def test_import_bib_prints_the_line_and_stores_nothing(tmp_path):
    """`manage.py import_bib`: FILE:LINE: reason, an error, no file."""
    path = tmp_path / "refs.bib"
    text = _doubling()
    path.write_text(text)
    err = io.StringIO()
    with pytest.raises(CommandError, match="nothing was imported"):
        call_command("import_bib", str(path), stdout=io.StringIO(), stderr=err)
    assert err.getvalue().startswith(f"{path}:{_line_of(text, '@string{ a21 ')}: reading stopped")
    assert not BibFile.objects.exists()


def test_editor_upload_is_refused_on_the_form(client, author):
    """/write/bibliographies/: a 400 naming the line; no file is made."""
    client.force_login(author)
    upload = SimpleUploadedFile("refs.bib", _doubling().encode())
    response = client.post("/write/bibliographies/", {"name": "refs", "upload": upload})
    assert response.status_code == 400
    assert "Line 22: reading stopped here" in response.content.decode()
    assert not BibFile.objects.exists()


def test_editor_replace_keeps_the_file_as_it_was(client, author):
    """Replacing a file's text with the attack: refused, the old text and entries stay."""
    bibfile = services.bibfile_create(user=author, name="bib/mine.bib", raw=OLD).bibfile
    client.force_login(author)
    response = client.post(f"/write/bibliographies/{bibfile.pk}/", {"text": _doubling()})
    assert response.status_code == 400
    assert "expands to more than" in response.content.decode()
    bibfile.refresh_from_db()
    assert bibfile.raw == OLD
    assert list(bibfile.entries.values_list("key", flat=True)) == ["old"]


def test_admin_upload_is_an_error_on_the_form(client, admin_user):
    """The admin shows the reason on the form and stores nothing."""
    client.force_login(admin_user)
    upload = SimpleUploadedFile("refs.bib", _doubling().encode())
    response = client.post(
        reverse("admin:bibliography_bibfile_add"),
        {"name": "bib/refs.bib", "description": "", "raw": "", "upload": upload},
    )
    assert response.status_code == 200
    assert "expands to more than" in response.content.decode()
    assert not BibFile.objects.exists()


@pytest.mark.django_db
def test_hugo_import_reports_the_file_and_imports_the_rest(tmp_path):
    """import_hugo: the file is a problem of the load, with its line; the notes import."""
    site = tmp_path / "site"
    (site / "assets/bib").mkdir(parents=True)
    (site / "content/notes").mkdir(parents=True)
    (site / "hugo.toml").write_text('title = "Small"\n')
    (site / "assets/bib/refs.bib").write_text(_doubling())
    (site / "content/notes/one.md").write_text('+++\ntitle = "One"\ndate = 2024-01-01\n+++\nHi.\n')
    out = io.StringIO()
    call_command("import_hugo", str(site), stdout=out)
    assert not BibFile.objects.exists()
    assert Note.objects.filter(slug="one").exists()
    (line,) = [line for line in out.getvalue().splitlines() if "refs.bib" in line]
    assert "Line 22: reading stopped here" in line
