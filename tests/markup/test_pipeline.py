"""Golden tests for the pipeline: fields, text, warning order, determinism, threads."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from hugosite.reading import split_front_matter
from scidraft.markup import RenderContext, Rendered, jsengine, pipeline, render

from .dom import parse

NOTES = (
    Path(__file__).resolve().parents[3]
    / "shared"
    / "reference"
    / "scidraft-exampleSite"
    / "content"
    / "notes"
)
THREAD_NOTES = [
    "demo-note-with-references.md",
    "demo-note-attention-pseudocode.md",
    "demo-note-backpropagation-pseudocode.md",
    "demo-note-mermaid-flowchart.md",
    "demo-note-paper-with-multiple-references.md",
    "demo-note-survey-chain-of-thought.md",
    "working-with-agentic-ai-web-developer.md",
    "demo-note-cross-entropy-gradient-python.md",
]


class AnyBibliography:
    """Every file exists and holds every key (deterministic HTML)."""

    def __init__(self, name):
        self.url = "/" + name

    def format(self, keys, style, locale=None):
        return {key: f"<span>Entry {key}</span>" for key in keys}


def _context() -> RenderContext:
    return RenderContext(resolve_bibliography=AnyBibliography)


FULL = r"""# Title

Some prose with $x^2$ and \cite{k1}.

```python
print("hi")
```

```mermaid
graph TD; A-->B
```

```pseudo-algorithm
\begin{algorithm}
\caption{C}
\begin{algorithmic}
\State $x \gets 1$
\end{algorithmic}
\end{algorithm}
```

{{< references bib="bib/refs.bib" >}}
"""


def test_entry_index_sets_its_flag():
    """A body with an entry index is flagged: its HTML lists other notes, so views render it
    on read instead of trusting the stored copy."""
    context = RenderContext(render_entry_index=lambda name, params: "<p>index</p>")
    assert render('{{< entry-a-to-z set="math" >}}\n', context).has_entry_index
    assert not render("plain\n", context).has_entry_index


def test_rendered_fields_and_flags():
    """A note using every feature sets every flag; `as_dict` is JSON-serialisable."""
    rendered = render(FULL, _context())
    assert isinstance(rendered, Rendered)
    assert rendered.flags == {
        "has_math": True,
        "has_mermaid": True,
        "has_algorithm": True,
        "has_code": True,
        "has_citations": True,
        # No preview region: the card is the whole note, and needs what it needs.
        "card_has_math": True,
        "card_has_mermaid": True,
        "card_has_algorithm": True,
        "card_has_code": True,
        "has_entry_index": False,
        "has_preview": False,
    }
    assert [c.keys for c in rendered.citations] == [["k1"]]
    assert rendered.card_html == rendered.html
    assert rendered.warnings == []
    json.dumps(rendered.as_dict())


def test_card_flags_count_only_the_preview_region():
    """A note whose diagram, algorithm and code lie outside its preview region flags them for
    the note but not for its card, which shows only the region (its math here): a feed page of
    such cards needs no Mermaid."""
    source = (
        "{{< preview >}}\nEnergy $E = mc^2$ in the card.\n{{< /preview >}}\n\n"
        "```mermaid\nflowchart LR\n  A --> B\n```\n\n"
        "```python\nprint(1)\n```\n\n"
        "```pseudo-algorithm\n\\begin{algorithmic}\n\\STATE x\n\\end{algorithmic}\n```\n"
    )
    flags = render(source, _context()).flags
    assert flags["has_preview"]
    assert [flags[f"has_{kind}"] for kind in ("math", "mermaid", "code", "algorithm")] == [
        True,
        True,
        True,
        True,
    ]
    assert [flags[f"card_has_{kind}"] for kind in ("math", "mermaid", "code", "algorithm")] == [
        True,
        False,
        False,
        False,
    ]


def test_card_flags_follow_a_diagram_inside_the_preview_region():
    """A diagram inside the preview region is on the card: the card needs Mermaid."""
    source = (
        "{{< preview >}}\n```mermaid\nflowchart LR\n  A --> B\n```\n{{< /preview >}}\n\nRest.\n"
    )
    flags = render(source, _context()).flags
    assert flags["card_has_mermaid"] and flags["has_mermaid"]
    assert not flags["card_has_math"]


def test_plain_note_flags_false():
    """A plain prose note sets no flag, has no labels, environments or citations."""
    rendered = render("Just *words* here.")
    assert not any(rendered.flags.values())
    assert rendered.labels == {} and rendered.environments == [] and rendered.citations == []
    assert rendered.toc == ""


def test_text_and_word_count():
    """`text` is the visible prose without markup or placeholders; word_count counts its words."""
    source = "# Heading\n\nHello *brave* new **world**, with `code` and $x$.\n\n- one\n- two\n"
    rendered = render(source)
    assert rendered.text == "Heading Hello brave new world, with code and \\(x\\). one two"
    assert "<" not in rendered.text and "*" not in rendered.text
    assert not any("\ue000" <= char <= "\ue002" for char in rendered.text)
    assert rendered.word_count == 11


def test_text_of_math_is_its_tex_not_katex_markup():
    """Math contributes its TeX once to `text`, between `\\(…\\)` or `\\[…\\]` as in the
    theme's index (Hugo's .Plain keeps the delimiters), not KaTeX's duplicated MathML/HTML."""
    rendered = render("Value $a+b$ here.\n\n$$c^2$$")
    assert rendered.text == "Value \\(a+b\\) here. \\[c^2\\]"


