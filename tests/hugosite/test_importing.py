"""`import_hugo` / `export_hugo`: the theme's example site moves in, and out again, unchanged.

The example site has 70 files in content/notes/ and the theme renders all 70 as notes: none is
a draft, none is dated in the future (they are dated September 2026; these tests run with
"now" after that, see `after_the_example_dates`), none has empty content. The theme skips one
content file that is not a note: content/resume-templates/modern-professional-resume/index.md
is a headless page bundle (`headless = true`, images for promotion-visual), so it has no page
of its own; it is imported as bundle files, not as a Page.
"""

from __future__ import annotations

import datetime as dt
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone

from bibliography.models import BibEntry, BibFile
from hugosite.importing import import_site
from hugosite.models import DataFile, HugoAsset
from notes.entry_index import render_entry_index
from notes.models import Author, Note, NoteCitation, Page, Tag
from scidraft.site.models import EntrySet, MenuItem, SiteSettings
from tests.conftest import EXAMPLE_SITE

# ../shared beside the checkout, or beside the folder that holds it (tests/conftest.py).
EXAMPLE = EXAMPLE_SITE

# Each test imports the whole example site (3 to 18 s).
pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow,
    pytest.mark.skipif(not EXAMPLE.is_dir(), reason="the theme's example site is not here"),
]

NOW = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.UTC)


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture(autouse=True)
def after_the_example_dates(monkeypatch):
    """The example notes are dated September 2026: read the site as on 2026-11-29."""
    if timezone.now() < NOW:
        monkeypatch.setattr(timezone, "now", lambda: NOW)


def run_import(root: Path, *args: str) -> str:
    out = StringIO()
    call_command("import_hugo", str(root), *args, stdout=out)
    return out.getvalue()


def bib_entry_keys(text: str) -> set[str]:
    """Keys of the `@type{key,` entries of a .bib file, repeated keys counted once."""
    keys = set()
    for kind, key in re.findall(r"^\s*@(\w+)\s*[{(]\s*([^,\s]+)\s*,", text, re.M):
        if kind.lower() not in {"comment", "string", "preamble"}:
            keys.add(key)
    return keys


def test_the_whole_example_site_imports():
    output = run_import(EXAMPLE)

    assert Note.objects.count() == 70
    assert Note.objects.published().count() == 70
    standalone = {
        path.stem for path in (EXAMPLE / "content").glob("*.md") if path.name != "_index.md"
    }
    assert set(Page.objects.values_list("slug", flat=True)) == standalone
    assert Page.objects.get(slug="search").layout == "search"

    for path in sorted((EXAMPLE / "assets").rglob("*.bib")):
        bibfile = BibFile.objects.get(name=path.relative_to(EXAMPLE / "assets").as_posix())
        keys = bib_entry_keys(path.read_text(encoding="utf-8"))
        assert BibEntry.objects.filter(bibfile=bibfile).count() == len(keys) == bibfile.entry_count
        assert bibfile.raw == path.read_text(encoding="utf-8")
    assert BibFile.objects.count() == 2

    site = SiteSettings.objects.current()
    assert (site.title, site.institute, site.author) == ("SciDraft", "Your Institute", "yourname")
    assert (site.notes_per_page, site.promotions_per_page, site.promotion_positions) == (
        8,
        1,
        "3-5",
    )
    reference = MenuItem.objects.get(identifier="working-with-ai")
    assert reference.url == "" and reference.name == "Reference"
    children = MenuItem.objects.filter(parent=reference).order_by("weight")
    assert [(c.identifier, c.note) for c in children] == [
        ("math-a-to-z", "Look up a result by name"),
        ("math-categories", "Browse by result family"),
        ("rendering-a-to-z", "Rendering methods A–Z"),
        ("rendering-categories", "Methods by category"),
    ]
    assert MenuItem.objects.count() == 8
    assert set(EntrySet.objects.values_list("key", "title_field", "count_label")) == {
        ("math", "mathTitle", "Results"),
        ("rendering", "renderingTitle", "Methods"),
    }
    assert DataFile.objects.get(name="promotion-visual").content["rows"]

    # Every note renders; the only warnings are the two lists naming the absent survey-refs-01.
    warnings = []
    for note in Note.objects.all():
        assert note.rendered_html.strip(), note.slug
        warnings += [(note.slug, w["code"], w["message"]) for w in note.render_warnings]
    assert {code for _, code, _ in warnings} == {"bib-missing"}
    assert all("bib/survey-refs-01.bib" in message for *_, message in warnings)
    assert len(warnings) == 2
    assert "bib-missing: bibliography file bib/survey-refs-01.bib does not exist" in output
    assert re.search(r"demo-note-paper-with-multiple-references\.md:60: bib-missing", output)


