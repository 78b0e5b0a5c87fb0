"""Bibliography files in the editor: list, upload and paste, parse report, replace, ownership,
and the cite picker's entry search (editor/bibliographies.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile

from bibliography.models import BibEntry, BibFile
from bibliography.services import bibfile_create, bibfile_import, bibfile_set_public
from notes import services
from notes.models import NoteBibliography

KNUTH = "@book{knuth, title={The Art of Computer Programming}, author={Knuth, Donald}, year=1968}\n"
MALFORMED = (
    KNUTH
    + "@article{broken, title={Unclosed, year=2001\n"
    + "@misc{fine, title={Fine}}\n"
    + "@article{, title={No key}}\n"
)
XSS_TITLE = "<script>alert(1)</script>"


def _upload(content: bytes, filename: str = "refs.bib") -> SimpleUploadedFile:
    return SimpleUploadedFile(filename, content, content_type="application/x-bibtex")


def _file_id(response) -> int:
    match = re.fullmatch(r"/write/bibliographies/(\d+)/", response["Location"])
    assert match, response["Location"]
    return int(match.group(1))


# --- Adding a file -----------------------------------------------------------------------------


def test_uploading_a_bib_file_creates_it_owned_by_the_author(client, author):
    """A .bib upload with a name becomes bib/<name>.bib, owned by the uploader, and the
    browser lands on the file's page listing its entries."""
    client.force_login(author)
    response = client.post(
        "/write/bibliographies/", {"name": "refs", "upload": _upload(KNUTH.encode())}
    )
    assert response.status_code == 302
    bibfile = BibFile.objects.get(pk=_file_id(response))
    assert (bibfile.name, bibfile.owner, bibfile.raw) == ("bib/refs.bib", author, KNUTH)
    page = client.get(response["Location"]).content.decode()
    assert "knuth" in page and "The Art of Computer Programming" in page
    assert "Created bib/refs.bib: 1 entries kept; every block parsed." in page


def test_pasting_bibtex_creates_the_file(client, author):
    """Pasted text is imported like an upload; the name may be typed with bib/ and .bib."""
    client.force_login(author)
    response = client.post("/write/bibliographies/", {"name": "bib/pasted.bib", "text": KNUTH})
    assert response.status_code == 302
    bibfile = BibFile.objects.get(name="bib/pasted.bib")
    assert bibfile.owner == author
    assert list(bibfile.entries.values_list("key", flat=True)) == ["knuth"]


def test_a_non_utf8_upload_is_refused_with_a_clear_error(client, author):
    """Latin-1 bytes are not decoded by guesswork: the form says the file is not UTF-8 and
    where, and nothing is stored."""
    client.force_login(author)
    raw = "@book{b, title={Caf\u00e9}}\n".encode("latin-1")
    response = client.post("/write/bibliographies/", {"name": "latin", "upload": _upload(raw)})
    assert response.status_code == 400
    page = response.content.decode()
    assert "The file is not UTF-8 text (byte 19, line 1)" in page
    assert 'value="latin"' in page  # what was typed is kept
    assert not BibFile.objects.exists()


def test_an_upload_over_the_size_limit_is_refused(client, author, settings):
    """The configured limit applies, and the error states both sizes."""
    settings.SCIDRAFT_BIB_MAX_BYTES = 1_048_576
    client.force_login(author)
    raw = KNUTH.encode() + b"%" * 1_048_576
    response = client.post("/write/bibliographies/", {"name": "big", "upload": _upload(raw)})
    assert response.status_code == 400
    assert "The file is 1.0 MB; the limit is 1.0 MB." in response.content.decode()
    assert not BibFile.objects.exists()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"name": "../etc/passwd", "text": KNUTH}, "Name the file with letters, digits"),
        ({"name": "refs", "text": "  "}, "Upload a .bib file or paste its text."),
        ({"name": "refs", "text": KNUTH, "upload": "FILE"}, "Upload a file or paste text"),
    ],
)
def test_bad_form_input_is_refused_and_kept(client, author, data, message):
    """A bad name, nothing to import or both a file and text: a 400 saying so, nothing stored,
    and the pasted text still in the form."""
    client.force_login(author)
    if data.get("upload") == "FILE":
        data = {**data, "upload": _upload(KNUTH.encode())}
    response = client.post("/write/bibliographies/", data)
    assert response.status_code == 400
    page = response.content.decode()
    assert message in page
    if data["text"].strip():
        assert "The Art of Computer Programming" in page
    assert not BibFile.objects.exists()


