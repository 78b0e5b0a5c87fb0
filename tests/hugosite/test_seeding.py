"""seed_demo never overwrites what a person changed: `make run` runs it on
every start, and it used to reset settings, menus, entry sets and same-slug pages and undo an
edit saved in the editor. The demo loads into an empty site; later runs write only rows the
demo wrote and nobody changed since; a site with content the demo did not write gets nothing."""

from __future__ import annotations

import re
import shutil
import subprocess
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from bibliography.models import BibFile
from bibliography.services import bibfile_replace
from hugosite.models import DemoRow
from hugosite.reading import read_site
from hugosite.seeding import row_digest
from notes.models import Note, NoteRevision, Page
from notes.services import note_save
from scidraft.site.models import EntrySet, MenuItem, SiteSettings
from tests.conftest import ROOT
from tests.hugosite.test_seed_demo import snapshot

pytestmark = pytest.mark.django_db


def make_run_steps(*args: str) -> str:
    """What `make run` does to the database before serving: `make migrate demo`."""
    call_command("migrate", interactive=False, verbosity=0)
    out = StringIO()
    call_command("seed_demo", *args, stdout=out)
    return out.getvalue()


def test_make_run_migrates_then_runs_seed_demo_without_force():
    """The steps the tests below repeat are the Makefile's: migrate, seed_demo, runserver."""
    dry = subprocess.run(
        ["make", "-n", "run"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    steps = [line for line in dry.splitlines() if "manage.py" in line]
    assert [re.search(r"manage\.py (\w+)", line).group(1) for line in steps] == [
        "migrate",
        "seed_demo",
        "runserver",
    ]
    assert "--force" not in steps[1]


def test_make_run_again_keeps_every_edit_and_changes_nothing_else(
    demo_loaded, editor_user, tmp_path, settings
):
    """A note saved in the editor, the site settings, a menu item, an entry set and a page,
    changed by people after the demo loaded: running make run's steps again leaves every row
    as it was (before: each was reset to the demo's, the editor's save undone)."""
    note = Note.objects.published().order_by("slug").first()
    body = note.body + "\n\nA paragraph the author added.\n"
    saved = note_save(
        note_id=note.pk,
        user=editor_user,
        base_version=note.version,
        fields={"title": "Retitled in the editor", "body": body},
    )
    assert not saved.conflict
    site = SiteSettings.objects.current()
    site.title, site.notes_per_page = "Our Lab Notebook", 5
    site.save()
    item = MenuItem.objects.get(identifier="notes")
    item.name = "Writing"
    item.save()
    entry_set = EntrySet.objects.get(key="results")
    entry_set.count_label = "Findings"
    entry_set.save()
    page = Page.objects.get(slug="about")
    page.body = "About our lab, in our words."
    page.save()
    edited = snapshot()

    output = make_run_steps()

    assert snapshot() == edited
    newest = NoteRevision.objects.filter(note=note).order_by("-number").first()
    assert (newest.title, newest.body, newest.created_by) == (
        "Retitled in the editor",
        body,
        editor_user,
    )
    assert SiteSettings.objects.current().title == "Our Lab Notebook"
    assert MenuItem.objects.get(identifier="notes").name == "Writing"
    assert EntrySet.objects.get(key="results").count_label == "Findings"
    assert Page.objects.get(slug="about").body == "About our lab, in our words."
    for line in (
        "settings: kept (changed since the demo loaded it); would be updated: "
        "title 'Our Lab Notebook' → 'Halden Notes', notes_per_page 5 → 8",
        "menu item notes: kept (changed since the demo loaded it); would be updated: "
        "name 'Writing' → 'Notes'",
        "entry set results: kept (changed since the demo loaded it)",
        "page about: kept (changed since the demo loaded it); would be updated: body",
    ):
        assert line in output
    assert "created" not in output and "updated:" not in output.replace("be updated:", "")

    # A new version of that note in the demo (as after a `git pull`) does not replace the
    # edit either. (The live note differs from the demo's only if saves change it at once;
    # with a working copy they do not, hence this second run.)
    demo = tmp_path / "demo"
    shutil.copytree(settings.SCIDRAFT_DEMO_DIR, demo)
    source = demo / next(item.path for item in read_site(demo).notes if item.slug == note.slug)
    source.write_text(source.read_text() + "\nA paragraph the demo added.\n")
    output = make_run_steps("--dir", str(demo))
    assert snapshot() == edited
    assert re.search(
        rf"note {note.slug}: kept \(changed since the demo loaded it\); "
        r"would be updated: (title, )?body\n",
        output,
    )


# --- A demo that changes between runs ---------------------------------------------------------


def demo_site(root: Path, version: int) -> Path:
    """A small demo in two versions: version 2 edits every note and the settings, renames a
    menu item, drops another, and adds a note."""
    (root / "content/notes").mkdir(parents=True, exist_ok=True)
    (root / "assets/bib").mkdir(parents=True, exist_ok=True)
    (root / "hugo.toml").write_text(
        f'title = "Demo v{version}"\n'
        "[params.entrySets.results]\n"
        'titleField = "resultTitle"\n'
        "[[menu.main]]\n"
        'identifier = "notes"\n'
        f'name = "Notes v{version}"\n'
        'url = "/notes/"\n'
        + (
            '[[menu.main]]\nidentifier = "old"\nname = "Old"\nurl = "/old/"\n'
            if version == 1
            else ""
        )
    )
    (root / "assets/bib/refs.bib").write_text(f"@misc{{k1, title={{Ref v{version}}}}}\n")
    (root / "assets/bib/more.bib").write_text(f"@misc{{m1, title={{More v{version}}}}}\n")
    slugs = ["alpha", "beta", "gamma"] + (["delta"] if version == 2 else [])
    for slug in slugs:
        (root / f"content/notes/{slug}.md").write_text(
            f'+++\ntitle = "{slug.title()}"\ndate = 2025-01-01\n+++\n{slug} text v{version}.\n'
        )
    (root / "content/about.md").write_text(f'+++\ntitle = "About"\n+++\nAbout v{version}.\n')
    return root


def test_a_new_demo_updates_only_the_rows_nobody_changed(tmp_path, editor_user):
    """Rows the demo wrote and nobody changed follow the new demo; a note edited in the editor
    and a bibliography file replaced there stay; a demo note someone deleted is not recreated;
    a menu entry a person added stays, the one the demo dropped goes; a new demo note is
    created."""
    root = demo_site(tmp_path / "demo", 1)
    make_run_steps("--dir", str(root))
    more = BibFile.objects.get(name="bib/more.bib")
    bibfile_replace(user=editor_user, bibfile_id=more.pk, raw="@misc{m1, title={Ours}}\n")
    alpha = Note.objects.get(slug="alpha")
    note_save(
        note_id=alpha.pk,
        user=editor_user,
        base_version=alpha.version,
        fields={"body": "Alpha, as its author rewrote it."},
    )
    Note.objects.filter(slug="beta").delete()
    MenuItem.objects.create(identifier="wiki", name="Wiki", url="/wiki/")
    alpha_state = Note.objects.filter(slug="alpha").values().get()

    output = make_run_steps("--dir", str(demo_site(root, 2)))

    assert Note.objects.filter(slug="alpha").values().get() == alpha_state
    assert not Note.objects.filter(slug="beta").exists()
    assert Note.objects.get(slug="gamma").body == "gamma text v2.\n"
    assert Note.objects.get(slug="delta").body == "delta text v2.\n"
    assert Page.objects.get(slug="about").body == "About v2.\n"
    assert SiteSettings.objects.current().title == "Demo v2"
    assert BibFile.objects.get(name="bib/refs.bib").raw == "@misc{k1, title={Ref v2}}\n"
    assert BibFile.objects.get(name="bib/more.bib").raw == "@misc{m1, title={Ours}}\n"
    assert "bibliography file bib/more.bib: kept (changed since the demo loaded it)" in output
    assert sorted(MenuItem.objects.values_list("identifier", "name")) == [
        ("notes", "Notes v2"),
        ("wiki", "Wiki"),
    ]
    assert "note alpha: kept (changed since the demo loaded it); would be updated: body" in output
    assert "note beta: kept (deleted since the demo loaded it); would be created" in output
    assert "wiki" not in output  # not the demo's business
    from hugosite.models import DemoRow  # (item 13 added it)

    assert not DemoRow.objects.filter(kind="menus", key="old").exists()
    # And the run after that changes nothing at all.
    again = snapshot()
    make_run_steps("--dir", str(root))
    assert snapshot() == again


def test_an_autosave_alone_makes_a_note_the_authors(tmp_path, editor_user):
    """An autosave of a published note leaves its public text as it was, but it is a
    person's work too: a new demo does not update that note."""
    root = demo_site(tmp_path / "demo", 1)
    make_run_steps("--dir", str(root))
    alpha = Note.objects.get(slug="alpha")
    assert alpha.status == "published"
    note_save(
        note_id=alpha.pk,
        user=editor_user,
        base_version=alpha.version,
        fields={"body": "Half-written new text."},
        kind=NoteRevision.Kind.AUTOSAVE,
    )
    edited = Note.objects.filter(slug="alpha").values().get()
    output = make_run_steps("--dir", str(demo_site(root, 2)))
    assert Note.objects.filter(slug="alpha").values().get() == edited
    assert Note.objects.get(slug="gamma").body == "gamma text v2.\n"
    assert "note alpha: kept (changed since the demo loaded it); would be updated: body" in output


def test_a_site_with_content_the_demo_did_not_write_gets_nothing(tmp_path):
    """A site with its own notes and settings (and no record of the demo) is left exactly as
    it is, with a message saying so; --force adds the demo's missing rows and still changes
    no existing row."""
    own = demo_site(tmp_path / "own", 1)
    call_command("import_hugo", str(own), stdout=StringIO())
    Note.objects.filter(slug="alpha").update(body="Our own alpha.")
    before = snapshot()
    demo = demo_site(tmp_path / "demo", 2)

    output = make_run_steps("--dir", str(demo))

    assert "The site has content the demo did not write" in output
    assert "the demo was not loaded and nothing changed" in output and "--force" in output
    assert snapshot() == before

    forced = make_run_steps("--dir", str(demo), "--force")
    assert Note.objects.get(slug="alpha").body == "Our own alpha."
    assert SiteSettings.objects.current().title == "Demo v1"
    assert Note.objects.get(slug="delta").body == "delta text v2.\n"  # missing: added
    assert "note alpha: kept (not the demo's); would be updated: body" in forced
    assert "settings: kept (not the demo's)" in forced


def test_the_demo_leaves_the_address_blank_so_links_use_the_requests_host(client):
    """After seed_demo the site has no address of its own: feeds, sitemap and canonical URLs
    use the host the reader asked (a local install never links to the demo's deployment)."""
    make_run_steps()
    assert SiteSettings.objects.current().base_url == ""
    host = {"HTTP_HOST": "127.0.0.1:8000"}
    feed = client.get("/index.xml", **host).content.decode()
    assert "http://127.0.0.1:8000/notes/" in feed and "halden.example" not in feed
    note = Note.objects.published().order_by("slug").first()
    page = client.get(f"/notes/{note.slug}/", **host).content.decode()
    canonical = f'<link rel="canonical" href="http://127.0.0.1:8000/notes/{note.slug}/">'
    assert canonical in page and "halden.example" not in page


def test_an_address_the_operator_set_is_kept_by_seed_demo():
    """A base URL set by a person after the demo loaded stays through make run's steps."""
    make_run_steps()
    site = SiteSettings.objects.current()
    site.base_url = "https://notes.example.org/"
    site.save()
    make_run_steps()
    assert SiteSettings.objects.current().base_url == "https://notes.example.org/"


def test_the_demos_address_written_by_an_earlier_seed_demo_is_cleared():
    """A settings row holding the demo's address, as the demo wrote it and nobody changed
    since, loses that address on the next make run."""
    make_run_steps()
    site = SiteSettings.objects.current()
    site.base_url = "https://notes.halden.example/"
    site.save()
    DemoRow.objects.filter(kind="settings").update(digest=row_digest(SiteSettings.objects.get()))
    make_run_steps()
    assert SiteSettings.objects.current().base_url == ""
