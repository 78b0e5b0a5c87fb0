"""Stage 2, shortcodes: the theme's Hugo shortcodes, written as the theme writes them.

`{{< name key="value" >}}`, `{{% name %}}`, `{{< /name >}}`, with any spacing. Components
(promotions, galleries, entry indexes, reference lists) become stashed blocks; the preview
markers disappear (the card is rendered from their regions, see `preview_regions`).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from scidraft.bounds import input_path

from . import components, limits
from .code_spans import mask_code
from .context import RenderContext
from .rendered import RenderWarning
from .sanitise import clean_fragment
from .stash import LineIndex, Stash

# A shortcode is `{{<` … `>}}` or `{{%` … `%}}`, up to the first closer of its kind.
_CLOSERS = {"<": ">}}", "%": "%}}"}
_HEAD = re.compile(
    r"\s*(?P<close>/)?\s*(?P<name>[A-Za-z][\w-]*)(?P<args>.*?)\s*(?P<self>/)?\s*$", re.S
)
_ARG = re.compile(
    r"""(?:(?P<key>[\w-]+)\s*=\s*)?(?P<value>"(?:[^"\\]|\\.)*"|`[^`]*`|'[^']*'|[^\s"'`]+)""", re.S
)

ENTRY_INDEXES = ("entry-a-to-z", "entry-categories", "entry-map", "occupation-map",
                 "occupation-categories")  # fmt: skip


@dataclass(frozen=True)
class Signature:
    """What a shortcode takes, for the editor's completion and the syntax guide."""

    summary: str
    params: tuple[str, ...] = ()
    paired: bool = False


_ENTRY_INDEX_PARAMS = (
    "set", "titleField", "categoryField", "aliasesField", "summaryField", "tag", "countLabel",
)  # fmt: skip
SHORTCODES: dict[str, Signature] = {
    "references": Signature(
        "the reference list of the citations before it", ("bib", "title", "style")
    ),
    "preview": Signature("the region a feed card shows", paired=True),
    "promotion-textual": Signature(
        "a text promotion",
        ("title", "subtitle", "buttonText", "buttonLink", "align", "rel", "target", "sponsored"),
    ),
    "promotion-visual": Signature("rows of images from a data file", ("data", "link", "sponsored")),
    "gallery": Signature("a grid of linked images", paired=True),
    "gallery-item": Signature("one image of a gallery", ("image", "caption", "link")),
    "glossary": Signature("the glossary panel of the note"),
    "glossary-term": Signature("a term with its definition", ("id", "def"), paired=True),
    "term": Signature("a term (the older name of glossary-term)", ("id", "def"), paired=True),
    "entry-a-to-z": Signature("an A–Z index of an entry set", _ENTRY_INDEX_PARAMS),
    "entry-categories": Signature("an entry set by category", _ENTRY_INDEX_PARAMS),
    "entry-map": Signature("the legacy name of entry-a-to-z", _ENTRY_INDEX_PARAMS),
    "occupation-map": Signature("a legacy name of entry-a-to-z", _ENTRY_INDEX_PARAMS),
    "occupation-categories": Signature("the legacy name of entry-categories", _ENTRY_INDEX_PARAMS),
}


@dataclass
class Shortcode:
    name: str
    params: dict[str, str]
    positional: list[str]
    closing: bool
    start: int
    end: int
    line: int


@dataclass
class ShortcodeState:
    references: int = 0
    preview_regions: int = 0
    entry_index: bool = False
    promotions: list[str] = field(default_factory=list)


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'`":
        inner = value[1:-1]
        if value[0] == '"':
            inner = re.sub(r"\\(.)", r"\1", inner)
        return inner
    return value


def _spans(text: str) -> Iterator[tuple[int, int, str]]:
    """Each shortcode's start, end and text between its delimiters, in one pass: an opener
    takes the first closer of its kind after it. Once a kind has no closer left, its later
    openers are passed over at once (a lazy pattern searched to the end of the text for each
    of them: 256 KB of unclosed `{{< ` took 53 s)."""
    closed = {"<": True, "%": True}  # whether a closer of the kind may still come
    index = text.find("{{")
    while index >= 0:
        kind = text[index + 2 : index + 3]
        if kind in _CLOSERS and closed[kind]:
            end = text.find(_CLOSERS[kind], index + 3)
            if end >= 0:
                yield index, end + 3, text[index + 3 : end]
                index = text.find("{{", end + 3)
                continue
            closed[kind] = False
        index = text.find("{{", index + 1)


@input_path("shortcode-arguments")
def parse(text: str, lines: LineIndex | None = None) -> list[Shortcode]:
    lines = lines or LineIndex(text)
    found = []
    for start, end, inner in _spans(text):
        head = _HEAD.match(inner)
        if not head:
            continue
        params, positional = {}, []
        for arg in _ARG.finditer(head.group("args")):
            value = _unquote(arg.group("value"))
            if arg.group("key"):
                params[arg.group("key")] = value
            else:
                positional.append(value)
        found.append(
            Shortcode(
                name=head.group("name").lower(),
                params=params,
                positional=positional,
                closing=bool(head.group("close")),
                start=start,
                end=end,
                line=lines.line(start),
            )
        )
    return found


