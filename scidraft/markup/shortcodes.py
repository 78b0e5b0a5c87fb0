"""Stage 1, shortcodes: the theme's Hugo shortcodes, written as the theme writes them.

`{{< name key="value" >}}`, `{{% name %}}`, `{{< /name >}}`, with any spacing. Components
(promotions, galleries, entry indexes, reference lists) become stashed blocks; the preview
markers disappear (the card is rendered from their regions, see `preview_regions`).
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from scidraft.bounds import input_path

from . import inline_math, limits
from .code_spans import mask_code
from .context import RenderContext
from .preambles import preamble_macros
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

PAIRED = {"preview", "gallery", "glossary-term", "term"}
ENTRY_INDEXES = {"entry-a-to-z", "entry-categories", "entry-map", "occupation-map",
                 "occupation-categories"}  # fmt: skip
KNOWN = PAIRED | ENTRY_INDEXES | {
    "references", "promotion-textual", "promotion-visual", "gallery-item", "glossary",
}  # fmt: skip


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


def _truthy(value: str | None) -> bool:
    return str(value).strip().lower() in {"true", "1", "yes"}


def promotion_textual(params: dict[str, str]) -> str:
    align = params.get("align", "left")
    align = align if align in {"left", "center"} else "left"
    sponsored = _truthy(params.get("sponsored"))
    rel = "sponsored noopener" if sponsored else params.get("rel", "noopener")
    target = params.get("target", "_blank")
    title = params.get("title", "Your promotion headline")
    lines = "<br>".join(html.escape(part.strip()) for part in title.split("|"))
    parts = [f'<div class="textual-promotion textual-promotion--{align}">']
    if sponsored:
        parts.append(
            '<p class="promotion-sponsored-line">'
            '<span class="promotion-sponsored-label">Sponsored</span></p>'
        )
    parts.append(f'<div class="textual-promotion-title">{lines}</div>')
    if params.get("subtitle"):
        parts.append(f'<p class="textual-promotion-subtitle">{html.escape(params["subtitle"])}</p>')
    if params.get("buttonText"):
        link = html.escape(params.get("buttonLink", "#"))
        parts.append(
            '<div class="textual-promotion-actions">'
            f'<a class="textual-promotion-button" href="{link}"'
            f' rel="{html.escape(rel)}" target="{html.escape(target)}">'
            f"{html.escape(params['buttonText'])}</a></div>"
        )
    parts.append("</div>")
    return clean_fragment("".join(parts))


def gallery_item(params: dict[str, str], rel: str = "noopener") -> str:
    caption = html.escape(params.get("caption", ""))
    image = html.escape(params.get("image", params.get("src", "")))
    link = html.escape(params.get("link", params.get("image", "")))
    return (
        f'<a class="gallery-item" href="{link}" target="_blank" rel="{rel}"><figure>'
        f'<img src="{image}" alt="{caption}" loading="lazy">'
        f"<figcaption>{caption}</figcaption></figure></a>"
    )


def promotion_visual(params: dict[str, str], context: RenderContext) -> str | None:
    data = context.resolve_data(params.get("data", "promotion-visual"))
    if not data or not isinstance(data, dict) or not data.get("rows"):
        return None
    rel = "sponsored noopener" if _truthy(params.get("sponsored")) else "noopener"
    seed = int(context.options.get("seed", 0))
    rows = data["rows"]
    shown = seed % len(rows)
    parts = ['<div class="promotion-visual" data-template-row-random>']
    if _truthy(params.get("sponsored")):
        parts.append(
            '<p class="promotion-sponsored-line">'
            '<span class="promotion-sponsored-label">Sponsored</span></p>'
        )
    for index, row in enumerate(rows):
        hidden = "" if index == shown else " hidden"
        label = html.escape(str(row.get("label", "")))
        items = "".join(
            gallery_item(
                {
                    "image": image.get("file", ""),
                    "caption": image.get("caption", ""),
                    "link": image.get("link") or params.get("link") or context.promotion_link,
                },
                rel,
            )
            for image in row.get("images", [])
        )
        parts.append(
            f'<div class="template-row"{hidden}><p class="template-row-label"><strong>{label}'
            f'</strong></p><div class="image-gallery">{items}</div></div>'
        )
    parts.append("</div>")
    return clean_fragment("".join(parts))


def _entry_index_html(
    rendered: str, stash: Stash, context: RenderContext, warnings: list[RenderWarning], line: int
) -> str:
    """An entry index's HTML cleaned, then its entries' formulas (inline_math's marks) put in
    as KaTeX's, which cleaning would strip: trusted output goes in after the sanitiser."""
    # The site's and the page's macros, read once the index has a formula; their own problems
    # are the body's warnings (pipeline), not repeated here.
    macros = functools.cache(lambda: preamble_macros(context.math_macros, []))

    def formula(tex: str, display: bool) -> str:
        typeset, problem = inline_math.typeset(tex, display, macros())
        if problem:
            warnings.append(RenderWarning(line, "math-error", f"math in an entry index: {problem}"))
        return stash.add(typeset, text=tex, kind="math", line=line)

    return inline_math.typeset_marked(clean_fragment(rendered), formula)


def process(
    text: str,
    stash: Stash,
    context: RenderContext,
    warnings: list[RenderWarning],
    state: ShortcodeState,
) -> str:
    """Replace shortcodes with stashed HTML; returns the text."""
    lines = LineIndex(text)
    codes = parse(text, lines)
    for code in codes:
        # Arguments are plain strings: code written inside one is its text, not its HTML.
        code.params = {key: stash.plain(value) for key, value in code.params.items()}
    out, cursor = [], 0
    skip_until = -1
    open_pairs: dict[str, list[Shortcode]] = {}

    def keep_lines(shortcode: Shortcode) -> str:
        return "\n" * text.count("\n", shortcode.start, shortcode.end)

    for index, code in enumerate(codes):
        if limits.expired():
            break  # the rest stays as written: Markdown's fallback shows it escaped
        if code.start < skip_until:
            continue
        out.append(text[cursor : code.start])
        cursor = code.end
        original = text[code.start : code.end]
        name = code.name

        if name not in KNOWN:
            warnings.append(
                RenderWarning(
                    code.line, "shortcode-unknown", f"unknown shortcode {{{{< {name} >}}}}"
                )
            )
            out.append(original)
            continue

        if name == "preview":
            if code.closing:
                if not open_pairs.get("preview"):
                    warnings.append(
                        RenderWarning(
                            code.line,
                            "shortcode-unpaired",
                            "{{< /preview >}} without an opening {{< preview >}}",
                        )
                    )
                else:
                    open_pairs["preview"].pop()
            else:
                open_pairs.setdefault("preview", []).append(code)
                state.preview_regions += 1
            out.append(keep_lines(code))
            continue

        if name in {"glossary-term", "term"}:
            if code.closing:
                if not open_pairs.get("term"):
                    out.append(original)
                    continue
                open_pairs["term"].pop()
                out.append(stash.add("</span>", kind="glossary-close", original=original))
            else:
                open_pairs.setdefault("term", []).append(code)
                gid = html.escape(code.params.get("id", ""))
                definition = html.escape(code.params.get("def", ""))
                tag = clean_fragment(
                    f'<span class="glossary-term" data-gid="{gid}" data-def="{definition}">x</span>'
                )
                out.append(
                    stash.add(
                        tag[: tag.rindex("x</span>")], kind="glossary-open", original=original
                    )
                )
            continue

        if code.closing:
            # A closing tag of a component that was consumed with its opening one.
            out.append(keep_lines(code))
            continue

        if name == "references":
            state.references += 1
            bibs = code.params.get("bib", "")
            data = {
                "bib": [part.strip() for part in bibs.split(",") if part.strip()],
                "title": code.params.get("title", ""),
                "style": code.params.get("style", ""),
                "line": code.line,
            }
            out.append(
                stash.add(
                    None,
                    block=True,
                    kind="references",
                    line=code.line,
                    original=original,
                    data=data,
                )
            )
        elif name == "promotion-textual":
            out.append(
                stash.add(
                    promotion_textual(code.params),
                    block=True,
                    kind="promotion",
                    line=code.line,
                    original=original,
                    text=code.params.get("title", ""),
                )
            )
        elif name == "promotion-visual":
            rendered = promotion_visual(code.params, context)
            if rendered is None:
                warnings.append(
                    RenderWarning(
                        code.line,
                        "shortcode-data",
                        "promotion-visual: no data file "
                        f"{code.params.get('data', 'promotion-visual')} with rows",
                    )
                )
                rendered = ""
            out.append(
                stash.add(rendered, block=True, kind="promotion", line=code.line, original=original)
            )
        elif name == "gallery":
            closing = next(
                (
                    later
                    for later in codes[index + 1 :]
                    if later.name == "gallery" and later.closing
                ),
                None,
            )
            items = [
                later
                for later in codes[index + 1 :]
                if later.name == "gallery-item" and (closing is None or later.start < closing.start)
            ]
            if closing is None:
                warnings.append(
                    RenderWarning(
                        code.line, "shortcode-unpaired", "{{< gallery >}} is never closed"
                    )
                )
            end = closing.end if closing else code.end
            rendered = clean_fragment(
                '<div class="image-gallery">'
                + "".join(gallery_item(item.params) for item in items)
                + "</div>"
            )
            out.append(
                stash.add(
                    rendered,
                    block=True,
                    kind="gallery",
                    line=code.line,
                    original=text[code.start : end],
                )
            )
            cursor = end
            skip_until = end
        elif name == "gallery-item":
            rendered = clean_fragment(
                f'<div class="image-gallery">{gallery_item(code.params)}</div>'
            )
            out.append(
                stash.add(rendered, block=True, kind="gallery", line=code.line, original=original)
            )
        elif name == "glossary":
            out.append(
                stash.add(
                    '<aside class="glossary-panel" id="glossary-panel" aria-label="Glossary">'
                    "</aside>",
                    block=True,
                    kind="glossary",
                    line=code.line,
                    original=original,
                )
            )
        elif name in ENTRY_INDEXES:
            state.entry_index = True
            canonical = {
                "entry-map": "entry-a-to-z",
                "occupation-map": "entry-a-to-z",
                "occupation-categories": "entry-categories",
            }.get(name, name)
            rendered = context.render_entry_index(canonical, dict(code.params))
            if rendered is None:
                warnings.append(
                    RenderWarning(
                        code.line,
                        "shortcode-data",
                        f"{name}: no entry set {code.params.get('set', '(default)')} on this site",
                    )
                )
                rendered = '<p class="entry-empty">No entries published yet.</p>'
            out.append(
                stash.add(
                    _entry_index_html(rendered, stash, context, warnings, code.line),
                    block=True,
                    kind="entry-index",
                    line=code.line,
                    original=original,
                )
            )
    out.append(text[cursor:])

    for name, pending in open_pairs.items():
        for code in pending:
            label = "preview" if name == "preview" else code.name
            warnings.append(
                RenderWarning(
                    code.line, "shortcode-unpaired", f"{{{{< {label} >}}}} is never closed"
                )
            )
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
    """Files of the body's first references list, which the card's list reads (theme-spec
    §2.4): () when that list names none (the note's defaults apply), None when there is none."""
    for code in parse(mask_code(source)):
        if code.name == "references" and not code.closing:
            bibs = code.params.get("bib", "")
            return tuple(part.strip() for part in bibs.split(",") if part.strip())
    return None