def test_text_reads_references_and_citations_as_their_labels():
    """`\\ref`, `\\eqref`, `\\cite` and an environment's heading read in `text` as readers see
    them (the text once said "By and , summation" with the labels left out)."""
    from .test_citations import FakeBibliography

    bib = FakeBibliography("/bib/r.bib", ["vaswani"])
    source = (
        "By \\Cref{lem-a} and \\cite{vaswani}, see \\eqref{eq:x}.\n\n"
        ":::lemma[Shift]{#lem-a}\nBody.\n:::\n\n"
        "$$\ny = 1 \\label{eq:x}\n$$\n\n"
        '{{< references bib="bib/r.bib" >}}\n'
    )
    rendered = render(source, RenderContext(resolve_bibliography={"bib/r.bib": bib}.get))
    assert "[1]" in rendered.html
    assert rendered.text.startswith("By Lemma 1 and [1], see (1). Lemma 1 (Shift). Body.")


# Text around `<`, `>` and `&` in math, code and attributes, followed by tags: everything from
# a `<` in a formula to the next tag was lost from the search text ("Let \\(0 0\\) follows.").
ANGLE_BRACKETS = [
    (
        "Let $0 < x$ hold.\n\nThe zebra sentence.\n\nThen $y > 0$ follows.",
        "Let \\(0 < x\\) hold. The zebra sentence. Then \\(y > 0\\) follows.",
    ),
    (
        "Code `a < b` then *emphasis* and `c > d` done.",
        "Code a < b then emphasis and c > d done.",
    ),
    (
        "```\nif a < b:\n```\n\nThe *middle* paragraph.\n\n```\nb > a\n```",
        "if a < b: The middle paragraph. b > a",
    ),
    (
        "Display\n\n$$\na < b\n$$\n\nText with **bold**.\n\n$$\nc > d\n$$",
        "Display \\[a < b\\] Text with bold. \\[c > d\\]",
    ),
    ("Fish & chips $a<b$ <em>stressed</em> &lt;tag&gt;", "Fish & chips \\(a<b\\) stressed <tag>"),
    (
        "[a link](https://example.org/?a=1&b=<2>) and $x<y$ then *z*.",
        "a link and \\(x<y\\) then z.",
    ),
]


@pytest.mark.parametrize(("source", "text"), ANGLE_BRACKETS)
def test_text_keeps_every_word_around_angle_brackets(source, text):
    """The plain text is read from the HTML's structure: a `<` in a formula or in code is text,
    never the start of a tag that swallows what follows."""
    rendered = render(source)
    assert rendered.text == text