def test_an_existing_name_is_refused_not_overwritten(client, author, other_author):
    """Adding a file under another author's name is refused; their file is untouched."""
    bibfile_create(user=other_author, name="bib/taken.bib", raw=KNUTH)
    client.force_login(author)
    response = client.post("/write/bibliographies/", {"name": "taken", "text": "@misc{x, t={y}}"})
    assert response.status_code == 400
    assert "A bibliography file named bib/taken.bib already exists." in response.content.decode()
    taken = BibFile.objects.get(name="bib/taken.bib")
    assert (taken.owner, taken.raw) == (other_author, KNUTH)


def test_malformed_entries_are_reported_on_the_files_page(client, author):
    """Every block that parses is kept; the others appear in the parse report with line, key
    and reason, and the list counts them."""
    client.force_login(author)
    response = client.post("/write/bibliographies/", {"name": "messy", "text": MALFORMED})
    bibfile = BibFile.objects.get(pk=_file_id(response))
    assert list(bibfile.entries.values_list("key", flat=True)) == ["knuth", "fine"]
    assert [(p["line"], p["key"]) for p in bibfile.parse_report] == [(2, "broken"), (4, "")]
    page = client.get(response["Location"]).content.decode()
    assert "2 block(s) could not be read — see the parse report." in page
    report = page.split('id="parse-report"', 1)[1].split("</section>", 1)[0]
    for problem in bibfile.parse_report:
        assert f"<td>{problem['line']}</td>" in report
        assert problem["reason"] in report
    assert "<code>broken</code>" in report and "(no key)" in report
    listing = client.get("/write/bibliographies/").content.decode()
    row = listing.split("bib/messy.bib", 1)[1].split("</tr>", 1)[0]
    assert re.findall(r"<td>(?:<strong[^>]*>)?(\d+)", row) == ["2", "2", "0"]


# --- The file's page ---------------------------------------------------------------------------


@pytest.fixture
def cited_note(author, note):
    """The author's note citing knuth from the author's own file, attached as its default."""
    bibfile = bibfile_create(user=author, name="bib/mine.bib", raw=KNUTH).bibfile
    services.note_bibliographies_set(note_id=note.pk, user=author, bibfile_ids=[bibfile.pk])
    services.note_save(
        note_id=note.pk, user=author, base_version=note.version,
        fields={"body": "As \\cite{knuth} shows.\n\n{{< references >}}\n"},
    )  # fmt: skip
    note.refresh_from_db()
    assert "The Art of Computer Programming" in note.rendered_html
    return note


def test_replacing_the_text_updates_entries_in_place_and_notes_keep_resolving(
    client, author, cited_note
):
    """A re-paste keeps the row of every surviving key, and the note citing it is re-rendered
    with the new text, without a missing reference."""
    bibfile = BibFile.objects.get(name="bib/mine.bib")
    knuth_pk = BibEntry.objects.get(key="knuth").pk
    client.force_login(author)
    revised = KNUTH.replace("The Art of", "The Revised Art of") + "@misc{new, title={New}}\n"
    response = client.post(f"/write/bibliographies/{bibfile.pk}/", {"text": revised})
    assert response.status_code == 302 and _file_id(response) == bibfile.pk
    assert BibEntry.objects.get(key="knuth").pk == knuth_pk
    assert set(bibfile.entries.values_list("key", flat=True)) == {"knuth", "new"}
    cited_note.refresh_from_db()
    assert "The Revised Art of Computer Programming" in cited_note.rendered_html
    assert not [w for w in cited_note.render_warnings if w["code"].startswith(("bib-", "cite-"))]
    page = client.get(response["Location"]).content.decode()
    assert "Updated bib/mine.bib: 2 entries kept; every block parsed." in page