def test_entry_sets_count_as_the_theme():
    run_import(EXAMPLE)
    math_az = render_entry_index("entry-a-to-z", {"set": "math"})
    assert "<strong>37 Results Covered</strong>" in math_az
    assert math_az.count('class="entry-item"') == 37
    math_categories = render_entry_index("entry-categories", {"set": "math"})
    assert "37 Results Covered in 20 Categories" in math_categories
    rendering = render_entry_index("entry-categories", {"set": "rendering"})
    assert "<strong>24 Methods Covered in 5 Categories</strong>" in rendering
    assert rendering.count('class="entry-item"') == 24
    # The pages that hold these shortcodes render them too.
    assert "37 Results Covered" in Page.objects.get(slug="math-a-to-z").rendered_html


def test_each_reference_list_numbers_from_one():
    run_import(EXAMPLE)
    note = Note.objects.get(slug="demo-note-paper-with-multiple-references")
    assert [c["bib"] for c in note.render_citations] == [
        ["bib/survey-refs-01.bib"],
        ["bib/refs.bib"],
    ]
    for index in (0, 1):
        numbers = list(
            NoteCitation.objects.filter(note=note, list_index=index).values_list(
                "number", flat=True
            )
        )
        assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) > 1
    assert note.rendered_html.count('<ol class="ref-list">') == 2


def snapshot() -> dict:
    """Everything import writes, without ids, timestamps and version counters."""
    skip = {"id", "created_at", "updated_at", "version", "created_by_id", "owner_id"}

    def rows(queryset, key):
        return {
            row[key]: {name: value for name, value in row.items() if name not in skip}
            for row in queryset.values()
        }

    notes = rows(Note.objects.all(), "slug")
    for note in Note.objects.prefetch_related("authorships__author", "tags"):
        notes[note.slug]["authors"] = [
            (link.author.handle, link.author.name) for link in note.authorships.all()
        ]
        notes[note.slug]["tags"] = [(tag.name, tag.slug) for tag in note.ordered_tags()]
    pages = rows(Page.objects.all(), "slug")
    for page in Page.objects.prefetch_related("authors"):
        pages[page.slug]["authors"] = sorted(a.handle for a in page.authors.all())
    site = {
        name: value
        for name, value in SiteSettings.objects.values().first().items()
        if name not in skip
    }
    menus = {
        item.identifier: (
            item.name,
            item.url,
            item.weight,
            item.note,
            getattr(item.parent, "identifier", ""),
        )
        for item in MenuItem.objects.select_related("parent")
    }
    entries = sorted(BibEntry.objects.values_list("bibfile__name", "key", "fields", "source"))
    return {
        "notes": notes,
        "pages": pages,
        "bib": rows(BibFile.objects.all(), "name"),
        "entries": entries,
        "site": site,
        "menus": menus,
        "sets": rows(EntrySet.objects.all(), "key"),
        "data": rows(DataFile.objects.all(), "name"),
        "assets": rows(HugoAsset.objects.all(), "path"),
        "authors": sorted(Author.objects.values_list("handle", "name")),
        "tags": sorted(Tag.objects.values_list("name", "slug")),
    }


def wipe() -> None:
    for model in (NoteCitation, Note, Page, Author, Tag, BibFile, DataFile, HugoAsset):
        model.objects.all().delete()
    MenuItem.objects.all().delete()
    EntrySet.objects.all().delete()
    SiteSettings.objects.all().delete()


