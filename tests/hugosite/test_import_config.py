"""`import_hugo` into a site that has content: it says what it will change
(`--dry-run` prints it), and the site's own settings, menus and entry sets are replaced only
when a `--replace-…` flag asks for it; notes and pages import as always."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from hugosite.site_config import MenuEntry, SiteConfig
from notes.models import Note, Page
from scidraft.site.models import EntrySet, MenuItem, SiteSettings

pytestmark = pytest.mark.django_db

HUGO_TOML = """\
title = "Small Lab"
[params]
author = "lab"
institute = "Small Institute"
[params.feed]
notesPerPage = 6
[params.entrySets.results]
titleField = "resultTitle"
countLabel = "Results"
[[menu.main]]
identifier = "notes"
name = "Notes"
url = "/notes/"
weight = 10
[[menu.main]]
identifier = "about"
name = "About"
url = "/about/"
weight = 20
"""


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def hugo_site(root: Path) -> Path:
    (root / "content/notes").mkdir(parents=True)
    (root / "hugo.toml").write_text(HUGO_TOML)
    (root / "content/notes/first.md").write_text(
        '+++\ntitle = "First"\ndate = 2026-01-02\ntags = ["a"]\n+++\nOne.\n'
    )
    (root / "content/notes/second.md").write_text(
        '+++\ntitle = "Second"\ndate = 2026-01-03\n+++\nTwo.\n'
    )
    (root / "content/about.md").write_text('+++\ntitle = "About"\n+++\nAbout us.\n')
    return root


def run_import(root: Path, *args: str) -> str:
    out = StringIO()
    call_command("import_hugo", str(root), *args, stdout=out)
    return out.getvalue()


def site_of_its_own() -> None:
    """A site someone configured: its title, a feed option, its menu and its entry set."""
    settings = SiteSettings.objects.current()
    settings.title, settings.notes_per_page = "Our Lab", 12
    settings.save()
    MenuItem.objects.create(identifier="notes", name="Writing", url="/notes/", weight=1)
    MenuItem.objects.create(identifier="wiki", name="Wiki", url="/wiki/", weight=2)
    EntrySet.objects.create(key="glossary", title_field="term", count_label="Terms")


def config_state() -> tuple:
    settings = SiteSettings.objects.current()
    return (
        (settings.title, settings.notes_per_page, settings.author, settings.institute),
        sorted(MenuItem.objects.values_list("identifier", "name", "url", "weight")),
        sorted(EntrySet.objects.values_list("key", "title_field", "count_label")),
    )


def table_row(output: str, kind: str) -> list[str]:
    """The counts of `kind` in the command's table, by column name."""
    lines = output.splitlines()
    header = next(line for line in lines if "created" in line and "unchanged" in line)
    row = next(line for line in lines if line.startswith(f"{kind} "))
    return dict(zip(header.split(), row[len(kind) :].split(), strict=True))


def test_a_site_with_its_own_config_keeps_it_and_the_report_says_so(tmp_path):
    """Settings, menus and entry sets the site has stay exactly as they are (before: merged
    and replaced without a word); the report says "kept (use --replace-…)" with what differs,
    and the notes and pages still import."""
    site_of_its_own()
    before = config_state()
    output = run_import(hugo_site(tmp_path / "site"))

    assert config_state() == before
    assert set(Note.objects.values_list("slug", flat=True)) == {"first", "second"}
    assert Page.objects.filter(slug="about").exists()
    for kind in ("settings", "menus", "entry sets"):
        assert table_row(output, kind)["kept"] == "1", kind
    assert (
        "settings: kept (use --replace-settings to replace); would be updated: "
        "title 'Our Lab' → 'Small Lab'" in output
    )
    assert "notes_per_page 12 → 6" in output and "author 'yourname' → 'lab'" in output
    assert (
        "menu item notes: kept (use --replace-menus to replace); would be updated: "
        "name 'Writing' → 'Notes', weight 1 → 10" in output
    )
    assert "menu item about: kept (use --replace-menus to replace); would be created" in output
    assert "menu item wiki: kept (use --replace-menus to replace); would be deleted" in output
    assert "entry set results: kept (use --replace-entry-sets to replace)" in output
    assert "entry set glossary: kept (use --replace-entry-sets to replace)" in output


