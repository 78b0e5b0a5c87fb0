"""pybtex's template nodes (`pybtex.style.template`), rebuilt to cost less.

Same names, arguments and results as pybtex's `join`, `words`, `together`, `sentence`,
`optional`, `first_of`, `field`, `optional_field`, `names`, `tag`, `href` and `toplevel`: they
are pybtex `Node`s, so they mix with pybtex's and the styles' own nodes. The differences are in
cost only:

* each node builds its rich text in one call where pybtex nests two or three (pybtex normalises
  every Text it builds: flattening, merging neighbours; flat or nested, the result is the same
  Text, which tests/bibliography/test_template.py checks against pybtex), and with `rich_text`, a
  cheaper equivalent of pybtex's Text constructor;
* `field` decodes LaTeX through `decode_latex`, which remembers its results and skips
  latexcodec for plain text.

Children are formatted in pybtex's order, lazily where pybtex is lazy (`first_of`, `optional`),
so a missing field raises the same `FieldIsMissing` and an incomplete entry reads the same.
"""

from __future__ import annotations

from pybtex.richtext import (
    BaseMultipartText,
    BaseText,
    HRef,
    Protected,
    String,
    Symbol,
    Tag,
    Text,
    ensure_text,
    nbsp,
)
from pybtex.style.template import FieldIsMissing, node
from pybtex.textutils import is_terminated, tie_or_space

from .decoding import decode_latex

_SPACE = String(" ")
_UNMERGED = (None, ())  # pybtex's BaseText._typeinfo()
_MULTI = frozenset({Text, Tag, HRef, Protected})  # whose len() is their `length`


def rich_text(*parts) -> Text:
    """`Text(*parts)`, built as pybtex's constructor builds it (empty parts dropped, Texts
    unpacked, neighbours of one kind merged) with less overhead: formatting builds thousands
    of Texts, and pybtex's constructor, made of generators and itertools.groupby, was the
    largest cost left. Neighbouring strings, the most common parts, are joined as plain str
    into one String. tests/bibliography/test_template.py compares the two."""
    merged: list = []
    run: list[str] = []  # neighbouring strings
    group: list = []  # neighbouring rich texts of one kind
    kind = None
    for part in parts:
        cls = type(part)
        if cls is str or cls is String:
            value = part if cls is str else part.value
            if value:
                if group:
                    _merge(group, kind, merged)
                    group = []
                run.append(value)
            continue
        if cls is Text:
            items = part.parts
        elif cls in _MULTI:
            items = (part,) if part.length else ()
        else:
            items = _other_items(part)
        for item in items:  # as above, for the parts of a Text
            cls = type(item)
            if cls is String:
                if group:
                    _merge(group, kind, merged)
                    group = []
                run.append(item.value)
                continue
            if run:
                merged.append(_string("".join(run)))
                run = []
            # _typeinfo(), without the call: (type, info) for pybtex's multipart texts, and
            # (None, ()) (never merged) for the rest, such as Symbol.
            item_kind = (cls, item.info) if isinstance(item, BaseMultipartText) else _UNMERGED
            if group and item_kind != kind:
                _merge(group, kind, merged)
                group = []
            group.append(item)
            kind = item_kind
    if group:
        _merge(group, kind, merged)
    elif run:
        merged.append(_string("".join(run)))
    result = _new(Text)
    result.parts = merged
    result.length = sum(
        [
            len(item.value)
            if type(item) is String
            else item.length
            if type(item) in _MULTI
            else len(item)
            for item in merged
        ]
    )
    return result


def _other_items(part) -> tuple:
    """The items a part other than str, String and pybtex's multipart texts adds: a Symbol
    or another rich text when not empty, the parts of a Text subclass, a str subclass as a
    String; anything else raises pybtex's TypeError."""
    if isinstance(part, Text):
        return tuple(part.parts)
    if isinstance(part, str):
        return (_string(str(part)),) if part else ()
    if isinstance(part, BaseText):
        return (part,) if part else ()
    ensure_text(part)  # raises pybtex's TypeError
    return ()


