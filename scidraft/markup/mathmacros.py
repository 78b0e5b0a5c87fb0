"""Macros in math, as MathJax treats them: definitions made anywhere apply to what follows.

A note's formulas are typeset one at a time (and cached one at a time), so a definition made in
one formula (`$\\newcommand{\\R}{\\mathbb{R}}$`) cannot live in KaTeX's state between calls. It
is read here instead, in document order: every definition (`\\newcommand`, `\\renewcommand`,
`\\def`, `\\gdef`, `\\DeclareMathOperator`) is taken out of its formula and appended, as a
canonical `\\gdef`, to a `Macros` value. Each formula is typeset with the definitions made
before it and its own, and the cache key holds their digest: the same formula after different
definitions is a different entry, and a render is the same whichever V8 context serves it.

Why not KaTeX's own `globalGroup` over one macros object for the whole note: a formula served
from the cache would then skip the definitions it makes, and the object would have to follow
the note from context to context of the pool. Collecting in Python costs a scan per formula
and keeps every formula a pure function of (TeX, display, definitions before it).

Definitions become `\\gdef`, which redefines without asking: MathJax lets `\\newcommand`
replace an existing command (KaTeX's own `\\R`, even `\\frac`) and `\\renewcommand` make a new
one, and so does this. `\\newcommand{\\f}[2][x]{…}` (a default for the first argument) becomes
a `\\@ifnextchar[` test, as in LaTeX.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass

from .rendered import RenderWarning

# A site's or a note's preamble; past it the preamble is not used (with a warning).
MAX_PREAMBLE_CHARS = 10_000
# All definitions of one render (preambles and formulas together), and their total size: each
# formula is typeset after them, so they bound every formula's cost.
MAX_DEFINITIONS = 500
MAX_DEFINITIONS_CHARS = 40_000

_DEFINITION = re.compile(
    r"\\(?P<command>newcommand|renewcommand|providecommand|DeclareMathOperator|def|gdef)"
    r"(?![A-Za-z@])(?P<star>\*?)"
)
_NAME = re.compile(r"\\(?:[A-Za-z@]+|[^A-Za-z@\s])")
_SPACE = re.compile(r"\s*")
_COUNT = re.compile(r"\[\s*([0-9])\s*\]")
_DEF_PARAMETERS = re.compile(r"[^{}%]*")


@dataclass(frozen=True)
class Macros:
    """Definitions in force, (name, canonical TeX), in the order they were made; a name
    defined again keeps its last definition only (TeX expands a macro's body when it is used,
    so the others' meaning is unchanged, and a note redefining one name stays one entry)."""

    definitions: tuple[tuple[str, str], ...] = ()
    # What these macros add to others (their digest, and the TeX added): V8 builds a set from
    # the one before it instead of reading every definition again for each formula of a note
    # that defines as it goes. Not part of the identity.
    parent: str = ""
    added: str = ""

    @property
    def text(self) -> str:
        return "".join(tex for _, tex in self.definitions)

    def names(self) -> set[str]:
        return {name for name, _ in self.definitions}

    @property
    def digest(self) -> str:
        # Part of the formula cache key; computed once per Macros (they are shared, not copied).
        cached = self.__dict__.get("_digest")
        if cached is None:
            cached = hashlib.sha256(self.text.encode()).hexdigest()[:32]
            object.__setattr__(self, "_digest", cached)
        return cached

    def __hash__(self) -> int:
        return hash(self.digest)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Macros) and other.digest == self.digest

    def plus(self, definitions: list[tuple[str, str]]) -> Macros:
        if not definitions:
            return self
        new = {name for name, _ in definitions}
        kept = tuple(item for item in self.definitions if item[0] not in new)
        parent = self.digest if self.definitions else ""
        added = "".join(tex for _, tex in definitions)
        return Macros(kept + tuple(definitions), parent, added)

    @property
    def size(self) -> int:
        return sum(len(tex) for _, tex in self.definitions)