@dataclass
class ShortcodeRun:
    """One pass over a body's shortcodes: what every handler reads, and where the text resumes
    after the shortcode being handled (a gallery takes its items and closing tag with it)."""

    text: str
    codes: list[Shortcode]
    stash: Stash
    context: RenderContext
    warnings: list[RenderWarning]
    state: ShortcodeState
    open_pairs: dict[str, list[Shortcode]] = field(default_factory=dict)
    index: int = 0  # of the shortcode being handled
    resume: int = 0

    def original(self, code: Shortcode) -> str:
        return self.text[code.start : code.end]

    def keep_lines(self, code: Shortcode) -> str:
        return "\n" * self.text.count("\n", code.start, code.end)

    def later(self) -> list[Shortcode]:
        return self.codes[self.index + 1 :]

    def warn(self, code: Shortcode, kind: str, message: str) -> None:
        self.warnings.append(RenderWarning(code.line, kind, message))

    def block(self, markup: str | None, code: Shortcode, kind: str, **item) -> str:
        """`markup` stashed as a block in the shortcode's place."""
        item.setdefault("original", self.original(code))
        return self.stash.add(markup, block=True, kind=kind, line=code.line, **item)


# A handler returns the text that replaces its shortcode. Most take only opening tags: the
# closing tag of a component consumed with its opening one keeps its lines and nothing else.
Handler = Callable[[ShortcodeRun, Shortcode], str]
HANDLERS: dict[str, Handler] = {}
_TAKE_CLOSING: set[str] = set()


def _handles(*names: str, closing: bool = False) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        for name in names:
            HANDLERS[name] = handler
            if closing:
                _TAKE_CLOSING.add(name)
        return handler

    return register


@_handles("preview", closing=True)
def _preview(run: ShortcodeRun, code: Shortcode) -> str:
    """The card's region: the markers disappear (pipeline renders the card from
    preview_regions)."""
    if not code.closing:
        run.open_pairs.setdefault("preview", []).append(code)
        run.state.preview_regions += 1
    elif run.open_pairs.get("preview"):
        run.open_pairs["preview"].pop()
    else:
        run.warn(code, "shortcode-unpaired", "{{< /preview >}} without an opening {{< preview >}}")
    return run.keep_lines(code)


@_handles("glossary-term", "term", closing=True)
def _glossary_term(run: ShortcodeRun, code: Shortcode) -> str:
    """A term's span opens at its tag and closes at its closing tag (the text between is
    Markdown); a closing tag with no term open stays as written."""
    original = run.original(code)
    if code.closing:
        if not run.open_pairs.get("term"):
            return original
        run.open_pairs["term"].pop()
        return run.stash.add("</span>", kind="glossary-close", original=original)
    run.open_pairs.setdefault("term", []).append(code)
    gid = html.escape(code.params.get("id", ""))
    definition = html.escape(code.params.get("def", ""))
    tag = clean_fragment(
        f'<span class="glossary-term" data-gid="{gid}" data-def="{definition}">x</span>'
    )
    return run.stash.add(tag[: tag.rindex("x</span>")], kind="glossary-open", original=original)


@_handles("references")
def _references(run: ShortcodeRun, code: Shortcode) -> str:
    """A reference list, formatted in fill once every citation before it is known."""
    run.state.references += 1
    bibs = code.params.get("bib", "")
    data = {
        "bib": [part.strip() for part in bibs.split(",") if part.strip()],
        "title": code.params.get("title", ""),
        "style": code.params.get("style", ""),
        "line": code.line,
    }
    return run.block(None, code, "references", data=data)


@_handles("promotion-textual")
def _promotion_textual(run: ShortcodeRun, code: Shortcode) -> str:
    markup = components.promotion_textual(code.params)
    return run.block(markup, code, "promotion", text=code.params.get("title", ""))


@_handles("promotion-visual")
def _promotion_visual(run: ShortcodeRun, code: Shortcode) -> str:
    markup = components.promotion_visual(code.params, run.context)
    if markup is None:
        run.warn(
            code,
            "shortcode-data",
            f"promotion-visual: no data file {code.params.get('data', 'promotion-visual')} "
            "with rows",
        )
        markup = ""
    return run.block(markup, code, "promotion")


@_handles("gallery")
def _gallery(run: ShortcodeRun, code: Shortcode) -> str:
    """The gallery and its items up to its closing tag, as one block."""
    later = run.later()
    closing = next((item for item in later if item.name == "gallery" and item.closing), None)
    items = [
        item
        for item in later
        if item.name == "gallery-item" and (closing is None or item.start < closing.start)
    ]
    if closing is None:
        run.warn(code, "shortcode-unpaired", "{{< gallery >}} is never closed")
    end = closing.end if closing else code.end
    markup = clean_fragment(
        '<div class="image-gallery">'
        + "".join(components.gallery_item(item.params) for item in items)
        + "</div>"
    )
    run.resume = end
    return run.block(markup, code, "gallery", original=run.text[code.start : end])