def test_replacing_by_upload_and_with_the_same_text(client, author, cited_note):
    """An uploaded file replaces the text too; the same text again says nothing changed."""
    bibfile = BibFile.objects.get(name="bib/mine.bib")
    client.force_login(author)
    url = f"/write/bibliographies/{bibfile.pk}/"
    client.post(url, {"upload": _upload(KNUTH.encode())}, follow=True)
    page = client.post(url, {"text": KNUTH}, follow=True).content.decode()
    assert "The text is the same as before: nothing changed." in page
    bibfile.refresh_from_db()
    assert bibfile.raw == KNUTH


def test_a_non_utf8_replacement_keeps_the_old_text(client, author, cited_note):
    """A refused replacement changes nothing."""
    bibfile = BibFile.objects.get(name="bib/mine.bib")
    client.force_login(author)
    response = client.post(
        f"/write/bibliographies/{bibfile.pk}/", {"upload": _upload(b"@misc{a, title={\xff}}")}
    )
    assert response.status_code == 400
    assert "not UTF-8" in response.content.decode()
    bibfile.refresh_from_db()
    assert bibfile.raw == KNUTH


def test_the_files_page_lists_entries_notes_and_a_download_link(client, author, cited_note):
    """Entries show key, type, decoded title, authors and year; the note using the file is
    linked to its editor; the file downloads from /bib/."""
    bibfile_import(
        name="bib/mine.bib",
        raw=KNUTH + "@article{accent, title={Caf{\\'e} {BERT}}, author={M{\\\"u}ller, J.}, "
        "year={2020}}\n",
    )
    client.force_login(author)
    page = client.get(f"/write/bibliographies/{BibFile.objects.get().pk}/").content.decode()
    assert "<td><code>accent</code></td><td>article</td><td>Café BERT</td>" in page
    assert "<td>Müller, J.</td><td>2020</td>" in page
    assert f'href="/write/{cited_note.pk}/">Heat equation</a>' in page
    assert 'href="/bib/mine.bib"' in page


def test_the_files_entries_are_searchable(client, author):
    """?q= keeps the entries whose key, title or author contain every word."""
    bibfile = bibfile_create(
        user=author,
        name="bib/many.bib",
        raw=KNUTH + "@misc{lamport, title={LaTeX}, author={Lamport, Leslie}, year=1986}\n",
    ).bibfile
    client.force_login(author)
    url = f"/write/bibliographies/{bibfile.pk}/"
    by_author = client.get(url, {"q": "lamport"}).content.decode()
    assert "<code>lamport</code>" in by_author and "<code>knuth</code>" not in by_author
    by_title = client.get(url, {"q": "art computer"}).content.decode()
    assert "<code>knuth</code>" in by_title and "<code>lamport</code>" not in by_title
    assert "No entry matches" in client.get(url, {"q": "nothing"}).content.decode()


# --- Ownership ---------------------------------------------------------------------------------


def test_authors_see_and_change_only_their_own_files(client, author, other_author):
    """Another author's file is not listed, its page is a 404 and a replacement is refused
    with a 404, changing nothing."""
    mine = bibfile_create(user=author, name="bib/mine.bib", raw=KNUTH).bibfile
    theirs = bibfile_create(user=other_author, name="bib/theirs.bib", raw=KNUTH).bibfile
    client.force_login(author)
    listing = client.get("/write/bibliographies/").content.decode()
    assert "bib/mine.bib" in listing and "bib/theirs.bib" not in listing
    assert client.get(f"/write/bibliographies/{mine.pk}/").status_code == 200
    assert client.get(f"/write/bibliographies/{theirs.pk}/").status_code == 404
    response = client.post(f"/write/bibliographies/{theirs.pk}/", {"text": "@misc{x, t={y}}"})
    assert response.status_code == 404
    theirs.refresh_from_db()
    assert theirs.raw == KNUTH


def test_editors_and_admins_see_and_replace_every_file(
    client, author, other_author, editor_user, admin_user
):
    """Editors and admins manage all bibliographies: every file listed with its owner, every
    file page open, a replacement accepted (the owner stays)."""
    mine = bibfile_create(user=author, name="bib/mine.bib", raw=KNUTH).bibfile
    bibfile_create(user=other_author, name="bib/theirs.bib", raw=KNUTH)
    bibfile_import(name="bib/site.bib", raw=KNUTH)
    for user in (editor_user, admin_user):
        client.force_login(user)
        listing = client.get("/write/bibliographies/").content.decode()
        for name in ("bib/mine.bib", "bib/theirs.bib", "bib/site.bib"):
            assert name in listing
        assert (
            "<td>ada</td>" in listing and "<td>bert</td>" in listing and "<td>site</td>" in listing
        )
        text = f"@misc{{by_{user.username}, title={{T}}}}\n"
        response = client.post(f"/write/bibliographies/{mine.pk}/", {"text": text})
        assert response.status_code == 302
        mine.refresh_from_db()
        assert (mine.raw, mine.owner) == (text, author)