_new = object.__new__


def _string(value: str) -> String:
    """`String(value)`, without the call to its constructor."""
    string = _new(String)
    string.value = value
    return string


def text_capitalize(text: Text) -> Text:
    """`text.capitalize()` (first letter upper case, the rest lower case, Protected kept), as
    pybtex computes it by slicing and joining Texts, for less when the text starts with a
    string; tests/bibliography/test_template.py compares the two."""
    first = _leading_string(text)
    if first is None:
        return text.capitalize()
    return rich_text(first[:1].upper() + first[1:].lower(), *[p.lower() for p in text.parts[1:]])


def text_capfirst(text: Text) -> Text:
    """`text.capfirst()` (first letter upper case), as `text_capitalize`, for less."""
    first = _leading_string(text)
    if first is None:
        return text.capfirst()
    return rich_text(first[:1].upper() + first[1:], *text.parts[1:])


def _leading_string(text) -> str | None:
    """The value of a Text's first part when it is a non-empty String, else None."""
    if type(text) is not Text or not text.parts:
        return None
    first = text.parts[0]
    return first.value if type(first) is String and first.value else None


def joined_text(sep, parts) -> Text:
    """`Text(sep).join(parts)`: pybtex's join, the separator between every two parts."""
    pieces = []
    for part in parts:
        if pieces:
            pieces.append(sep)
        pieces.append(part)
    return rich_text(*pieces)


def _merge(group: list, kind: tuple, merged: list) -> None:
    """One run of neighbours of one kind (not strings), merged as pybtex merges them."""
    if len(group) == 1 or not kind[0]:
        merged += group
    else:
        cls, info = kind
        merged.append(cls(*info, *[part for item in group for part in item.parts]))


_NEWBLOCK = Symbol("newblock")


def _formatted(child, data):
    format_data = getattr(child, "format_data", None)
    return child if format_data is None else format_data(data)


def _nonempty(children, data) -> list:
    return [part for part in (_formatted(child, data) for child in children) if part]


def _joined(parts: list, sep, sep2=None, last_sep=None) -> list:
    """The pieces of pybtex's `join` (`a, b, and c`), flat."""
    if len(parts) <= 1:
        return parts
    if len(parts) == 2:
        return [parts[0], sep if sep2 is None else sep2, parts[1]]
    pieces = []
    for part in parts[:-1]:
        pieces += (part, sep)
    pieces[-1] = sep if last_sep is None else last_sep
    pieces.append(parts[-1])
    return pieces


@node
def join(children, data, sep="", sep2=None, last_sep=None):
    """Join text fragments together (pybtex's `join`)."""
    return rich_text(*_joined(_nonempty(children, data), sep, sep2, last_sep))


@node
def words(children, data, sep=" "):
    """Join text fragments with spaces or something else (pybtex's `words`)."""
    return rich_text(*_joined(_nonempty(children, data), sep))


@node
def together(children, data, last_tie=False):
    """Keep words together with ties, like BibTeX (pybtex's `together`)."""
    parts = _nonempty(children, data)
    if not parts:
        return rich_text()
    if len(parts) <= 2:
        tie = nbsp if last_tie else tie_or_space(parts[0], nbsp, _SPACE, other_word=parts[-1])
        return rich_text(*_joined(parts, tie))
    pieces = [parts[0], tie_or_space(parts[0], nbsp, _SPACE)]
    for part in parts[1:-2]:
        pieces += (part, _SPACE)
    pieces += (parts[-2], nbsp if last_tie else tie_or_space(parts[-1], nbsp, _SPACE), parts[-1])
    return rich_text(*pieces)


