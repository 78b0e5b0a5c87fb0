"""A live editor's Yjs updates: growing hostile updates (each within LIVE_MESSAGE_MAX_BYTES)
are applied and stored, or refused and not stored, within the path's bounds."""

from __future__ import annotations

import pytest
from hypothesis import given
from pycrdt import Array, Map, Text

from collaboration import documents
from collaboration.documents import Refused, update_store
from collaboration.models import DocumentUpdate
from collaboration.protocol import Malformed
from scidraft.bounds import INPUT_PATHS, KB

from .harness import HOSTILE, assert_within, cases, measure, sizes

INPUT_PATH = "live-update"
PATH = INPUT_PATHS[INPUT_PATH]
LARGEST = 256 * KB  # LIVE_MESSAGE_MAX_BYTES


def _update(live, change) -> bytes:
    """An update made on a copy of the held document, as another client would make it."""
    client = live.copy()
    before = client.get_state()
    change(client)
    return client.get_update(before)


def _inserts(n):
    return lambda doc: doc.get("body", type=Text).insert(0, "x" * n)


def _scattered(n):
    def change(doc):
        body = doc.get("body", type=Text)
        for i in range(n // 16):
            body.insert(len(body) // 2 if i % 2 else 0, "y")

    return change


def _churn(n):
    def change(doc):
        body = doc.get("body", type=Text)
        for _ in range(n // 64):
            body.insert(0, "z" * 8)
            del body[0:8]

    return change


CASES = {"one insert": _inserts, "scattered inserts": _scattered, "insert and delete": _churn}


@pytest.fixture
def live(note):
    documents.forget_all()
    yield documents.document(note.pk)
    documents.forget_all()


@pytest.mark.slow
@pytest.mark.django_db
@HOSTILE
@given(case=cases(CASES), size=sizes(LARGEST, smallest=256))
def test_growing_hostile_updates_are_stored_or_refused_within_the_bounds(live, case, size):
    """Applied and stored, or refused (TooLarge, Malformed), within the bounds."""
    data = _update(live, CASES[case](size))
    measured = measure(update_store, live.note_id, data, None, refusals=(Refused, Malformed))
    assert_within(PATH, measured, f"{case} at {size:,} ({len(data):,} bytes)")


@pytest.mark.slow
@pytest.mark.django_db
@HOSTILE
@given(size=sizes(LARGEST, smallest=256))
def test_bytes_that_are_no_update_are_refused(live, size):
    """Noise is refused as Malformed and not stored, within the bounds."""
    rows = DocumentUpdate.objects.count()
    noise = bytes((i * 7919) % 251 for i in range(size))
    measured = measure(update_store, live.note_id, noise, None, refusals=(Refused, Malformed))
    assert measured.refused is not None or DocumentUpdate.objects.count() == rows + 1
    assert_within(PATH, measured, f"noise of {size:,} bytes")


def _refused_and_not_stored(live, data: bytes):
    rows = DocumentUpdate.objects.count()
    measured = measure(update_store, live.note_id, data, None, refusals=(Refused, Malformed))
    assert_within(PATH, measured, "a foreign update")
    assert measured.refused is not None
    assert DocumentUpdate.objects.count() == rows


@pytest.mark.django_db
@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda doc: doc.get("evil", type=Text).insert(0, "x" * 1000), id="root text"),
        pytest.param(
            lambda doc: doc.get("evil", type=Map).update({"k": "v" * 1000}), id="root map"
        ),
        pytest.param(lambda doc: doc.get("evil", type=Array).extend([1] * 1000), id="root array"),
    ],
)
def test_updates_adding_roots_other_than_the_texts_are_refused(live, change):
    """Only `title` and `body` are the note's: a root of another name holds text no limit
    counts, so an update adding one is refused and not stored."""
    _refused_and_not_stored(live, _update(live, change))


@pytest.mark.django_db
@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda doc: doc.get("body", type=Text).insert_embed(0, {"x": "y" * 1000}),
                     id="embed"),
        pytest.param(lambda doc: doc.get("body", type=Text).insert(0, "x", {"a" * 1000: "b"}),
                     id="attributes"),
    ],
)  # fmt: skip
def test_updates_adding_embeds_or_attributes_are_refused(live, change):
    """The texts are plain: an embed or formatting attributes are refused and not stored."""
    _refused_and_not_stored(live, _update(live, change))


@pytest.mark.django_db
def test_an_update_taking_the_document_past_its_limit_is_refused(live, settings):
    """History counts: text typed and deleted in one update leaves the texts small but is
    stored whole, so an update that would take the note's stored updates past twice
    LIVE_DOCUMENT_MAX_BYTES is refused and not stored, whatever its texts' size."""
    data = _update(live, _churn(LARGEST))
    settings.LIVE_DOCUMENT_MAX_BYTES = len(data) // 4
    _refused_and_not_stored(live, data)