def test_the_dashboard_links_to_the_bibliographies(client, author):
    client.force_login(author)
    assert (
        'href="/write/bibliographies/">Bibliographies</a>' in client.get("/write/").content.decode()
    )


# --- The cite picker ---------------------------------------------------------------------------


@pytest.fixture
def picker_files(author, other_author, note):
    """A site file attached to the author's note, the author's own file and another author's
    file, each with one entry matching "graph"."""
    site = bibfile_import(
        name="bib/site.bib",
        raw="@article{site_graph, title={Graph {\\'e}tudes}, author={Erd{\\H o}s, Paul and "
        "Alpha, A and Beta, B and Gamma, G}, year={1959}}\n",
    ).bibfile
    own = bibfile_create(
        user=author,
        name="bib/own.bib",
        raw="@book{own_graph, title={Graph theory}, author={Diestel, Reinhard}, year=2017}\n",
    ).bibfile
    theirs = bibfile_create(
        user=other_author,
        name="bib/theirs.bib",
        raw="@book{their_graph, title={Graphs}, author={Bondy, J}, year=1976}\n",
    ).bibfile
    NoteBibliography.objects.create(note=note, bibfile=site, position=0)
    return site, own, theirs


def _search(client, note, query: str = "") -> dict:
    response = client.get(f"/write/{note.pk}/cite-search/", {"q": query})
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    return json.loads(response.content)


def test_cite_search_returns_attached_files_first_then_own_files(
    client, author, note, picker_files
):
    """An Author gets the note's attached files first, then their own; never another author's
    file. Each result carries key, decoded title, authors, year, file, and the entry as the
    reference list prints it in the site's style (Vancouver), as text."""
    client.force_login(author)
    data = _search(client, note, "graph")
    assert [r["key"] for r in data["results"]] == ["site_graph", "own_graph"]
    assert data["results"][0] == {
        "key": "site_graph",
        "type": "article",
        "title": "Graph études",
        "authors": "Erdős, Paul; Alpha, A; Beta, B; et al.",
        "year": "1959",
        "file": "bib/site.bib",
        "reference": "Erdős P, Alpha A, Beta B, Gamma G. Graph études. 1959;",
    }
    assert data["more"] is False


def test_cite_search_for_editors_covers_every_file(client, editor_user, note, picker_files):
    """Editors may cite from every file; the attached file still comes first."""
    client.force_login(editor_user)
    keys = [r["key"] for r in _search(client, note, "graph")["results"]]
    assert keys[0] == "site_graph" and set(keys) == {"site_graph", "own_graph", "their_graph"}


def test_cite_search_matches_key_title_and_author_words(client, author, note, picker_files):
    client.force_login(author)
    assert [r["key"] for r in _search(client, note, "own_graph")["results"]] == ["own_graph"]
    assert [r["key"] for r in _search(client, note, "theory")["results"]] == ["own_graph"]
    assert [r["key"] for r in _search(client, note, "diestel 2017")["results"]] == ["own_graph"]
    assert _search(client, note, "bondy")["results"] == []  # another author's file


def test_cite_search_is_limited(client, author, note):
    """At most 20 results, with `more` saying there are others; an empty query lists entries."""
    raw = "".join(f"@misc{{k{i:02}, title={{Entry {i}}}}}\n" for i in range(25))
    bibfile_create(user=author, name="bib/many.bib", raw=raw)
    client.force_login(author)
    data = _search(client, note)
    assert [r["key"] for r in data["results"]] == [f"k{i:02}" for i in range(20)]
    assert data["more"] is True