def test_round_trip_reproduces_every_field_and_the_rendered_html(tmp_path):
    run_import(EXAMPLE)
    before = snapshot()
    out = tmp_path / "exported"
    call_command("export_hugo", str(out), stdout=StringIO())

    matter = (out / "content/notes/demo-note-algorithm-masked-attention.md").read_text()
    assert matter.startswith("+++\n") and "date = 2026-09-21T14:52:00+09:00\n" in matter
    # The tags as the source lists them (the theme shows them in this order), not by name.
    assert 'tags = [\n    "Demo",\n    "Algorithm",\n    "Attention",\n]\n' in matter
    assert 'mathTitle = "Masked Softmax Attention"' in matter  # params keys verbatim
    assert (out / "assets/bib/refs.bib").read_bytes() == (
        EXAMPLE / "assets/bib/refs.bib"
    ).read_bytes()
    assert (out / "data/promotion-visual.yaml").read_bytes() == (
        EXAMPLE / "data/promotion-visual.yaml"
    ).read_bytes()
    headless = "content/resume-templates/modern-professional-resume/index.md"
    assert (out / headless).read_bytes() == (EXAMPLE / headless).read_bytes()

    wipe()
    assert Note.objects.count() == 0
    output = run_import(out)
    assert "70 " in output
    after = snapshot()
    for part in before:
        assert after[part] == before[part], part
    for slug, row in before["notes"].items():  # byte for byte, said plainly
        assert after["notes"][slug]["rendered_html"] == row["rendered_html"]


def test_second_import_changes_nothing():
    run_import(EXAMPLE)
    before = snapshot()
    output = run_import(EXAMPLE)
    assert "0 created," in output
    for line in output.splitlines()[1:9]:
        name, created, updated, unchanged, _ = line.rsplit(None, 4)
        assert (created, updated) == ("0", "0"), line
        assert int(unchanged) > 0, line
    assert snapshot() == before


def test_dry_run_writes_nothing(media):
    output = run_import(EXAMPLE, "--dry-run")
    assert "Dry run" in output and re.search(r"notes\s+70\s+0\s+0", output)
    assert Note.objects.count() == Page.objects.count() == BibFile.objects.count() == 0
    assert DataFile.objects.count() == HugoAsset.objects.count() == 0
    assert not Path(media).exists() or not any(Path(media).rglob("*.*"))


# --- A small site with images and broken files ---------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 32


def small_site(root: Path) -> Path:
    (root / "content/notes").mkdir(parents=True)
    (root / "content/gallery").mkdir()
    (root / "static/img").mkdir(parents=True)
    (root / "assets/bib").mkdir(parents=True)
    (root / "hugo.toml").write_text('title = "Small"\n[params]\nauthor = "lab"\n')
    (root / "assets/bib/refs.bib").write_text("@article{a1, title={One}, year={2020}}\n")
    (root / "content/notes/good.md").write_text(
        '+++\ntitle = "Good"\ndate = 2026-01-02\nfavouriteColour = "blue"\n'
        'author = ["Ada Lovelace", "bob"]\n+++\nSee ![x](/img/x.png) and \\cite{a1}.\n\n'
        '{{< references bib="bib/refs.bib" >}}\n'
    )
    (root / "content/notes/broken.md").write_text(
        '+++\ntitle = "Broken"\ndate = 2026-01-02\ntags = ["a",\nmath = = true\n+++\nBody\n'
    )
    (root / "content/notes/missing-bib.md").write_text(
        "---\ntitle: Missing\ndate: 2026-01-03T08:00:00-05:00\n---\nText \\cite{zz}.\n\n"
        '{{< references bib="bib/nope.bib" >}}\n'
    )
    (root / "content/gallery/index.md").write_text('+++\ntitle = "Gallery"\n+++\nPictures.\n')
    (root / "content/gallery/photo.jpg").write_bytes(b"\xff\xd8\xff" + b"1" * 20)
    (root / "static/img/x.png").write_bytes(PNG)
    return root


def test_broken_inputs_are_reported_and_the_rest_imports(tmp_path, client):
    site = small_site(tmp_path / "site")
    output = run_import(site)
    assert set(Note.objects.values_list("slug", flat=True)) == {"good", "missing-bib"}
    assert re.search(r"content/notes/broken\.md:\d+: invalid TOML", output)
    line = int(re.search(r"broken\.md:(\d+):", output).group(1))
    assert line in (4, 5)  # the unclosed list / the bad line, 1-based in the file
    assert "content/notes/missing-bib.md:" in output and "bib/nope.bib does not exist" in output
    missing = Note.objects.get(slug="missing-bib")
    assert missing.rendered_html and missing.date_offset_minutes == -300
    good = Note.objects.get(slug="good")
    assert good.params == {"favouriteColour": "blue"}
    assert [a.author.handle for a in good.authorships.all()] == ["ada-lovelace", "bob"]


