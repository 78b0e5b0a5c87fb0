"""render(source, context) -> Rendered: the stages in order.

1 protect code · 2 shortcodes · 3 protect math · 4 commands (\\cite, \\ref, \\textbf…)
5 environments · 6 Markdown · 7 sanitise · 8 fill

Code is protected before shortcodes (ARCHITECTURE lists shortcodes first) so that a shortcode
or a \\cite written inside a code example stays literal, as it does in the theme.
"""

from __future__ import annotations

import html as html_lib
import re
from dataclasses import dataclass

from scidraft.bounds import input_path

from . import (
    code,
    commands,
    convert,
    environments,
    figures,
    fill,
    limits,
    nesting,
    plaintext,
    sanitise,
    shortcodes,
)
from .context import RenderContext
from .mathmacros import Macros
from .protect import MathState, preamble_macros, protect_math
from .rendered import CitationList, Rendered, RenderWarning
from .stash import Stash, strip_placeholder_characters

# Bump when the output for the same source changes: stored renders are refreshed
# (`manage.py rerender --check` lists what an upgrade changes). 6: the Markdown stage on
# CommonMark as Hugo's Goldmark renders it (markdown-it-py), where 3 was Python-Markdown;
# reference lists through CSL (citation-js); cross-note references to published notes only.
# 7: math macros and preambles, links, \ref in math, \mbox, \sideset, \ce; the search text
# with references as their labels and formulas between delimiters; `<!--more-->`; the card's
# own asset flags; pseudo-algorithms indent every \hspace by 1em, as the theme's loader does.
# 8: the search text read from the HTML's structure (a `<` in math or code is a character).
# 9: numbered figures (`![caption](src){#fig:x}`) and tables (`Table: caption {#tbl:x}`).
# 10: code blocks, diagrams and algorithms, which scroll sideways, take keyboard focus.
ENGINE_VERSION = "10"

_WORD = re.compile(r"\w[\w'’-]*", re.UNICODE)


@dataclass
class _Body:
    html: str
    toc: str
    text: str
    stash: Stash
    labels: dict[str, dict]
    environments: list[dict]
    citations: list[CitationList]
    references: dict[str, dict | None]
    macros: Macros


def _nesting_warning(limit: nesting.NestingLimit, text: str) -> RenderWarning:
    """The warning for HTML whose nesting was bounded, on the line of the source where it
    starts (found by bounding the source's own HTML; line 1 if Markdown made the depth)."""
    _, in_source = nesting.limit_nesting(text)
    line = text.count("\n", 0, in_source.first_offset) + 1 if in_source else 1
    return RenderWarning(line, "html-nesting", limit.message())


def _render_body(
    source: str,
    context: RenderContext,
    warnings: list[RenderWarning],
    *,
    card: bool = False,
    card_bibs: tuple[str, ...] | None = None,
    macros: Macros | None = None,
) -> _Body:
    stash = Stash()
    counters: dict[str, int] = {}
    text = code.protect_code(source, stash, warnings, counters)
    text = shortcodes.summary_divider(text, stash)
    text = shortcodes.process(text, stash, context, warnings, shortcodes.ShortcodeState())
    if macros is None:
        macros = preamble_macros(context.math_macros, warnings)
    math_state = MathState(macros=macros)
    text = protect_math(text, stash, math_state, warnings)
    text = commands.protect_references(text, stash)
    text = commands.text_styles(text, stash)
    env_state = environments.EnvironmentState()
    text = environments.process(text, stash, context, warnings, env_state)
    text = limits.refuse_deep_blocks(text, stash, warnings)

    lined = context.source_lines and not card
    converted = convert.to_html(
        text, stash, warnings, source_line=env_state.lines if lined else None
    )
    # The fallback is escaped text in <p>s, as nh3 writes it: cleaning it again changes nothing
    # and takes a second on 2 MB of `<`.
    limited: list[nesting.NestingLimit] = []
    if converted.fallback:
        markup = converted.html
    else:
        markup = sanitise.clean_author_html(converted.html, limited, source_lines=lined)
    warnings.extend(_nesting_warning(limit, text) for limit in limited)
    markup = sanitise.external_links(markup)
    toc = sanitise.clean_author_html(converted.toc)

    labels = dict(env_state.labels)
    for label, value in math_state.labels.items():
        labels.setdefault(label, value)
    for item in stash.of_kind("algorithm"):
        for label in (item.data or {}).get("labels", []):
            number = str(item.data["number"])
            labels.setdefault(
                label,
                {
                    "kind": "algorithm",
                    "number": number,
                    "text": f"Algorithm {number}",
                    "anchor": code.algorithm_anchor(label),
                },
            )
    if not converted.fallback:
        figures.add_labels(stash, labels, warnings, env_state.lines)

    references: dict[str, dict | None] = {}
    sanitised = markup
    markup, lists = fill.fill(
        markup,
        stash,
        context,
        warnings,
        labels,
        card=card,
        card_bibs=card_bibs,
        references=references,
    )
    plain = plaintext.plain_text(sanitised, stash)
    # The TOC repeats headings: their math and code, not their citation markers.
    for item in stash.items:
        if item.kind in {"cite", "ref"}:
            item.html = html_lib.escape(item.text)
    toc = fill.substitute(toc, stash)
    return _Body(
        markup, toc, plain, stash, labels, env_state.found, lists, references, math_state.macros
    )


