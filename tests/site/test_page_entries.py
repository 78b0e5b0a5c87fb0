"""A process's memory of the pages it served (scidraft.site.page_entries): a newer render of a
page replaces the older one, within the byte budget."""

from __future__ import annotations

from django.http import HttpResponse

from scidraft.site import page_entries


def _entry(body: bytes, generation: int) -> dict:
    response = HttpResponse(body, content_type="text/plain")
    response["ETag"], response["Last-Modified"] = '"e"', "Sun, 29 Nov 2026 22:00:00 GMT"
    return page_entries.store(response, generation)


def test_a_newer_render_replaces_the_older_one_and_its_bytes():
    pages = page_entries._LocalPages(max_bytes=100_000)
    old, new = _entry(b"old page", 1), _entry(b"new page, longer", 2)
    pages.put("k", old)
    pages.put("k", new)
    assert pages.get("k") is new
    assert pages.size == page_entries.size(new)
    pages.drop("k")
    assert pages.get("k") is None and pages.size == 0


def test_an_entry_records_what_it_was_rendered_from():
    entry = _entry(b"page", 7)
    assert entry["generation"] == 7 and entry["tokens"] is None
    assert entry["id"] != _entry(b"page", 7)["id"]  # two renders are told apart
