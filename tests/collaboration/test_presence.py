"""Presence as the others see it: the server restates each awareness state with the person's
own name (text) and assigned colour, keeps only the fields the editor reads, and relays only
states of the Yjs clients the connection speaks for."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync

from collaboration.presence import LIVE_PALETTE, Person, person, restated
from collaboration.protocol import Presence, awareness_message, awareness_read, frame_read
from notes.models import NoteAuthor
from notes.services import author_for_user

from .editors import Editor

OVERLAY = "red;position:fixed;inset:0;z-index:2147483647;background:url(//evil.example/x)"
HOSTILE = {
    "user": {
        "name": '<img src=x onerror="alert(1)">',
        "color": OVERLAY,
        "colorLight": "#00000000;position:fixed;inset:0",
        "id": "1",
    },
    "cursor": {"anchor": {"type": None, "tname": "body", "item": None, "assoc": 0}},
    "style": "position:fixed",
}


def test_a_state_is_restated_with_the_persons_name_and_colour():
    """Through the real awareness encoding: the colour, name and any field the editor does
    not read are replaced or left out; the cursor stays; "null" (leaving) stays; a state that
    is not a JSON object is dropped."""
    ada = Person(3, "Ada Lovelace", LIVE_PALETTE[3])
    frame = awareness_message(
        [
            Presence(11, 4, json.dumps(HOSTILE)),
            Presence(12, 1, "null"),
            Presence(13, 1, "[1, 2]"),
            Presence(14, 1, "{not json"),
        ]
    )
    entries = restated(awareness_read(frame_read(frame).payload), ada)
    assert [(e.client_id, e.clock) for e in entries] == [(11, 4), (12, 1)]
    assert json.loads(entries[0].state) == {
        "cursor": HOSTILE["cursor"],
        "user": {"name": "Ada Lovelace", "color": "#8e44ad", "colorLight": "#8e44ad33", "id": "3"},
    }
    assert entries[1].state == "null"


@pytest.mark.django_db(transaction=True)
def test_a_coauthors_colour_and_name_reach_the_others_as_the_server_gives_them(
    author, other_author, note
):
    """A co-author whose presence names a CSS payload as its colour and markup as its name:
    the other editor receives the co-author's assigned colour and account name instead; a
    "null" for a client the connection never spoke for (someone else's) is not relayed."""
    NoteAuthor.objects.create(note=note, author=author_for_user(other_author), position=1)
    bert_as_shown = person(other_author).user_state()

    async def scenario():
        ada = await Editor.signed_in(note.pk, author)
        bert = await Editor.signed_in(note.pk, other_author)
        assert await ada.open() and await bert.open()
        await ada.say_presence({"user": person(author).user_state()})
        await bert.until(lambda: ada.doc.client_id in bert.presence)
        await bert.say_presence(HOSTILE)
        await ada.until(lambda: bert.doc.client_id in ada.presence)
        # Bert tries to take Ada's presence away, with her client id.
        await bert.send(awareness_message([Presence(ada.doc.client_id, 9, "null")]))
        await bert.drain(0.3)
        shown = json.loads(ada.presence[bert.doc.client_id])
        await ada.close()
        await bert.close()
        return shown, ada.doc.client_id in bert.presence

    shown, ada_still_shown = async_to_sync(scenario)()
    assert shown["user"] == bert_as_shown
    assert bert_as_shown["color"] == LIVE_PALETTE[other_author.pk % len(LIVE_PALETTE)]
    assert "<img" not in bert_as_shown["name"]
    assert "style" not in shown and OVERLAY not in json.dumps(shown)
    assert ada_still_shown