@input_path("markdown-body")
def render(source: str, context: RenderContext | None = None) -> Rendered:
    """Render a note body (Markdown, math, shortcodes) to sanitised HTML, with its warnings."""
    context = context or RenderContext()
    size = limits.oversized(source, context.max_source_bytes)
    if size:
        return _refused(size, context.max_source_bytes)
    scale = context.time_scale
    with limits.budget(
        limits.RENDER_SECONDS * scale, limits.ENGINE_SECONDS * scale, scale=scale
    ) as outcome:
        result = _render(source, context)
    if outcome.cut_short:
        result.complete = False
        result.warnings = limits.cap_warnings(
            [
                RenderWarning(
                    1,
                    "render-incomplete",
                    "this render ran out of time before it finished: what did not fit is "
                    "shown as text, and the note is rendered again with more time",
                ),
                *result.warnings,
            ]
        )
    return result


def _refused(size: int, limit: int) -> Rendered:
    message = (
        f"this note is {limits.describe_bytes(size)}, over the limit of "
        f"{limits.describe_bytes(limit)}: it was not rendered"
    )
    markup = f'<p class="render-error">{html_lib.escape(message[0].upper() + message[1:])}.</p>'
    return Rendered(
        html=markup, card_html=markup, warnings=[RenderWarning(1, "body-too-large", message)]
    )


def _render(source: str, context: RenderContext) -> Rendered:
    source = strip_placeholder_characters(source.replace("\r\n", "\n").replace("\r", "\n"))
    warnings: list[RenderWarning] = []
    body = _render_body(source, context, warnings)
    kinds = {item.kind for item in body.stash.items}
    result = Rendered(
        html=body.html,
        toc=body.toc,
        text=body.text,
        word_count=len(_WORD.findall(body.text)),
        has_math="math" in kinds,
        has_mermaid="mermaid" in kinds,
        has_algorithm="algorithm" in kinds,
        has_code="code" in kinds,
        has_citations=bool(kinds & {"cite", "references"}),
        has_entry_index="entry-index" in kinds,
        citations=body.citations,
        labels=body.labels,
        environments=body.environments,
        references=body.references,
        warnings=limits.cap_warnings(
            sorted(warnings, key=lambda warning: (warning.line, warning.code))
        ),
    )
    regions = shortcodes.preview_regions(source)
    if regions:
        # The card renders its regions on their own (its warnings repeat the page's: dropped).
        card = _render_body(
            "\n\n".join(regions),
            context,
            [],
            card=True,
            card_bibs=shortcodes.first_references_bibs(source),
            # Every definition of the note, the regions' included: a region may use a macro
            # defined anywhere on the page.
            macros=body.macros,
        )
        result.card_html, result.has_preview = card.html, True
        result.references = {**card.references, **result.references}
        card_kinds = {item.kind for item in card.stash.items}
    else:
        result.card_html, card_kinds = result.html, kinds
    result.card_has_math = "math" in card_kinds
    result.card_has_mermaid = "mermaid" in card_kinds
    result.card_has_algorithm = "algorithm" in card_kinds
    result.card_has_code = "code" in card_kinds
    return result
