"""The bibliography benchmark's synthetic .bib and the notes that cite it (deterministic: one
seed), for benchmarks/bibliography.py."""

from __future__ import annotations

import random

SEED = 20240601
ENTRIES = 5_000
CITED = 50
BIB_NAME = "bib/bench.bib"


# --- The synthetic file ----------------------------------------------------------------------

_FIRST = [
    "Donald E.",
    "Ada",
    "Andr{\\'e}",
    'J{\\"u}rgen',
    "Fran{\\c c}ois",
    "Yann",
    "Geoffrey",
    "Li",
    "Wei",
    "Mar{\\'\\i}a",
    "Kurt",
    "S{\\o}ren",
    "Jos{\\'e}",
    "Anna K.",
    "Pieter",
    "Ngozi",
    "{\\L}ukasz",
    "Hiroshi",
    "Ay{\\c s}e",
    "Olga",
]
_LAST = [
    "Knuth",
    "Lovelace",
    'M{\\"u}ller',
    "Schmidhuber",
    "Chollet",
    "LeCun",
    "Hinton",
    "Zhang",
    "Wang",
    "Garc{\\'\\i}a",
    'G{\\"o}del',  # braced: a bare \" would end a quoted BibTeX value
    "Kierkegaard",
    "van der Berg",
    "Stra{\\ss}e",
    "Nguyen",
    "Okonkwo",
    "de la Cruz",
    "Tanaka",
    "Y{\\i}lmaz",
    "Petrova",
]
_WORDS = (  # noqa: SIM905 - a sentence reads better than 28 quoted words
    "learning attention networks deep graph language models reasoning robust sparse efficient "
    "optimal bounds kernel neural transformers estimation inference scalable stochastic "
    "convergence gradient descent representation retrieval benchmark evaluation causal"
).split()
_TYPES = [
    "article",
    "article",
    "article",
    "inproceedings",
    "inproceedings",
    "book",
    "incollection",
    "phdthesis",
    "mastersthesis",
    "techreport",
    "misc",
    "online",
    "software",
]
_MACROS = {
    "jmlr": "Journal of Machine Learning Research",
    "tpami": "IEEE Transactions on Pattern Analysis and Machine Intelligence",
    "neurips": "Advances in Neural Information Processing Systems",
    "cacm": "Communications of the {ACM}",
}
_INITIALS = ["", *(f" {letter}." for letter in "ABCDEFGHIJKLMNOPRSTUVWYZ"), " de", " van"]
_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]


def _value(rng: random.Random, text: str) -> str:
    # Both quoting styles, as real exports mix them.
    return f'"{text}"' if rng.random() < 0.5 else f"{{{text}}}"


def synthetic_bib(entries: int = ENTRIES, seed: int = SEED) -> str:
    """A deterministic .bib: varied types and case, 1–12 authors, accents, @string macros,
    `#` concatenation with month macros, % comment lines, DOIs and URLs."""
    rng = random.Random(seed)
    out = ["% Synthetic bibliography for benchmarks/bibliography.py", ""]
    out += [f'@string{{{name} = "{value}"}}' for name, value in _MACROS.items()]
    out.append("")
    for number in range(entries):
        kind = rng.choice(_TYPES)
        written = kind.upper() if number % 3 == 0 else kind
        # 20 × 20 × 27 spellings: names recur, as in real files, but most are new.
        authors = " and ".join(
            f"{rng.choice(_LAST)}, {rng.choice(_FIRST)}{rng.choice(_INITIALS)}"
            for _ in range(rng.randint(1, 12))
        )
        title = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(4, 12))).capitalize()
        if rng.random() < 0.2:
            title += " with {BERT}"
        if rng.random() < 0.1:
            title += " for $\\alpha$-divergences"
        lines = [
            f"@{written}{{key{number:05d},",
            f"  author    = {_value(rng, authors)},",
            f"  title     = {_value(rng, title)},",
            f"  year      = {rng.randint(1950, 2025)},",
        ]
        if kind == "article":
            journal = rng.choice([*_MACROS, "{Nature}", '"Journal of {F}oo"'])
            lines += [
                f"  journal   = {journal},",
                f"  volume    = {rng.randint(1, 60)},",
                f"  number    = {rng.randint(1, 12)},",
                f"  pages     = {{{rng.randint(1, 500)}--{rng.randint(501, 900)}}},",
                f'  month     = "{rng.randint(1, 28)}~" # {rng.choice(_MONTHS)},',
            ]
        elif kind in ("inproceedings", "incollection"):
            lines.append(f"  booktitle = {rng.choice(['neurips', '{Proceedings of Foo}'])},")
            lines.append(f"  pages     = {{{rng.randint(1, 50)}--{rng.randint(51, 99)}}},")
        elif kind in ("phdthesis", "mastersthesis"):
            lines.append(f"  school    = {{Universit{{\\'e}} {rng.randint(1, 30)}}},")
        elif kind == "techreport":
            lines.append(f"  institution = {{Institute {rng.randint(1, 30)}}},")
        else:
            lines.append(f"  publisher = {{Publisher {rng.randint(1, 40)}}},")
        if rng.random() < 0.5:
            lines.append(
                f"  doi       = {{10.{rng.randint(1000, 9999)}/{rng.randint(10**5, 10**6)}}},"
            )
        if rng.random() < 0.3:
            lines.append(f"  url       = {{https://example.org/paper/{number}}},")
        if rng.random() < 0.05:
            lines.append("% note      = {commented out},")
        lines.append("}")
        out.append("\n".join(lines))
        out.append("")
    return "\n".join(out)


def citing_note(
    entries: int = ENTRIES, cited: int = CITED, seed: int = SEED, part: int | None = None
) -> str:
    """A note with `cited` distinct \\cite{} keys over 10 paragraphs, then one references list.
    With `part`, the keys are the part-th slice of one shuffle of the file's keys: notes of
    different parts share no key."""
    rng = random.Random(seed + 1)
    if part is None:
        keys = [f"key{number:05d}" for number in rng.sample(range(entries), cited)]
    else:
        order = list(range(entries))
        random.Random(seed + 2).shuffle(order)
        keys = [f"key{number:05d}" for number in order[part * cited : (part + 1) * cited]]
    paragraphs = []
    for start in range(0, cited, 5):
        words = " ".join(rng.choice(_WORDS) for _ in range(40))
        cites = " ".join(f"see \\cite{{{key}}}" for key in keys[start : start + 5])
        paragraphs.append(f"{words.capitalize()} {cites}.")
    paragraphs.append(f'{{{{< references bib="{BIB_NAME}" >}}}}')
    return "\n\n".join(paragraphs) + "\n"