def test_images_are_copied_served_and_idempotent(tmp_path, client, media):
    site = small_site(tmp_path / "site")
    output = run_import(site)
    assert re.search(r"images\s+2\s+0\s+0", output)
    assert (Path(media) / "hugo/static/img/x.png").read_bytes() == PNG
    assert (Path(media) / "hugo/bundles/gallery/photo.jpg").is_file()
    # The body still says /img/x.png, and that URL serves the imported file.
    assert "/img/x.png" in Note.objects.get(slug="good").body
    response = client.get("/img/x.png")
    assert response.status_code == 200 and b"".join(response.streaming_content) == PNG
    assert client.get("/img/unknown.png").status_code == 404

    stamp = (Path(media) / "hugo/static/img/x.png").stat().st_mtime_ns
    assert re.search(r"images\s+0\s+0\s+2", run_import(site))
    assert (Path(media) / "hugo/static/img/x.png").stat().st_mtime_ns == stamp
    (site / "static/img/x.png").write_bytes(PNG + b"more")
    assert re.search(r"images\s+0\s+1\s+1", run_import(site))

    out = tmp_path / "out"
    call_command("export_hugo", str(out), stdout=StringIO())
    assert (out / "static/img/x.png").read_bytes() == PNG + b"more"
    assert (out / "content/gallery/photo.jpg").is_file()
    exported = (out / "content/notes/good.md").read_text()
    assert 'favouriteColour = "blue"' in exported
    assert 'author = [\n    "Ada Lovelace",\n    "bob",\n]' in exported
    assert "date = 2026-01-02\n" in exported


def test_promotion_visual_images_resolve_to_imported_media(tmp_path):
    site = tmp_path / "site"
    bundle = site / "content/resume-templates/modern-professional-resume"
    bundle.mkdir(parents=True)
    (site / "content/notes").mkdir()
    (site / "data").mkdir()
    (site / "hugo.toml").write_text('title = "P"\n')
    (bundle / "index.md").write_text("+++\nheadless = true\n+++\n")
    (bundle / "a.jpg").write_bytes(b"\xff\xd8\xffjpg")
    (site / "data/promotion-visual.yaml").write_text(
        "rows:\n  - num: 1\n    label: Row\n    images:\n      - file: a.jpg\n        caption: A\n"
    )
    (site / "content/notes/promo.md").write_text(
        "+++\npromotion = true\ndate = 2026-01-01\n+++\n{{< promotion-visual >}}\n"
    )
    report, warnings, _ = import_site(site)
    assert not report.problems and not warnings
    html = Note.objects.get(slug="promo").rendered_html
    assert 'src="/media/hugo/bundles/resume-templates/modern-professional-resume/a.jpg"' in html
    assert Page.objects.count() == 0  # a headless bundle is no page


@pytest.mark.django_db(transaction=True)  # the completion's thread reads what the import wrote
def test_renders_cut_short_by_time_are_completed_before_the_command_ends(
    tmp_path, settings, monkeypatch
):
    """An import on a machine too busy to render in time: the command completes every render
    cut short before it ends (a background thread would die with its process), so no note is
    left waiting; one that never fits is stored final with a warning that says so."""
    from notes import completion
    from notes.rendering import render_owed

    monkeypatch.setattr(completion, "RETRY_SECONDS", 0)
    settings.RENDER_TIME_PERCENT = 1e-7
    output = run_import(small_site(tmp_path / "site"))
    assert "render(s) cut short by time were completed" in output
    notes = list(Note.objects.all())
    assert notes and not [note.slug for note in notes if render_owed(note)]
    assert all(
        "render-cut-short" in [w["code"] for w in note.render_warnings]
        for note in notes
        if note.body.strip()
    )


def test_import_hugo_reports_its_progress_on_stderr(tmp_path):
    """The notes loaded, counted on stderr (a line, as stderr is no terminal here); the
    report stays on stdout."""
    notes = tmp_path / "site/content/notes"
    notes.mkdir(parents=True)
    (tmp_path / "site/hugo.toml").write_text('title = "T"\n')
    for n in range(3):
        (notes / f"n{n}.md").write_text(f'+++\ntitle = "N{n}"\n+++\nText {n}.\n')
    out, err = StringIO(), StringIO()
    call_command("import_hugo", str(tmp_path / "site"), stdout=out, stderr=err)
    assert "notes: 3/3 notes (100%)" in err.getvalue() and "done in" in err.getvalue()
    assert "notes: 3/3" not in out.getvalue()
