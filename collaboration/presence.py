"""Who is editing, as the others see it: each connection's presence (awareness) states carry
the name and colour the server gives its person, never what the browser claimed.

y-codemirror.next writes a state's `user.color` and `user.colorLight` into `style`
attributes of the other editors' pages, and its `user.name` into their cursors' labels: a
colour such as `red;position:fixed;inset:0` would let one co-author draw over another's
editor. The server therefore rewrites `user` in every state it relays (the person's name as
text, a colour of LIVE_PALETTE) and keeps only the fields the editor reads (`user`,
y-codemirror's `cursor`); a state that is not a JSON object is dropped."""

from __future__ import annotations

import json
from dataclasses import dataclass

from django.contrib.auth import get_user_model

from .protocol import Presence

# Collaborators' colours (cursors, selections, the "who is here" badges): white text on each
# has a contrast of at least 4.5, and each stands out on the light and the dark editor.
LIVE_PALETTE = (
    "#c0392b",
    "#1d6fb8",
    "#2e7d32",
    "#8e44ad",
    "#b35c00",
    "#00796b",
    "#c2185b",
    "#5c6bc0",
    "#7b6a00",
    "#0277bd",
)
# The alpha y-codemirror.next's selections are drawn with (colorLight: the colour and this).
LIGHT_ALPHA = "33"
# What a state may carry besides `user`: y-codemirror.next's cursor (relative positions).
KEPT_FIELDS = ("cursor",)


@dataclass(frozen=True)
class Person:
    user_id: int
    name: str
    color: str

    def user_state(self) -> dict:
        return {
            "name": self.name,
            "color": self.color,
            "colorLight": self.color + LIGHT_ALPHA,
            "id": str(self.user_id),
        }


def person(user) -> Person:
    """The name a user writes under (their author's, else their full name, else their login)
    and their colour, which follows the user id: a person keeps theirs on every note, and two
    co-authors with neighbouring ids never share one."""
    author = getattr(user, "author", None)
    name = (author.name if author else "") or user.get_full_name() or user.get_username()
    return Person(user.pk, name, LIVE_PALETTE[user.pk % len(LIVE_PALETTE)])


def person_of(user_id: int) -> Person:
    user = get_user_model().objects.select_related("author").filter(pk=user_id).first()
    if user is None:  # deleted since the access check: the next check closes the socket
        return Person(user_id, "Someone", LIVE_PALETTE[user_id % len(LIVE_PALETTE)])
    return person(user)


def restated(entries: list[Presence], who: Person) -> list[Presence]:
    """`entries` as the others may see them: each state's `user` is `who`'s, other fields
    but the cursor are left out, and a state that is not a JSON object is dropped ("null",
    a client leaving, stays)."""
    kept = []
    for entry in entries:
        if entry.state == "null":
            kept.append(entry)
            continue
        try:
            state = json.loads(entry.state)
        except ValueError:
            continue
        if not isinstance(state, dict):
            continue
        clean = {name: state[name] for name in KEPT_FIELDS if name in state}
        clean["user"] = who.user_state()
        kept.append(Presence(entry.client_id, entry.clock, json.dumps(clean)))
    return kept
