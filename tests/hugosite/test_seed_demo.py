"""`manage.py seed_demo`: the demo site loads, covers every syntax, and loads only once."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command

from bibliography.models import BibFile
from notes.models import Environment, Note, NoteRevision, Page
from scidraft.site.models import EntrySet, MenuItem, SiteSettings

FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```", re.M | re.S)
REFERENCES = re.compile(r'\{\{<\s*references\s+[^>]*bib="([^"]+)"')


def snapshot() -> dict:
    """Every row of every SciDraft content model, with all its field values, and the record
    of what the demo wrote."""
    rows = {}
    for label in ("notes", "bibliography", "site", "hugosite"):
        for model in apps.get_app_config(label).get_models():
            rows[model._meta.label] = sorted(
                tuple(sorted((k, repr(v)) for k, v in row.items()))
                for row in model.objects.values()
            )
    return rows


@pytest.mark.slow
@pytest.mark.django_db
def test_seed_demo_twice_changes_nothing():
    """The second run reports only "unchanged" and leaves every row as it was."""
    call_command("seed_demo", stdout=StringIO())
    before = snapshot()
    out = StringIO()
    call_command("seed_demo", stdout=out)
    assert "created" not in out.getvalue() and "updated" not in out.getvalue()
    assert snapshot() == before


@pytest.mark.django_db
def test_demo_site_settings_menus_and_entry_sets_are_loaded(demo_loaded):
    """Identity, feed options, menus with children and the two entry sets, as the theme's demo."""
    site = SiteSettings.objects.current()
    assert site.title == "Halden Notes"
    assert (site.notes_per_page, site.promotions_per_page, site.promotion_positions) == (
        8,
        1,
        "3-5",
    )
    assert site.institute and site.author == "halden-lab"
    parents = MenuItem.objects.main().top_level()
    assert parents.filter(url="").exists(), "a parent entry without URL (a label)"
    assert MenuItem.objects.filter(parent__isnull=False).count() >= 4
    assert set(EntrySet.objects.values_list("key", flat=True)) == {"results", "methods"}


@pytest.mark.django_db
def test_demo_content_uses_every_syntax_of_the_theme(demo_loaded):
    """Together the demo notes use every syntax of the theme (docs/theme.md#body-syntax)."""
    notes = list(Note.objects.all())
    bodies = "\n".join(note.body for note in notes)
    assert len(notes) >= 25
    assert Page.objects.count() >= 2

    # All four math delimiters, and an align-style environment.
    assert "\\(" in bodies and "\\[" in bodies and "$$" in bodies
    assert re.search(r"(?<![\\$])\$[^$\s][^$\n]*\$(?!\$)", bodies), "inline $…$ math"
    assert "\\begin{align" in bodies

    # Bold lead-in environments of at least 12 kinds.
    labels = "|".join(Environment.objects.values_list("label", flat=True))
    kinds = set(re.findall(rf"^\*\*({labels})(?: \([^)]*\))?\.\*\*", bodies, re.M))
    assert len(kinds) >= 12, kinds

    # A note with two reference lists drawn from two bibliography files.
    assert any(len(set(REFERENCES.findall(note.body))) >= 2 for note in notes)

    fences = FENCE.findall(bodies)
    mermaid_types = {code.split()[0] for lang, code in fences if lang == "mermaid"}
    assert len(mermaid_types) >= 6, mermaid_types
    assert sum(1 for lang, _ in fences if lang == "pseudo-algorithm") >= 4
    languages = {lang for lang, _ in fences} - {"", "mermaid", "pseudo-algorithm", "text"}
    assert len(languages) >= 3, languages
    assert any("├──" in code for lang, code in fences if lang in {"bash", "text"}), "folder tree"

    assert "{.table-academic}" in bodies and "{.table-striped}" in bodies
    assert re.search(r"^\|.*\|\n\|[ :|-]+\|\n(?:\|.*\|\n)++(?!\{\.table)", bodies, re.M), (
        "a default table"
    )
    assert "{{< preview >}}" in bodies and "{{< /preview >}}" in bodies
    assert any(note.promotion and "promotion-textual" in note.body for note in notes)

    for entry_set in EntrySet.objects.all():
        members = [note for note in notes if entry_set.title_field in note.params]
        assert len(members) >= 5, entry_set.key

    # A draft and a scheduled note show both states.
    assert any(note.status == "draft" for note in notes)
    assert Note.objects.scheduled().exists()


@pytest.mark.django_db
def test_demo_bibliographies_have_thirty_entries_each_and_every_cited_key_resolves(demo_loaded):
    """Two files of 30+ entries; every \\cite key in the demo exists in the file of the list
    that takes it, except the one key that demonstrates a missing reference."""
    files = {bibfile.name: bibfile for bibfile in BibFile.objects.all()}
    assert len(files) == 2
    assert all(bibfile.entry_count >= 30 and not bibfile.parse_report for bibfile in files.values())
    missing = set()
    for note in Note.objects.all():
        pending: list[str] = []
        body = FENCE.sub("", note.body)  # citations in code stay literal
        for token in re.finditer(r"\\cite\{([^}]*)\}|" + REFERENCES.pattern, body):
            if token.group(1) is not None:
                pending.extend(key.strip() for key in token.group(1).split(","))
            else:
                keys = set(files[token.group(2)].entries.values_list("key", flat=True))
                missing |= {key for key in pending if key not in keys}
                pending = []
    assert missing == {"Nobody1999-xx"}


@pytest.mark.django_db
def test_demo_notes_record_an_import_revision_each(demo_loaded):
    """Loading writes through the services: every note has its first revision."""
    assert NoteRevision.objects.filter(kind="import").count() == Note.objects.count()


@pytest.mark.django_db
def test_broken_files_are_reported_and_the_rest_loads(tmp_path):
    """A note with broken front matter is named with its line; the good note still loads."""
    notes = tmp_path / "content" / "notes"
    notes.mkdir(parents=True)
    (tmp_path / "hugo.toml").write_text('title = "Tiny"\n')
    (notes / "good.md").write_text('+++\ntitle = "Good"\ndate = 2026-10-01\n+++\nHello.\n')
    (notes / "bad.md").write_text('+++\ntitle = "Bad\n+++\n')
    out = StringIO()
    with pytest.raises(CommandError, match="1 problem"):
        call_command("seed_demo", "--dir", str(tmp_path), stdout=out)
    assert "content/notes/bad.md:2" in out.getvalue()
    assert Note.objects.filter(slug="good").exists()
