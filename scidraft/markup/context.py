"""What a render may know about the world, passed in so the engine stays free of models."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from . import limits
from .mathmacros import Preamble


@dataclass(frozen=True)
class EnvironmentKind:
    key: str
    label: str
    plural: str = ""
    counter: str = ""
    numbered: bool = True
    style: str = "theorem"  # theorem | definition | remark | proof

    @property
    def counter_name(self) -> str:
        return self.counter or self.key


# The kinds a site has out of the box (the notes app passes the Environment table instead).
DEFAULT_ENVIRONMENTS: tuple[EnvironmentKind, ...] = tuple(
    EnvironmentKind(key, label, plural, counter, numbered, style)
    for key, label, plural, counter, numbered, style in [
        ("definition", "Definition", "Definitions", "definition", True, "definition"),
        ("theorem", "Theorem", "Theorems", "theorem", True, "theorem"),
        ("lemma", "Lemma", "Lemmas", "theorem", True, "theorem"),
        ("proposition", "Proposition", "Propositions", "theorem", True, "theorem"),
        ("corollary", "Corollary", "Corollaries", "theorem", True, "theorem"),
        ("claim", "Claim", "Claims", "theorem", True, "theorem"),
        ("conjecture", "Conjecture", "Conjectures", "theorem", True, "theorem"),
        ("criterion", "Criterion", "Criteria", "theorem", True, "theorem"),
        ("formula", "Formula", "Formulas", "theorem", True, "theorem"),
        ("identity", "Identity", "Identities", "theorem", True, "theorem"),
        ("property", "Property", "Properties", "theorem", True, "theorem"),
        ("rule", "Rule", "Rules", "theorem", True, "theorem"),
        ("axiom", "Axiom", "Axioms", "definition", True, "definition"),
        ("postulate", "Postulate", "Postulates", "definition", True, "definition"),
        ("principle", "Principle", "Principles", "definition", True, "definition"),
        ("assumption", "Assumption", "Assumptions", "definition", True, "definition"),
        ("hypothesis", "Hypothesis", "Hypotheses", "definition", True, "definition"),
        ("example", "Example", "Examples", "example", True, "definition"),
        ("counterexample", "Counterexample", "Counterexamples", "example", True, "definition"),
        ("exercise", "Exercise", "Exercises", "exercise", True, "definition"),
        ("algorithm", "Algorithm", "Algorithms", "algorithm", True, "definition"),
        ("observation", "Observation", "Observations", "remark", True, "remark"),
        ("remark", "Remark", "Remarks", "remark", True, "remark"),
        ("note", "Note", "Notes", "remark", False, "remark"),
        ("solution", "Solution", "Solutions", "", False, "proof"),
        ("proof", "Proof", "Proofs", "", False, "proof"),
    ]
)


@dataclass
class FormattedReferences:
    """A bibliography's answer for the keys of one list (bibliography.formatting)."""

    entries: dict[str, str]  # key → the entry's HTML (sanitised by the engine); found keys only
    # key → TeX of each formula in its HTML, written there as \ue010N\ue011 (typeset here).
    math: dict[str, tuple[str, ...]] = field(default_factory=dict)
    numeric: bool = True  # numbered style: [n] markers, list in citation order
    order: list[str] = field(default_factory=list)  # the style's order (author–date styles)
    markers: dict[str, str] = field(default_factory=dict)  # key → in-text HTML, no affixes
    problems: dict[str, str] = field(default_factory=dict)  # key → why it is shown raw
    prefix: str = ""  # an in-text cluster's affixes and delimiter: "(", ")", "; "
    suffix: str = ""
    delimiter: str = "; "


class Bibliography(Protocol):
    """A named bibliography file as the engine sees it."""

    url: str  # where the file is served, e.g. /bib/refs.bib

    def format(
        self, keys: list[str], style: str | None, locale: str | None = None
    ) -> FormattedReferences:
        """The keys found, formatted in `style` and `locale`; keys not in the file are left
        out. A bibliography may also offer `known(keys) -> list[str]`, the keys it holds,
        asked instead for lists the render does not format."""


@dataclass(frozen=True)
class UnavailableBibliography:
    """What resolve_bibliography answers for a file that exists but that this note may not
    name (the site's rule): the list takes no entries from it, and the warning, on the list's
    line, says `reason`, which follows the file's name ("is private: …")."""

    reason: str


@dataclass(frozen=True)
class ReferenceTarget:
    """Where `\\ref{slug:label}` points in another note."""

    text: str  # e.g. "Lemma 2"
    url: str  # e.g. /notes/slug/#lem-shift
    kind: str = ""  # e.g. "lemma", "equation"
    number: str = ""  # e.g. "2"


@dataclass
class RenderContext:
    environments: tuple[EnvironmentKind, ...] = DEFAULT_ENVIRONMENTS
    # name (bib/refs.bib) → Bibliography, None when there is no such file, or
    # UnavailableBibliography when the note may not use it.
    resolve_bibliography: Callable[[str], Bibliography | UnavailableBibliography | None] = (
        lambda name: None
    )
    # Files searched, in order, by a references list without bib= (SciDraft's improvement).
    default_bibliographies: tuple[str, ...] = ()
    # A note that cites and has no reference list gets one at its end (the site's setting).
    auto_references: bool = True
    citation_style: str | None = None
    citation_locale: str | None = None  # the site's language (en-us): the CSL locale
    # Every (note slug, label) of a render's \ref{slug:label} at once → the targets found in
    # other notes (a missing pair has none). One call per render, so the site can look them
    # all up in one query (20,000 references took a query each, 15 s), and against
    # the notes the render's reader may see only.
    resolve_references: Callable[
        [Collection[tuple[str, str]]], Mapping[tuple[str, str], ReferenceTarget]
    ] = lambda pairs: {}
    # (shortcode name, parameters) → HTML of an entry index (entry-a-to-z, entry-categories).
    render_entry_index: Callable[[str, dict[str, str]], str | None] = lambda name, params: None
    # data file name → its content (rows of promotion-visual), or None.
    resolve_data: Callable[[str], Any] = lambda name: None
    promotion_link: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    # A larger body is refused with a visible error (the site sets NOTE_BODY_MAX_BYTES).
    max_source_bytes: int = limits.MAX_SOURCE_BYTES
    # Math macro definitions applied before the note's first formula, in order: the site's,
    # then the note's (notes.rendering builds them from the settings and the note's field).
    math_macros: tuple[Preamble, ...] = ()
    # The editor preview only: top-level blocks carry data-source-line (sourcelines.py), for
    # scrolling the source and the preview together. Published HTML never has them.
    source_lines: bool = False
    # The render's time limits (limits.RENDER_SECONDS, ENGINE_SECONDS and the JavaScript
    # calls' own) times this: a render completed in the background gets more.
    time_scale: float = 1.0
    # Distinct citation styles a render's reference lists may name besides citation_style
    # (`{{< references style=… >}}`); the lists past them take citation_style, with a warning.
    max_citation_styles: int = 3

    def kinds_by_key(self) -> dict[str, EnvironmentKind]:
        return {kind.key: kind for kind in self.environments}

    def kinds_by_label(self) -> dict[str, EnvironmentKind]:
        return {kind.label.lower(): kind for kind in self.environments}
