"""render(source, context) -> Rendered: a body through `STAGES`, small named stages in order.

1 protect code · 2 shortcodes · 3 protect math · 4 commands (\\cite, \\ref, \\textbf…)
5 environments · 6 Markdown · 7 sanitise · 8 fill

Between them run the smaller steps the list names too (the summary divider, deep blocks, the
labels, the plain text, the table of contents). A note with preview regions renders them again
through the same stages as its card.
"""

from __future__ import annotations

import html as html_lib
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from scidraft.bounds import input_path

from . import (
    code,
    commands,
    convert,
    deep_blocks,
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
from .formulas import MathState
from .mathmacros import Macros
from .preambles import preamble_macros
from .protect_math import protect_math
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


def _nesting_warning(limit: nesting.NestingLimit, text: str) -> RenderWarning:
    """The warning for HTML whose nesting was bounded, on the line of the source where it
    starts (found by bounding the source's own HTML; line 1 if Markdown made the depth)."""
    _, in_source = nesting.limit_nesting(text)
    line = text.count("\n", 0, in_source.first_offset) + 1 if in_source else 1
    return RenderWarning(line, "html-nesting", limit.message())


@dataclass
class _Body:
    """A body on its way through the stages: each stage reads the fields the ones before it
    set and sets its own. `text` is the author's source until Markdown, `html` the page's
    HTML from then on."""

    text: str
    context: RenderContext
    warnings: list[RenderWarning]
    card: bool = False
    card_bibs: tuple[str, ...] | None = None
    macros: Macros | None = None  # the preambles' macros, when the page's render has read them
    stash: Stash = field(default_factory=Stash)
    counters: dict[str, int] = field(default_factory=dict)
    math_state: MathState = field(default_factory=MathState)
    env_state: environments.EnvironmentState = field(default_factory=environments.EnvironmentState)
    fallback: bool = False  # Markdown could not finish: its HTML is escaped text
    html: str = ""
    sanitised: str = ""  # the HTML before fill: what the plain text is read from
    toc: str = ""
    labels: dict[str, dict] = field(default_factory=dict)
    citations: list[CitationList] = field(default_factory=list)
    references: dict[str, dict | None] = field(default_factory=dict)
    plain: str = ""

    @property
    def lined(self) -> bool:
        """Whether block elements carry their source lines (the editor's preview, not a card)."""
        return self.context.source_lines and not self.card


def _protect_code(body: _Body) -> None:
    body.text = code.protect_code(body.text, body.stash, body.warnings, body.counters)


def _summary_divider(body: _Body) -> None:
    body.text = shortcodes.summary_divider(body.text, body.stash)


def _shortcodes(body: _Body) -> None:
    body.text = shortcodes.process(
        body.text, body.stash, body.context, body.warnings, shortcodes.ShortcodeState()
    )


def _protect_math(body: _Body) -> None:
    if body.macros is None:
        body.macros = preamble_macros(body.context.math_macros, body.warnings)
    body.math_state = MathState(macros=body.macros)
    body.text = protect_math(body.text, body.stash, body.math_state, body.warnings)


def _commands(body: _Body) -> None:
    body.text = commands.protect_references(body.text, body.stash)
    body.text = commands.text_styles(body.text, body.stash)


def _environments(body: _Body) -> None:
    body.text = environments.process(
        body.text, body.stash, body.context, body.warnings, body.env_state
    )


def _deep_blocks(body: _Body) -> None:
    body.text = deep_blocks.refuse_deep_blocks(body.text, body.stash, body.warnings)


def _markdown(body: _Body) -> None:
    lines = body.env_state.lines if body.lined else None
    converted = convert.to_html(body.text, body.stash, body.warnings, source_line=lines)
    body.html, body.toc, body.fallback = converted.html, converted.toc, converted.fallback


def _sanitise(body: _Body) -> None:
    # The fallback is escaped text in <p>s, as nh3 writes it: cleaning it again changes nothing
    # and takes a second on 2 MB of `<`.
    limited: list[nesting.NestingLimit] = []
    if not body.fallback:
        body.html = sanitise.clean_author_html(body.html, limited, source_lines=body.lined)
    body.warnings.extend(_nesting_warning(limit, body.text) for limit in limited)
    body.html = sanitise.external_links(body.html)
    body.toc = sanitise.clean_author_html(body.toc)
    body.sanitised = body.html


def _labels(body: _Body) -> None:
    """The labels `\\ref` reaches: environments', equations', algorithms' and figures'."""
    labels = dict(body.env_state.labels)
    for label, value in body.math_state.labels.items():
        labels.setdefault(label, value)
    for item in body.stash.of_kind("algorithm"):
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
    if not body.fallback:
        figures.add_labels(body.stash, labels, body.warnings, body.env_state.lines)
    body.labels = labels


def _fill(body: _Body) -> None:
    body.html, body.citations = fill.fill(
        body.html,
        body.stash,
        body.context,
        body.warnings,
        body.labels,
        card=body.card,
        card_bibs=body.card_bibs,
        references=body.references,
    )


def _plain_text(body: _Body) -> None:
    body.plain = plaintext.plain_text(body.sanitised, body.stash)


def _table_of_contents(body: _Body) -> None:
    # The TOC repeats headings: their math and code, not their citation markers.
    for item in body.stash.items:
        if item.kind in {"cite", "ref"}:
            item.html = html_lib.escape(item.text)
    body.toc = fill.substitute(body.toc, body.stash)


# The stages, in order (docs/architecture.md): what each stashes, the ones after it no longer
# see. Code goes before shortcodes so that a shortcode or a \cite in a code example stays
# literal, as in the theme.
STAGES: tuple[tuple[str, Callable[[_Body], None]], ...] = (
    ("protect code", _protect_code),
    ("summary divider", _summary_divider),
    ("shortcodes", _shortcodes),
    ("protect math", _protect_math),
    ("commands", _commands),
    ("environments", _environments),
    ("deep blocks", _deep_blocks),
    ("Markdown", _markdown),
    ("sanitise", _sanitise),
    ("labels", _labels),
    ("fill", _fill),
    ("plain text", _plain_text),
    ("table of contents", _table_of_contents),
)


def _render_body(
    source: str,
    context: RenderContext,
    warnings: list[RenderWarning],
    *,
    card: bool = False,
    card_bibs: tuple[str, ...] | None = None,
    macros: Macros | None = None,
) -> _Body:
    """`source` through every stage, in order."""
    body = _Body(source, context, warnings, card=card, card_bibs=card_bibs, macros=macros)
    for _name, stage in STAGES:
        stage(body)
    return body


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
        text=body.plain,
        word_count=len(_WORD.findall(body.plain)),
        has_math="math" in kinds,
        has_mermaid="mermaid" in kinds,
        has_algorithm="algorithm" in kinds,
        has_code="code" in kinds,
        has_citations=bool(kinds & {"cite", "references"}),
        has_entry_index="entry-index" in kinds,
        citations=body.citations,
        labels=body.labels,
        environments=body.env_state.found,
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
            macros=body.math_state.macros,
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
