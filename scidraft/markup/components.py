"""The HTML of the theme's components that shortcodes place: promotions, galleries and entry
indexes, cleaned as the author's HTML is (their parameters are the author's strings)."""

from __future__ import annotations

import functools
import html

from . import inline_math
from .context import RenderContext
from .preambles import preamble_macros
from .rendered import RenderWarning
from .sanitise import clean_fragment
from .stash import Stash


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


def entry_index_html(
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
