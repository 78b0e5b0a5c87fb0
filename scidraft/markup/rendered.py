"""What a render returns."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class RenderWarning:
    """Something the author should fix; `line` is 1-based in the note body."""

    line: int
    code: str
    message: str


@dataclass
class CitationList:
    """One reference list and the keys it numbered, in citation order."""

    bib: list[str]
    title: str
    keys: list[str]
    missing: list[str]
    sources: dict[str, str] = field(default_factory=dict)  # key → the file it came from


@dataclass
class Rendered:
    html: str = ""
    card_html: str = ""
    has_preview: bool = False
    toc: str = ""
    text: str = ""
    word_count: int = 0
    has_math: bool = False
    has_mermaid: bool = False
    has_algorithm: bool = False
    has_code: bool = False
    has_citations: bool = False
    # The same four for the card alone (card_html, the preview region): a feed page loads the
    # assets its cards show, not those of the notes behind them.
    card_has_math: bool = False
    card_has_mermaid: bool = False
    card_has_algorithm: bool = False
    card_has_code: bool = False
    has_entry_index: bool = False  # lists other notes: its HTML follows them, render on read
    citations: list[CitationList] = field(default_factory=list)
    # label → {"kind", "number", "text", "anchor"}: environments, equations, algorithms.
    labels: dict[str, dict] = field(default_factory=dict)
    # Theorem-like environments in order, fenced blocks and bold lead-ins alike.
    environments: list[dict] = field(default_factory=list)
    # "slug:label" of each \ref to another note → {"text", "url"} it resolved to, or None: a
    # stored render is stale once these resolve differently (notes.rendering).
    references: dict[str, dict | None] = field(default_factory=dict)
    warnings: list[RenderWarning] = field(default_factory=list)
    # False when time ran out before every stage finished (limits.Outcome): the same source
    # renders in full with more time, so this is not a final result. Input refused by a size
    # or nesting bound is final, with its warning.
    complete: bool = True

    @property
    def flags(self) -> dict[str, bool]:
        return {
            "has_math": self.has_math,
            "has_mermaid": self.has_mermaid,
            "has_algorithm": self.has_algorithm,
            "has_code": self.has_code,
            "has_citations": self.has_citations,
            "card_has_math": self.card_has_math,
            "card_has_mermaid": self.card_has_mermaid,
            "card_has_algorithm": self.card_has_algorithm,
            "card_has_code": self.card_has_code,
            "has_entry_index": self.has_entry_index,
            "has_preview": self.has_preview,
        }

    def as_dict(self) -> dict:
        data = asdict(self)
        data["flags"] = self.flags
        return data