def test_entries_stored_before_the_expansion_bound_stay_small_in_the_picker_and_list(
    client, author, note
):
    """Entries a file held before expansion was bounded (titles of megabytes, written here
    as such rows are): the cite picker's JSON and the files page show a cut title, decode
    only its start and skip formatting it, so both stay small and quick."""
    import time

    from bibliography.display import SHOWN_CHARS
    from editor.bibliographies import PICKER_REFERENCE_CHARS

    bibfile = bibfile_create(user=author, name="bib/old.bib", raw=KNUTH).bibfile
    title = 'Sch\\"onhage und Stra\\ss en ' * 120_000  # 3.2 M characters of accents
    for number in range(3):
        BibEntry.objects.create(
            bibfile=bibfile,
            key=f"huge{number}",
            entry_type="misc",
            fields={"title": title, "year": "19" * 500_000},
            persons={"author": [title]},
            position=number + 1,
        )
    client.force_login(author)
    start = time.process_time()
    response = client.get(f"/write/{note.pk}/cite-search/", {"q": ""})
    page = client.get(f"/write/bibliographies/{bibfile.pk}/")
    cpu = time.process_time() - start
    assert response.status_code == 200 and page.status_code == 200
    results = {result["key"]: result for result in response.json()["results"]}
    assert set(results) == {"knuth", "huge0", "huge1", "huge2"}
    huge = results["huge0"]
    assert huge["title"].startswith("Schönhage und Straßen") and huge["title"].endswith("…")
    assert len(huge["title"]) <= SHOWN_CHARS and len(huge["authors"]) <= SHOWN_CHARS
    assert len(huge["year"]) <= SHOWN_CHARS and huge["reference"] == ""
    assert results["knuth"]["reference"].startswith("Knuth")
    assert len(results["knuth"]["reference"]) <= PICKER_REFERENCE_CHARS
    assert len(response.content) < 20_000
    assert len(page.content) < 200_000
    assert cpu < 3.0, f"{cpu:.2f} s of CPU"


def test_cite_search_needs_a_note_the_user_may_edit(client, other_author, note, picker_files):
    """Another author's note: 404 (as every editor URL of a note); anonymous: the login page."""
    response = client.get(f"/write/{note.pk}/cite-search/", {"q": "graph"})
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    client.force_login(other_author)
    assert client.get(f"/write/{note.pk}/cite-search/", {"q": "graph"}).status_code == 404


# --- Hostile entries ---------------------------------------------------------------------------


def test_markup_in_entries_is_escaped_on_pages_and_plain_data_in_json(client, author, note):
    """A title holding a script tag is text everywhere: escaped in the file's page, a JSON
    string (not HTML) in the search, and the picker builds results with textContent only."""
    bibfile = bibfile_create(
        user=author,
        name="bib/evil.bib",
        raw=f"@misc{{evil, title={{{XSS_TITLE}}}, author={{<img src=x onerror=alert(1)>}}}}\n"
        "@article{<b>bad</b>, title={Broken\n",
    ).bibfile
    client.force_login(author)
    page = client.get(f"/write/bibliographies/{bibfile.pk}/").content.decode()
    assert XSS_TITLE not in page and "<img src=x" not in page and "<b>bad</b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page  # the author, in the entries
    assert "<code>&lt;b&gt;bad&lt;/b&gt;</code>" in page  # the key, in the parse report
    response = client.get(f"/write/{note.pk}/cite-search/", {"q": "evil"})
    assert response["Content-Type"] == "application/json"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert json.loads(response.content)["results"][0]["title"] == XSS_TITLE
    script = (Path(settings.BASE_DIR) / "static" / "js" / "cite-picker.js").read_text()
    assert "innerHTML" not in script and "insertAdjacentHTML" not in script
    assert "textContent" in script


# --- The picker in the editor page -------------------------------------------------------------


def test_the_editor_page_has_the_cite_picker_without_inline_script(client, author, note):
    """The picker's markup names the note's search URL and the body textarea; its script is a
    static file (the CSP forbids inline scripts)."""
    client.force_login(author)
    page = client.get(f"/write/{note.pk}/").content.decode()
    assert f'data-cite-url="/write/{note.pk}/cite-search/"' in page
    target = re.search(r'data-cite-target="([^"]+)"', page).group(1)
    assert re.search(rf'<textarea[^>]*\bid="{target}"', page)
    assert re.search(r'<script src="[^"]*js/cite-picker\.js" defer></script>', page)
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", page)