NONE = Macros()


@dataclass
class Definition:
    start: int
    end: int
    command: str  # as written: \newcommand, \DeclareMathOperator*…
    name: str
    tex: str  # canonical: \gdef… (or the original for \providecommand)

    @property
    def label(self) -> str:
        """As a warning names it: \\newcommand{\\R}, \\def\\R."""
        if self.command in {"\\def", "\\gdef"}:
            return f"{self.command}{self.name}"
        return f"{self.command}{{{self.name}}}"


def group_end(tex: str, start: int) -> int:
    """End (exclusive) of the brace group opening at `start`, or -1 if it is not closed."""
    depth, index = 0, start
    while index < len(tex):
        char = tex[index]
        if char == "\\":
            index += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return -1


def _argument(tex: str, position: int) -> tuple[str, int] | None:
    """The braced argument at `position` (after spaces), without its braces, and its end."""
    position = _SPACE.match(tex, position).end()
    if position >= len(tex) or tex[position] != "{":
        return None
    end = group_end(tex, position)
    return (tex[position + 1 : end - 1], end) if end > 0 else None


def _name(tex: str, position: int) -> tuple[str, int] | None:
    """`{\\name}` or `\\name` at `position`."""
    position = _SPACE.match(tex, position).end()
    braced = _argument(tex, position)
    if braced is not None:
        inner = braced[0].strip()
        return (inner, braced[1]) if _NAME.fullmatch(inner) else None
    match = _NAME.match(tex, position)
    return (match.group(0), match.end()) if match else None


def _helper(name: str) -> str:
    # A control word of letters only, different for every name: digits would end the word.
    digest = hashlib.sha256(name.encode()).hexdigest()[:10]
    return "\\@sdopt" + digest.translate(str.maketrans("0123456789", "ghijklmnop"))


def _parse(tex: str, match: re.Match) -> Definition | None:
    command, star = match.group("command"), match.group("star")
    named = _name(tex, match.end())
    if named is None:
        return None
    name, position = named
    written = f"\\{command}{star}"
    if command == "DeclareMathOperator":
        body = _argument(tex, position)
        if body is None:
            return None
        operator = "\\operatorname*" if star else "\\operatorname"
        canonical = f"\\gdef{name}{{{operator}{{{body[0]}}}}}"
        return Definition(match.start(), body[1], written, name, canonical)
    if command in {"def", "gdef"}:
        parameters = _DEF_PARAMETERS.match(tex, position)
        body = _argument(tex, parameters.end())
        if body is None:
            return None
        canonical = f"\\gdef{name}{parameters.group(0)}{{{body[0]}}}"
        return Definition(match.start(), body[1], written, name, canonical)
    position = _SPACE.match(tex, position).end()
    count, default = 0, None
    counted = _COUNT.match(tex, position)
    if counted:
        count, position = int(counted.group(1)), counted.end()
        position = _SPACE.match(tex, position).end()
        if count and tex.startswith("[", position):
            close = tex.find("]", position)
            if close < 0:
                return None
            default, position = tex[position + 1 : close], close + 1
    body = _argument(tex, position)
    if body is None:
        return None
    if command == "providecommand":
        # Only if the name is not defined yet: KaTeX decides, in the preamble's global group.
        canonical = tex[match.start() : body[1]]
    elif default is None:
        parameters = "".join(f"#{index}" for index in range(1, count + 1))
        canonical = f"\\gdef{name}{parameters}{{{body[0]}}}"
    else:
        helper = _helper(name)
        rest = "".join(f"#{index}" for index in range(2, count + 1))
        canonical = (
            f"\\gdef{name}{{\\@ifnextchar[{{{helper}}}{{{helper}[{default}]}}}}"
            f"\\gdef{helper}[#1]{rest}{{{body[0]}}}"
        )
    return Definition(match.start(), body[1], written, name, canonical)


