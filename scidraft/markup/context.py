"""What a render may know about the world, passed in so the engine stays free of models."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from . import limits


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


class Bibliography(Protocol):
    """A named bibliography file as the engine sees it."""

    url: str  # where the file is served, e.g. /bib/refs.bib

    def format(self, keys: list[str], style: str | None) -> dict[str, str]:
        """HTML of each key found, in any order; keys not in the file are left out."""


@dataclass(frozen=True)
class ReferenceTarget:
    """Where `\\ref{slug:label}` points in another note."""

    text: str  # e.g. "Lemma 2"
    url: str  # e.g. /notes/slug/#lem-shift


@dataclass
class RenderContext:
    environments: tuple[EnvironmentKind, ...] = DEFAULT_ENVIRONMENTS
    # name (bib/refs.bib) → Bibliography, or None when there is no such file.
    resolve_bibliography: Callable[[str], Bibliography | None] = lambda name: None
    # Files searched, in order, by a references list without bib= (SciDraft's improvement).
    default_bibliographies: tuple[str, ...] = ()
    citation_style: str | None = None
    # Every (note slug, label) of a render's \ref{slug:label} at once → the targets found in
    # other notes (a missing pair has none). One call per render, so the site can look them
    # all up in one query (issue 16: 20,000 references took a query each, 15 s), and against
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

    def kinds_by_key(self) -> dict[str, EnvironmentKind]:
        return {kind.key: kind for kind in self.environments}

    def kinds_by_label(self) -> dict[str, EnvironmentKind]:
        return {kind.label.lower(): kind for kind in self.environments}