def test_warnings_sorted_by_line():
    """Warnings from different stages come sorted by line."""
    source = (
        "{{< mystery >}}\n\n"  # 1 shortcode-unknown
        "```pseudo-algorithm\n\\begin{algorithm}\n\\State\n```\n\n"  # 3 algorithm-error
        "Bad $\\frac{1}$ math.\n\n"  # 8 math-error
        ":::nonsense\nx\n:::\n\n"  # 10 environment-unknown
        "See \\ref{nowhere}.\n\n"  # 14 ref-unresolved
        "$$\nunclosed\n"  # 16 math-unclosed
    )
    rendered = render(source)
    found = [(w.line, w.code) for w in rendered.warnings]
    assert found == [
        (1, "shortcode-unknown"),
        (3, "algorithm-error"),
        (8, "math-error"),
        (10, "environment-unknown"),
        (14, "ref-unresolved"),
        (16, "math-unclosed"),
    ]


def test_lines_survive_multiline_placeholders():
    """Warnings after long fences, display math and shortcodes still name the author's line."""
    source = (
        "```python\na = 1\nb = 2\nc = 3\n```\n\n"  # 1-5
        "$$\nx\n\\\\\ny\n$$\n\n"  # 7-11
        '{{< promotion-textual\n   title="T"\n   subtitle="S" >}}\n\n'  # 13-15
        "Bad \\(\\frac{2}\\) here.\n"  # 17
    )
    rendered = render(source)
    assert [(w.line, w.code) for w in rendered.warnings] == [(17, "math-error")]


def test_deterministic():
    """The same input renders to the same output twice."""
    first = render(FULL, _context())
    second = render(FULL, _context())
    assert first.as_dict() == second.as_dict()


def _load(name: str) -> str:
    return split_front_matter((NOTES / name).read_text(encoding="utf-8")).body


@pytest.mark.skipif(not NOTES.is_dir(), reason="example site not beside the checkout")
def test_thread_safety_matches_single_thread():
    """8 threads rendering 8 notes in parallel, repeatedly, match a single-threaded run."""
    sources = [_load(name) for name in THREAD_NOTES]
    expected = [render(source, _context()).as_dict() for source in sources]
    for item in expected:
        assert item["html"]
    assert sum(item["has_math"] for item in expected) >= 5
    assert sum(item["has_algorithm"] for item in expected) >= 2
    jsengine.tex_cache_clear()  # make the threads typeset concurrently, not read the cache

    rounds = 4
    results: dict[tuple[int, int], dict] = {}
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(sources))

    def work(index: int) -> None:
        try:
            barrier.wait()
            for round_number in range(rounds):
                # rotate so that every thread renders several different notes
                note = (index + round_number) % len(sources)
                results[(index, round_number)] = (note, render(sources[note], _context()).as_dict())
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(sources))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not any(thread.is_alive() for thread in threads)
    assert errors == []
    assert len(results) == len(sources) * rounds
    assert jsengine.tex_cache_info().misses > 0  # KaTeX really ran in the threads
    for (index, round_number), (note, result) in results.items():
        assert result == expected[note], (THREAD_NOTES[note], index, round_number)


def test_output_is_well_formed_enough():
    """Every opened element in a full render is closed (no stray block inside a paragraph)."""
    rendered = render(FULL, _context())
    doc = parse(rendered.html)
    for p in doc.select("p"):
        assert not p.select("div"), "a block element was left inside a paragraph"


def test_the_stages_are_a_named_list_in_the_design_order():
    """The pipeline is a list of named stages holding the design's eight in their order, with
    the smaller steps between them."""
    design = ["protect code", "shortcodes", "protect math", "commands", "environments",
              "Markdown", "sanitise", "fill"]  # fmt: skip
    names = [name for name, _ in pipeline.STAGES]
    assert len(set(names)) == len(names)
    assert [name for name in names if name in design] == design
    assert all(callable(stage) for _, stage in pipeline.STAGES)
