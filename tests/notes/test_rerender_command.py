"""`manage.py rerender --check`: which rows an engine upgrade changes, with nothing written."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from notes.models import Note
from scidraft.markup import ENGINE_VERSION
from tests.cited_files import bibfile, published, replace_title, require_review

__all__ = ["bibfile", "published"]  # fixtures


def _check(*args) -> str:
    out = StringIO()
    call_command("rerender", "--check", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_check_lists_rows_whose_html_would_change_and_writes_nothing(demo_loaded):
    """A row rendered by an older engine whose HTML differs is listed with where it changes;
    its stored render, version and hash stay as they were."""
    note = Note.objects.order_by("slug").first()
    Note.objects.filter(pk=note.pk).update(
        render_version="3", rendered_html="<p>rendered by engine 3</p>"
    )
    stored = Note.objects.values("rendered_html", "render_version", "source_hash").get(pk=note.pk)
    out = _check()
    assert f"note {note.slug}: html would change (engine 3 → {ENGINE_VERSION})" in out
    assert "'<p>rendered by engine 3</p>'" in out
    assert out.rstrip().endswith(
        f"1 of 1 rows checked would change (engine {ENGINE_VERSION}); nothing was written."
    )
    after = Note.objects.values("rendered_html", "render_version", "source_hash").get(pk=note.pk)
    assert after == stored


@pytest.mark.django_db
def test_check_passes_over_current_rows_unless_all(demo_loaded):
    """Current rows are not rendered for the check; with --all every row is, and a render
    that comes out the same is not listed."""
    assert _check().rstrip().startswith("0 of 0 rows checked")
    out = _check("--all")
    assert not [line for line in out.splitlines() if line.startswith(("note ", "page "))]
    assert out.startswith("0 of ") and not out.startswith("0 of 0 ")


@pytest.mark.django_db
def test_a_stale_row_whose_html_is_unchanged_is_counted_not_listed(demo_loaded):
    """An older version stamp alone (same HTML) is checked but changes nothing."""
    note = Note.objects.order_by("slug").first()
    Note.objects.filter(pk=note.pk).update(render_version="3")
    out = _check()
    assert note.slug not in out
    assert out.rstrip().startswith("0 of 1 rows checked")


@pytest.mark.django_db
def test_check_lists_a_note_whose_search_text_alone_would_change(demo_loaded):
    """The search text (search, word counts, index.json) is compared too: an engine that reads
    references as their labels in it changes no HTML but must still be reported."""
    note = Note.objects.order_by("slug").first()
    Note.objects.filter(pk=note.pk).update(render_version="3", rendered_text="old words")
    out = _check()
    assert f"note {note.slug}: search text would change (engine 3 → {ENGINE_VERSION})" in out
    assert "'old words'" in out
    assert Note.objects.get(pk=note.pk).rendered_text == "old words"


@pytest.mark.django_db
def test_check_names_each_ref_that_printed_its_kind(author):
    """`\\ref` prints the number alone since engine 8, as LaTeX does; --check names each one
    that printed the kind before (its note, line and both readings) and the \\Cref that reads
    as it did. References to equations, in code and through \\Cref are not named."""
    from notes.services import note_create, note_render_store

    note = note_create(user=author, title="Refs")
    body = (
        ":::lemma{#lem-a}\nTrue.\n:::\n\n$$\nx = 1 \\label{eq:x}\n$$\n\n"
        "By \\ref{lem-a} and \\ref{eq:x}, see \\Cref{lem-a}.\n\n`\\ref{lem-a}` in code.\n"
    )
    Note.objects.filter(pk=note.pk).update(body=body)
    note.refresh_from_db()
    note_render_store(note=note, force=True)
    Note.objects.filter(pk=note.pk).update(render_version="7")
    out = _check()
    named = [line for line in out.splitlines() if "\\ref{" in line]
    assert named == [
        f'note {note.slug}: line 9: \\ref{{lem-a}} now prints "1" where it printed "Lemma 1"; '
        'write \\Cref{lem-a} to keep "Lemma 1"'
    ]


def test_check_renders_a_live_version_from_its_kept_entries(author, published, bibfile):
    """Under require review, a published note whose cited file changed since is checked as
    readers see it (its kept entries): its HTML would not change."""
    require_review()
    replace_title(author, bibfile, "Literate Programming Revisited")
    out = _check("--all")
    assert f"note {published.slug}" not in out
    assert "0 of" in out


@pytest.mark.django_db
def test_check_names_no_ref_to_a_figure_or_table(author):
    """A `\\ref` to a figure or table, of the note or of another one, never printed a kind,
    so --check names none of them."""
    from notes.services import note_create, note_publish, note_render_store, note_save

    other = note_create(user=author, title="Plots")
    other = note_save(
        note_id=other.pk, user=author, base_version=other.version,
        fields={"body": "![P](p.png){#fig:p}\n"},
    ).note  # fmt: skip
    note_publish(note_id=other.pk, user=author, base_version=other.version)
    note = note_create(user=author, title="Figure refs")
    body = (
        "![A](a.png){#fig:a}\n\nTable: T {#tbl:t}\n\n| a |\n|---|\n| 1 |\n\n"
        "By \\ref{fig:a}, \\ref{tbl:t} and \\ref{plots:fig:p}.\n"
    )
    Note.objects.filter(pk=note.pk).update(body=body)
    note.refresh_from_db()
    note_render_store(note=note, force=True)
    assert Note.objects.get(pk=note.pk).render_refs["plots:fig:p"]["text"] == "Figure 1"
    Note.objects.filter(pk=note.pk).update(render_version="8")
    out = _check()
    assert "rows checked" in out
    assert [line for line in out.splitlines() if "\\ref{" in line] == []


@pytest.mark.django_db
def test_rerender_reports_its_progress_on_stderr(demo_loaded):
    """`rerender --all` writes its progress on stderr (a line, as stderr is no terminal here)
    and its summary on stdout."""
    out, err = StringIO(), StringIO()
    call_command("rerender", "--all", "--workers", "2", stdout=out, stderr=err)
    count = Note.objects.count()
    assert f"notes: {count:,}/{count:,} notes (100%)" in err.getvalue()
    assert "done in" in err.getvalue()
    assert out.getvalue().startswith(f"{count} notes and ")


@pytest.mark.django_db
def test_rerender_refuses_fewer_than_one_worker():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="at least 1"):
        call_command("rerender", "--workers", "0", stdout=StringIO(), stderr=StringIO())