@dataclass(frozen=True)
class Signature:
    """What a canonical definition (_parse's) takes and gives: its undelimited arguments, the
    first one's default when it is optional, its body, and the control sequences in it."""

    count: int
    default: str | None
    body: str
    uses: frozenset[str]


# A control word or symbol, as TeX reads them.
CONTROL_SEQUENCE = re.compile(r"\\(?:[A-Za-z@]+|.)", re.S)


@functools.lru_cache(maxsize=4096)
def signature(name: str, canonical: str) -> Signature | None:
    """The Signature of `name`'s canonical TeX: a \\gdef with parameters #1…#n, or the two
    \\gdefs _parse writes for a first argument with a default; None for any other form
    (\\def\\f#1.{…}, \\providecommand)."""
    optional = re.match(
        re.escape(f"\\gdef{name}{{\\@ifnextchar[{{")
        + r"(\\@sdopt[a-z]+)\}\{\1\[([^\]]*)\]\}\}\\gdef\1\[#1\]((?:#[2-9])*)\{",
        canonical,
    )
    if optional:
        parameters, default = "#1" + optional.group(3), optional.group(2)
        open_at = optional.end() - 1
    else:
        plain = re.match(re.escape(f"\\gdef{name}") + r"((?:#[1-9])*)\{", canonical)
        if not plain:
            return None
        parameters, default, open_at = plain.group(1), None, plain.end() - 1
    count = len(parameters) // 2
    if parameters != "".join(f"#{index}" for index in range(1, count + 1)):
        return None
    if group_end(canonical, open_at) != len(canonical):
        return None
    body = canonical[open_at + 1 : -1]
    uses = frozenset(match.group(0) for match in CONTROL_SEQUENCE.finditer(body))
    return Signature(count, default, body, uses)


def find_definitions(tex: str) -> list[Definition]:
    """Every definition in `tex` that parses, in order (those that don't stay in the TeX,
    where KaTeX reports them)."""
    if "\\" not in tex:
        return []
    found, position = [], 0
    for match in _DEFINITION.finditer(tex):
        if match.start() < position:
            continue
        definition = _parse(tex, match)
        if definition is not None:
            found.append(definition)
            position = definition.end
    return found


def without(tex: str, definitions: list[Definition]) -> str:
    pieces, cursor = [], 0
    for definition in definitions:
        pieces.append(tex[cursor : definition.start])
        cursor = definition.end
    pieces.append(tex[cursor:])
    return "".join(pieces)


def admit(
    macros: Macros, definitions: list[Definition], line: int, warnings: list[RenderWarning]
) -> list[tuple[str, str]]:
    """(name, canonical TeX) of the `definitions` that fit the bounds; a warning for the
    others. A \\providecommand of a name defined here already defines nothing."""
    admitted: list[tuple[str, str]] = []
    names = macros.names()
    count, size = len(names), macros.size
    for definition in definitions:
        if definition.command == "\\providecommand" and definition.name in names:
            continue
        fresh = definition.name not in names
        if (fresh and count >= MAX_DEFINITIONS) or size + len(
            definition.tex
        ) > MAX_DEFINITIONS_CHARS:
            warnings.append(
                RenderWarning(
                    line,
                    "math-macro",
                    f"{definition.label}: more than {MAX_DEFINITIONS} "
                    f"math macros or {MAX_DEFINITIONS_CHARS // 1000} KB of them in this note: "
                    "not defined",
                )
            )
            continue
        admitted.append((definition.name, definition.tex))
        names.add(definition.name)
        count, size = count + fresh, size + len(definition.tex)
    return admitted


@dataclass(frozen=True)
class Preamble:
    """Macro definitions from outside the body: the site's settings or the note's field."""

    where: str  # "the site's math macros", for the warnings
    tex: str


def leftover(tex: str, definitions: list[Definition]) -> str:
    """What a preamble holds besides definitions (comments and blank space aside)."""
    rest = without(tex, definitions)
    return "\n".join(line.split("%", 1)[0] for line in rest.splitlines()).strip()
