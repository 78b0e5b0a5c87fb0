"""Stage 8, fill: trusted server output replaces the placeholders in the sanitised HTML.

Citations and cross-references are resolved first (their numbers depend on the whole note),
then every placeholder is replaced. A block (code, diagram, algorithm, list, environment) that
Markdown wrapped in a paragraph is taken out of it, so the result is valid HTML.
"""

from __future__ import annotations

import html
import re

from . import citations, mathlinks
from .context import RenderContext
from .crossrefs import reference_text
from .rendered import CitationList, RenderWarning
from .sourcelines import ATTRIBUTE as SOURCE_LINE
from .sourcelines import with_source_line
from .stash import CLOSE, OPEN, TOKEN, Item, Stash

# A tag with a placeholder in it (in an attribute): the only tags `substitute` rewrites, found
# without a Python call for each of the others.
_TAG_WITH_PLACEHOLDER = re.compile(f"<[^<>{OPEN}]*{OPEN}[^<>]*>")
# A paragraph as Markdown writes it: bare, or with its source line in the editor preview.
_PARAGRAPH = re.compile(f'<p(?: {SOURCE_LINE}="(\\d+)")?>(.*?)</p>', re.S)


def _resolve_refs(
    items: list[Item],
    labels: dict[str, dict],
    context: RenderContext,
    warnings: list[RenderWarning],
    references: dict[str, dict | None],
) -> None:
    """Fill each \\ref: a label of this note, else one of another note, asked of the context
    for all of them at once. What each cross-note key resolved to is put in `references`."""
    wanted = {
        tuple(key.split(":", 1))
        for item in items
        for key in (item.data or {})["keys"]
        if key not in labels and ":" in key
    }
    targets = context.resolve_references(wanted) if wanted else {}
    for slug, label in wanted:
        target = targets.get((slug, label))
        references[f"{slug}:{label}"] = (
            {"text": target.text, "url": target.url} if target is not None else None
        )
    for item in items:
        data = item.data or {}
        parts = []
        for key in data["keys"]:
            local = labels.get(key)
            if local is not None:
                text = reference_text(data["command"], local)
                css = "eqref" if data["command"] == "eqref" else "ref"
                parts.append(
                    f'<a class="{css}" href="#{html.escape(local["anchor"])}">'
                    f"{html.escape(text)}</a>"
                )
                continue
            target = targets.get(tuple(key.split(":", 1))) if ":" in key else None
            if target is not None:
                text = reference_text(
                    data["command"],
                    {"kind": target.kind, "number": target.number, "text": target.text},
                )
                parts.append(
                    f'<a class="ref ref-external" href="{html.escape(target.url)}">'
                    f"{html.escape(text)}</a>"
                )
                continue
            warnings.append(
                RenderWarning(
                    item.line, "ref-unresolved", f"\\{data['command']}{{{key}}} points at no label"
                )
            )
            parts.append(
                f'<span class="ref-missing" title="unresolved reference: {html.escape(key)}">'
                "??</span>"
            )
        item.html = ", ".join(parts)


def _fill_math_references(item: Item, stash: Stash) -> None:
    """A formula's \\ref markers become the links _resolve_refs made (mathlinks)."""
    resolved = [stash.item(index) for index in item.data["refs"]]
    links = [ref.html or "" for ref in resolved]
    texts = [html.unescape(_TAGS.sub("", link)) for link in links]
    sources = [ref.data["source"] for ref in resolved]
    item.html = mathlinks.fill_references(item.html or "", links, texts, sources)


_TAGS = re.compile(r"<[^>]+>")


def _hoist_blocks(markup: str, stash: Stash) -> str:
    """Take block placeholders out of the paragraphs Markdown put them in."""

    def is_block(match: re.Match) -> bool:
        return stash.item(int(match.group(1))).block

    def lined(token: re.Match, line: int) -> str:
        # The paragraph's source line moves to the block it unwraps (sourcelines.py).
        item = stash.item(int(token.group(1)))
        if line and item.html and item.kind != "environment-close":
            item.html = with_source_line(item.html, item.line or line)
        return token.group(0)

    def paragraph(match: re.Match) -> str:
        line = int(match.group(1) or 0)
        content = match.group(2)
        if OPEN not in content:
            return match.group(0)
        whole = TOKEN.fullmatch(content)
        if whole and is_block(whole):
            return lined(whole, line)  # the usual case, without splitting around it
        tokens = [token for token in TOKEN.finditer(content) if is_block(token)]
        if not tokens:
            return match.group(0)
        pieces, cursor = [], 0
        opening = f'<p {SOURCE_LINE}="{line}">' if line else "<p>"
        for token in tokens:
            before = content[cursor : token.start()]
            if before.strip():
                pieces.append(f"{opening}{before.strip()}</p>")
                line, opening = 0, "<p>"
            pieces.append(lined(token, line))
            line = 0
            cursor = token.end()
        after = content[cursor:]
        if after.strip():
            pieces.append(f"<p>{after.strip()}</p>")
        return "\n".join(pieces)

    return _PARAGRAPH.sub(paragraph, markup)


def substitute(markup: str, stash: Stash) -> str:
    """Replace placeholders: plain text inside tags (attributes), HTML elsewhere."""

    def in_tag(tag: re.Match) -> str:
        return TOKEN.sub(
            lambda match: html.escape(stash.item(int(match.group(1))).text, quote=True),
            tag.group(0),
        )

    for _ in range(8):  # item HTML may itself hold placeholders (an environment's title)
        if OPEN not in markup:
            break
        # Every round: a placeholder that lands inside a tag becomes escaped text, never HTML.
        markup = _TAG_WITH_PLACEHOLDER.sub(in_tag, markup)
        markup = TOKEN.sub(lambda match: stash.item(int(match.group(1))).html or "", markup)
    return markup.replace(OPEN, "").replace(CLOSE, "")


def fill(
    markup: str,
    stash: Stash,
    context: RenderContext,
    warnings: list[RenderWarning],
    labels: dict[str, dict],
    *,
    card: bool = False,
    card_bibs: tuple[str, ...] | None = None,
    references: dict[str, dict | None] | None = None,
) -> tuple[str, list[CitationList]]:
    ordered = [stash.item(int(match.group(1))) for match in TOKEN.finditer(markup)]
    lists, trailing = citations.resolve(ordered, context, warnings, card=card, card_bibs=card_bibs)
    refs = [item for item in ordered if item.kind == "ref"]
    formulas = [item for item in ordered if item.kind == "math" and item.data]
    in_math = [stash.item(index) for item in formulas for index in item.data["refs"]]
    _resolve_refs(
        refs + in_math, labels, context, warnings, {} if references is None else references
    )
    for item in formulas:
        _fill_math_references(item, stash)
    markup = _hoist_blocks(markup, stash)
    return substitute(markup, stash) + trailing, lists