@pytest.mark.parametrize(
    ("flag", "replaced"),
    [("--replace-settings", 0), ("--replace-menus", 1), ("--replace-entry-sets", 2)],
)
def test_each_replace_flag_replaces_its_part_alone(tmp_path, flag, replaced):
    """Each flag replaces its own part by the Hugo site's; the other two are kept."""
    site_of_its_own()
    before = config_state()
    run_import(hugo_site(tmp_path / "site"), flag)
    after = config_state()
    wanted = (
        ("Small Lab", 6, "lab", "Small Institute"),
        [("about", "About", "/about/", 20), ("notes", "Notes", "/notes/", 10)],
        [("results", "resultTitle", "Results")],
    )
    for part in range(3):
        assert after[part] == (wanted[part] if part == replaced else before[part]), part


def test_a_fresh_site_takes_the_whole_config(tmp_path):
    """A site with default settings (a row that only holds the defaults counts as none), no
    menu and no entry set gets the Hugo site's, as before."""
    SiteSettings.objects.current()  # a page view creates the row with the defaults
    output = run_import(hugo_site(tmp_path / "site"))
    assert config_state() == (
        ("Small Lab", 6, "lab", "Small Institute"),
        [("about", "About", "/about/", 20), ("notes", "Notes", "/notes/", 10)],
        [("results", "resultTitle", "Results")],
    )
    assert "kept" not in output
    assert "settings: updated: title 'SciDraft' → 'Small Lab'" in output
    assert "menu item notes: created: name 'Notes', url '/notes/', weight 10" in output


def test_dry_run_lists_every_change_per_kind_and_changes_nothing(tmp_path):
    """On a site that has content, the dry run prints the counts per kind, each setting, menu
    item and entry set that would change from what to what, and the notes and pages that
    would be updated with their fields; nothing is written."""
    root = hugo_site(tmp_path / "site")
    run_import(root)
    note = Note.objects.get(slug="first")
    note.title, note.weight = "Renamed here", 3
    note.save()
    Page.objects.filter(slug="about").update(body="Our own words.")
    settings = SiteSettings.objects.current()
    settings.title = "Our Lab"
    settings.save()
    MenuItem.objects.filter(identifier="about").update(name="Who we are")
    MenuItem.objects.create(identifier="wiki", name="Wiki", url="/wiki/")
    EntrySet.objects.filter(key="results").update(count_label="Findings")
    (root / "content/notes/third.md").write_text('+++\ntitle = "Third"\n+++\nThree.\n')
    before = (config_state(), list(Note.objects.values_list("slug", "title", "weight")))

    output = run_import(root, "--dry-run", "--replace-settings", "--replace-menus")

    assert "Dry run: nothing was saved" in output
    assert table_row(output, "notes") == {
        "created": "1",
        "updated": "1",
        "unchanged": "1",
        "kept": "0",
        "warnings": "0",
    }
    assert table_row(output, "pages")["updated"] == "1"
    assert table_row(output, "entry sets")["kept"] == "1"
    changes = output.split("Would change:\n", 1)[1]
    assert "settings: updated: title 'Our Lab' → 'Small Lab'" in changes
    assert "menu item about: updated: name 'Who we are' → 'About'" in changes
    assert "menu item wiki: deleted" in changes
    assert re.search(r"note first: updated: title, weight\n", changes)
    assert "page about: updated: body" in changes
    assert "note second" not in changes and "note third" not in changes  # unchanged, created
    assert (
        "entry set results: kept (use --replace-entry-sets to replace); would be updated: "
        "count_label 'Findings' → 'Results'" in output
    )
    assert (config_state(), list(Note.objects.values_list("slug", "title", "weight"))) == before


def test_site_configure_keeps_a_configured_part_unless_the_policy_replaces_it():
    """The service itself: the default policy keeps what the site has; replace= replaces."""
    from hugosite.loading import LoadPolicy, site_configure

    site_configure(config=SiteConfig(settings={"title": "One"}, menus=[MenuEntry("a", "A")]))
    config = SiteConfig(settings={"title": "Two"}, menus=[MenuEntry("b", "B")])
    report = site_configure(config=config)
    assert SiteSettings.objects.current().title == "One"
    assert list(MenuItem.objects.values_list("identifier", flat=True)) == ["a"]
    assert [(change.kind, change.key, change.action) for change in report.kept] == [
        ("settings", "", "update"),
        ("menus", "b", "create"),
        ("menus", "a", "delete"),
    ]
    site_configure(config=config, policy=LoadPolicy(replace={"settings", "menus"}))
    assert SiteSettings.objects.current().title == "Two"
    assert list(MenuItem.objects.values_list("identifier", flat=True)) == ["b"]
    with pytest.raises(ValueError, match="Not a config part: tags"):
        LoadPolicy(replace={"tags"})
