"""What a Yjs update (encoding v1, as y-websocket sends it) holds, read before pycrdt applies it:
the note's document is two plain texts, so an update may only insert text into "title" and
"body" and delete. Any other root, an embed, a formatting attribute, a nested type, a map entry
on a text or a dependency on items the document lacks is refused: pycrdt would keep it (and
the database store it) while `str(Text)` never shows it.

The format (Yjs's UpdateEncoderV1, yrs's EncoderV1): the structs grouped by client, then the
delete set. Each struct starts with an info byte: its content's kind in the low five bits,
then whether an origin (0x80), a right origin (0x40) and, when neither, a parent key (0x20)
follow.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .protocol import Malformed, Reader

TEXTS = frozenset({"title", "body"})

# Content kinds (the info byte's low five bits).
GC, DELETED, JSON, BINARY, STRING, EMBED, FORMAT, TYPE, ANY, DOC, SKIP = range(11)
HAS_ORIGIN, HAS_RIGHT_ORIGIN, HAS_PARENT_SUB = 0x80, 0x40, 0x20
# Structs of one update: a 256 KiB message holds fewer (each takes two bytes at least).
STRUCTS_MAX = 200_000

_REFUSED = {
    EMBED: "an embedded object",
    FORMAT: "formatting attributes",
    TYPE: "a nested shared type",
    JSON: "JSON values",
    BINARY: "binary content",
    ANY: "values other than text",
    DOC: "a subdocument",
}


class Refused(Exception):
    """What a client sent or asked for is not taken; the message is for people, `kind` for
    the client (the error message's code)."""

    kind = "refused"


class NotText(Refused):
    """The update holds something other than the note's two plain texts."""

    kind = "not-text"


@dataclass
class Shape:
    """Per client, the clocks its structs cover ([start, end)); the items it names as
    neighbours; the ranges it deletes."""

    blocks: dict[int, tuple[int, int]] = field(default_factory=dict)
    references: list[tuple[int, int]] = field(default_factory=list)
    deletes: list[tuple[int, int, int]] = field(default_factory=list)


def _utf16_length(text: str) -> int:
    """Yjs counts a string's clocks in UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def read(data: bytes) -> Shape:
    """The update's shape, or NotText for what the note's document does not take; Malformed
    when the bytes are not an update."""
    reader = Reader(data)
    shape = Shape()
    structs = 0
    for _ in range(reader.uint()):
        count, client, clock = reader.uint(), reader.uint(), reader.uint()
        if client in shape.blocks:
            raise Malformed("A client's structs come twice.")
        start = clock
        for _ in range(count):
            structs += 1
            if structs > STRUCTS_MAX:
                raise Malformed("The update has too many structs.")
            clock += _struct(reader, shape)
        shape.blocks[client] = (start, clock)
    for _ in range(reader.uint()):
        client = reader.uint()
        for _ in range(reader.uint()):
            start, length = reader.uint(), reader.uint()
            shape.deletes.append((client, start, length))
    if reader.at != len(data):
        raise Malformed("The update has bytes after its delete set.")
    return shape


def _struct(reader: Reader, shape: Shape) -> int:
    """Read one struct; its length in clocks."""
    info = reader.byte()
    kind = info & 0x1F
    if kind in (GC, SKIP):
        return reader.uint()
    if kind not in _REFUSED and kind not in (DELETED, STRING):
        raise Malformed(f"Unknown content kind {kind}.")
    if info & HAS_ORIGIN:
        shape.references.append((reader.uint(), reader.uint()))
    if info & HAS_RIGHT_ORIGIN:
        shape.references.append((reader.uint(), reader.uint()))
    if not info & (HAS_ORIGIN | HAS_RIGHT_ORIGIN):
        if reader.uint() != 1:
            raise NotText("The change writes into a nested type; a note has two texts only.")
        root = reader.string()
        if root not in TEXTS:
            raise NotText(
                f"The change writes into {root[:40]!r}; a note's live document holds only its "
                "title and body."
            )
        if info & HAS_PARENT_SUB:
            raise NotText("The change sets a key on a text; a note's text is plain text.")
    if kind in _REFUSED:
        raise NotText(f"The change holds {_REFUSED[kind]}; a note's text is plain text.")
    if kind == DELETED:
        return reader.uint()
    return _utf16_length(reader.string())


def dependency_missing(shape: Shape, state: dict[int, int]) -> str | None:
    """What the update needs that a document with the state vector `state` lacks (a gap in a
    client's clocks, a neighbour or a deleted item it has never seen), said for people; None
    when it applies whole. pycrdt would keep such an update pending, invisible and unbounded."""
    known = dict(state)
    for client, (start, end) in shape.blocks.items():
        if start > state.get(client, 0):
            return "The change follows changes the server never received."
        known[client] = max(known.get(client, 0), end)
    for client, clock in shape.references:
        if clock >= known.get(client, 0):
            return "The change is placed next to text the server does not have."
    for client, start, length in shape.deletes:
        if start + length > known.get(client, 0):
            return "The change deletes text the server does not have."
    return None


def state_vector(encoded: bytes) -> dict[int, int]:
    """A state vector as {client: clock}."""
    reader = Reader(encoded)
    return {reader.uint(): reader.uint() for _ in range(reader.uint())}