# --- Public files ---------------------------------------------------------------------------------


def test_only_editors_see_the_make_public_button(
    client, author, other_author, editor_user, admin_user
):
    """The file's page says who may download it; the Make public form is there for Editors
    and Admins only, and its owner is refused if they post it anyway."""
    bibfile = bibfile_create(user=author, name="bib/mine.bib", raw=KNUTH).bibfile
    url = f"/write/bibliographies/{bibfile.pk}/"
    client.force_login(author)
    page = client.get(url).content.decode()
    assert "<strong>Private</strong>: only its owner and Editors may download it" in page
    assert "Make public" not in page
    assert client.post(url + "public/", {"public": "1"}).status_code == 403
    assert not BibFile.objects.get(pk=bibfile.pk).is_public
    for user in (editor_user, admin_user):
        client.force_login(user)
        assert "Make public" in client.get(url).content.decode()
    client.force_login(other_author)
    assert client.get(url).status_code == 404


def test_an_editor_makes_a_file_public_and_private_again(client, author, editor_user):
    """Make public serves it at /bib/ to everyone and marks it in the list; Make private
    takes that back."""
    bibfile = bibfile_create(user=author, name="bib/mine.bib", raw=KNUTH).bibfile
    url = f"/write/bibliographies/{bibfile.pk}/"
    client.force_login(editor_user)
    response = client.post(url + "public/", {"public": "1"})
    assert (response.status_code, response["Location"]) == (302, url)
    page = client.get(url).content.decode()
    assert "bib/mine.bib is public: anyone may download it." in page
    assert "<strong>Public</strong>: anyone may download it" in page and "Make private" in page
    assert (
        '<span class="editor-bib-public-mark">public</span>'
        in client.get("/write/bibliographies/").content.decode()
    )
    client.logout()
    assert client.get("/bib/mine.bib").status_code == 200
    client.force_login(editor_user)
    client.post(url + "public/", {"public": "0"})
    assert not BibFile.objects.get(pk=bibfile.pk).is_public
    client.logout()
    assert client.get("/bib/mine.bib").status_code == 404


def test_the_page_says_when_readers_may_download_the_file(client, author, cited_note):
    """Attached to a published note, the file is downloadable by readers, and the page says so."""
    cited_note.refresh_from_db()
    services.note_publish(note_id=cited_note.pk, user=author, base_version=cited_note.version)
    client.force_login(author)
    bibfile = BibFile.objects.get(name="bib/mine.bib")
    page = client.get(f"/write/bibliographies/{bibfile.pk}/").content.decode()
    assert "<strong>Readers</strong> may download it: a published note uses it." in page


def test_cite_search_and_attach_offer_public_files(client, editor_user, note, picker_files):
    """Another Author's file is offered to an Author once an Editor made it public, in the cite
    picker and in the files the note may attach."""
    site, own, theirs = picker_files
    client.force_login(own.owner)
    assert "their_graph" not in [r["key"] for r in _search(client, note, "graph")["results"]]
    bibfile_set_public(user=editor_user, bibfile_id=theirs.pk, public=True)
    assert "their_graph" in [r["key"] for r in _search(client, note, "graph")["results"]]
    assert BibFile.objects.usable_by(own.owner, note=note).filter(pk=theirs.pk).exists()
    services.note_bibliographies_set(note_id=note.pk, user=own.owner, bibfile_ids=[theirs.pk])
    assert list(note.bibliography_links.values_list("bibfile_id", flat=True)) == [theirs.pk]


def test_cite_search_names_the_file_an_unusable_key_is_in(client, author, note, picker_files):
    """A key found only in another author's private file is not offered, but the picker says
    where it is and whom to ask; a title search reveals nothing of that file."""
    client.force_login(author)
    data = _search(client, note, "their_graph")
    assert data["results"] == []
    assert data["message"] == (
        "“their_graph” is in bib/theirs.bib, which you may not use: ask its owner or an Editor."
    )
    assert _search(client, note, "Bondy")["message"] == ""
    assert _search(client, note, "own_graph")["message"] == ""
    assert _search(client, note, "no_such_key")["message"] == ""