@node
def sentence(children, data, capfirst=False, capitalize=False, add_period=True, sep=", "):
    """Join fragments, capitalise as asked, end with a period (pybtex's `sentence`)."""
    parts = _nonempty(children, data)
    pieces = _joined(parts, sep)
    if capfirst or capitalize or not add_period:
        joined = rich_text(*pieces)
        if capfirst:
            joined = text_capfirst(joined)
        if capitalize:
            joined = text_capitalize(joined)
        return joined.add_period() if add_period else joined
    # pybtex's add_period appends "." to the joined text unless it ends a sentence already:
    # the same as appending it to the pieces.
    if parts and not is_terminated(parts[-1]):
        pieces.append(".")
    return rich_text(*pieces)


@node
def toplevel(children, data):
    """The blocks of an entry, separated by pybtex's `newblock` (pybtex's `toplevel`)."""
    return rich_text(*_joined(_nonempty(children, data), _NEWBLOCK))


@node
def optional(children, data):
    """The children, or nothing when one of them is a missing field (pybtex's `optional`)."""
    try:
        return rich_text(*[_formatted(child, data) for child in children])
    except FieldIsMissing:
        return rich_text()


@node
def first_of(children, data):
    """The first non-empty child; later ones are not formatted (pybtex's `first_of`)."""
    for child in children:
        formatted = _formatted(child, data)
        if formatted:
            return formatted
    return rich_text()


@node
def field(children, context, name, apply_func=None, raw=False):
    """A field of the entry, LaTeX decoded unless `raw` (pybtex's `field`)."""
    if children:
        raise ValueError(children)
    entry = context["entry"]
    try:
        value = entry._find_field(name, bib_data=context.get("bib_data"))
        if not raw:
            value = decode_latex(value)
    except KeyError:
        raise FieldIsMissing(name, entry) from None
    return apply_func(value) if apply_func else value


@node
def optional_field(children, data, *args, **kwargs):
    """A field, or nothing when it is missing (pybtex's `optional_field`)."""
    if children:
        raise ValueError(children)
    try:
        # `field(*args, **kwargs).format_data(data)`, without building a node each time.
        return rich_text(field.f([], data, *args, **kwargs))
    except FieldIsMissing:
        return rich_text()


@node
def names(children, context, role, **kwargs):
    """The persons of `role`, each formatted by the style's name style (pybtex's `names`)."""
    if children:
        raise ValueError(children)
    entry = context["entry"]
    try:
        persons = entry.persons[role]
    except KeyError:
        raise FieldIsMissing(role, entry) from None
    style = context["style"]
    formatted = [style.format_name(person, style.abbreviate_names) for person in persons]
    # pybtex's `join(**kwargs)[formatted]`, without building a node for every entry.
    return _join_formatted(formatted, context, **kwargs)


def _join_formatted(parts: list, data, sep="", sep2=None, last_sep=None) -> Text:
    return rich_text(*_joined(_nonempty(parts, data), sep, sep2, last_sep))


@node
def tag(children, data, name):
    """Children wrapped in a tag such as <em> (pybtex's `tag`)."""
    return Tag(name, *[_formatted(child, data) for child in children])


@node
def href(children, data, url=None, external=False):
    """Children wrapped in a link to `url` (pybtex's `href`, url first)."""
    return HRef(
        _formatted(url, data), *[_formatted(child, data) for child in children], external=external
    )


@node
def either(children, context, test):
    """The first child when `test(entry)`, else the second: the choices pybtex styles make
    while building a template, made at format time so one template serves every entry."""
    yes, no = children
    return _formatted(yes if test(context["entry"]) else no, context)


__all__ = [
    "either",
    "joined_text",
    "rich_text",
    "FieldIsMissing",
    "field",
    "first_of",
    "href",
    "join",
    "names",
    "node",
    "optional",
    "optional_field",
    "sentence",
    "tag",
    "text_capfirst",
    "text_capitalize",
    "together",
    "toplevel",
    "words",
]