@_handles("gallery-item")
def _gallery_item(run: ShortcodeRun, code: Shortcode) -> str:
    """An item outside a gallery: a gallery of one."""
    markup = clean_fragment(
        f'<div class="image-gallery">{components.gallery_item(code.params)}</div>'
    )
    return run.block(markup, code, "gallery")


@_handles("glossary")
def _glossary(run: ShortcodeRun, code: Shortcode) -> str:
    markup = '<aside class="glossary-panel" id="glossary-panel" aria-label="Glossary"></aside>'
    return run.block(markup, code, "glossary")


# The legacy names of the entry indexes.
_ENTRY_INDEX_NAMES = {
    "entry-map": "entry-a-to-z",
    "occupation-map": "entry-a-to-z",
    "occupation-categories": "entry-categories",
}


@_handles(*ENTRY_INDEXES)
def _entry_index(run: ShortcodeRun, code: Shortcode) -> str:
    """An index of a site's entry set, which the context renders (it reads other notes)."""
    run.state.entry_index = True
    canonical = _ENTRY_INDEX_NAMES.get(code.name, code.name)
    rendered = run.context.render_entry_index(canonical, dict(code.params))
    if rendered is None:
        run.warn(
            code,
            "shortcode-data",
            f"{code.name}: no entry set {code.params.get('set', '(default)')} on this site",
        )
        rendered = '<p class="entry-empty">No entries published yet.</p>'
    markup = components.entry_index_html(rendered, run.stash, run.context, run.warnings, code.line)
    return run.block(markup, code, "entry-index")


# The shortcodes the engine reads: the registry's names.
KNOWN = frozenset(HANDLERS)


def process(
    text: str,
    stash: Stash,
    context: RenderContext,
    warnings: list[RenderWarning],
    state: ShortcodeState,
) -> str:
    """Replace shortcodes with stashed HTML; returns the text."""
    codes = parse(text, LineIndex(text))
    for code in codes:
        # Arguments are plain strings: code written inside one is its text, not its HTML.
        code.params = {key: stash.plain(value) for key, value in code.params.items()}
    run = ShortcodeRun(text, codes, stash, context, warnings, state)
    out = []
    for index, code in enumerate(codes):
        if limits.expired():
            break  # the rest stays as written: Markdown's fallback shows it escaped
        if code.start < run.resume:
            continue  # taken by the shortcode before (a gallery's items)
        out.append(text[run.resume : code.start])
        run.index, run.resume = index, code.end
        handler = HANDLERS.get(code.name)
        if handler is None:
            run.warn(code, "shortcode-unknown", f"unknown shortcode {{{{< {code.name} >}}}}")
            out.append(run.original(code))
        elif code.closing and code.name not in _TAKE_CLOSING:
            out.append(run.keep_lines(code))
        else:
            out.append(handler(run, code))
    out.append(text[run.resume :])

    for pending in run.open_pairs.values():
        for code in pending:
            run.warn(code, "shortcode-unpaired", f"{{{{< {code.name} >}}}} is never closed")
    return "".join(out)


_PREVIEW = re.compile(r"\{\{[<%]\s*(/?)\s*preview\s*[>%]\}\}")
_DIVIDER = re.compile(r"^[ \t]*<!--more-->[ \t]*$", re.M)


def summary_divider(text: str, stash: Stash) -> str:
    """Hugo's summary divider, a `<!--more-->` line (the first; code examples do not count):
    kept in the HTML as the comment it is, where excerpts stop (excerpt.py), since the
    sanitiser removes comments. Readers see nothing of it."""
    if "<!--more-->" not in text:
        return text
    return _DIVIDER.sub(
        lambda match: stash.add("<!--more-->", block=True, kind="more", original=match.group()),
        text,
        count=1,
    )


def preview_regions(source: str) -> list[str]:
    """Source text of every preview region, in order (code examples do not count)."""
    if "preview" not in source:
        return []
    masked = mask_code(source)
    regions, start = [], None
    for match in _PREVIEW.finditer(masked):
        if not match.group(1):
            start = match.end()
        elif start is not None:
            regions.append(source[start : match.start()])
            start = None
    return regions


def first_references_bibs(source: str) -> tuple[str, ...] | None:
    """Files of the body's first references list, which the card's list reads
    (docs/theme.md#citations-and-reference-lists): () when that list names none (the note's defaults
    apply), None when there is none."""
    for code in parse(mask_code(source)):
        if code.name == "references" and not code.closing:
            bibs = code.params.get("bib", "")
            return tuple(part.strip() for part in bibs.split(",") if part.strip())
    return None
