"""The syntax guide: every syntax the engine reads, each example rendered by the
engine itself. Public at /help/syntax/; the editor's help panel shows the same page.

The examples are rendered in a guide context: the site's environment kinds, a small example
bibliography and data file of the guide's own, and one example note for cross-references.
Renders are cached by the engine version and the examples' inputs, so an engine upgrade or a
change of the site's kinds renders the guide again; the entry indexes list the site's notes,
so they are rendered when read, as pages with an entry index are.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass

from django.core.cache import cache
from django.shortcuts import render
from django.utils.safestring import mark_safe

from bibliography.formatting import ParsedBibliography
from bibliography.parsing import parse_bibtex
from notes.rendering import context_for
from scidraft.markup import ENGINE_VERSION, ReferenceTarget, RenderContext
from scidraft.markup import render as markup_render
from scidraft.markup.shortcodes import SHORTCODES
from scidraft.site.meta import PageMeta
from scidraft.site.models import EntrySet

GUIDE_BIB = "bib/guide-example.bib"
GUIDE_BIBTEX = """\
@article{okafor2021,
  author = {Okafor, Chidi and Lindqvist, Maja},
  title = {Spectral gaps of random regular graphs},
  journal = {Journal of Illustrative Mathematics},
  volume = {12},
  pages = {101--130},
  year = {2021}
}
@book{moreau2019,
  author = {Moreau, Élise},
  title = {Convex Analysis for Practitioners},
  publisher = {Example University Press},
  year = {2019}
}
@inproceedings{tanaka2023,
  author = {Tanaka, Hiro and Duarte, Inês and Novak, Petr},
  title = {Warm restarts for stochastic optimisation},
  booktitle = {Proceedings of the Example Workshop},
  year = {2023}
}
"""
# The image the gallery and promotion examples show: the site's own icon, always there.
GUIDE_IMAGE = "/static/favicon.svg"
GUIDE_DATA = {
    "rows": [
        {
            "num": 1,
            "label": "Example row",
            "images": [
                {"file": GUIDE_IMAGE, "caption": "First", "link": "/help/syntax/"},
                {"file": GUIDE_IMAGE, "caption": "Second", "link": "/help/syntax/"},
            ],
        }
    ]
}
# \ref{example-note:thm-main} in the guide points here (a real note's label in a real note).
GUIDE_TARGET = ReferenceTarget(
    text="Theorem 1", url="/help/syntax/#cross-references", kind="theorem", number="1"
)


@dataclass(frozen=True)
class Example:
    source: str
    caption: str = ""
    live: bool = False  # reads the site's notes: rendered when read, never cached


@dataclass(frozen=True)
class Section:
    slug: str
    title: str
    intro: str  # the guide's own HTML
    examples: tuple[Example, ...]


SECTIONS: tuple[Section, ...] = (
    Section(
        "inline-math",
        "Inline math",
        "Write TeX between <code>\\(</code> and <code>\\)</code>, or between single dollar "
        "signs. KaTeX typesets it on the server: readers download no math script.",
        (Example(r"The roots of \(ax^2 + bx + c\) are $x = \frac{-b \pm \sqrt{b^2-4ac}}{2a}$."),),
    ),
    Section(
        "display-math",
        "Display math",
        "A formula on its own lines, between <code>$$</code> and <code>$$</code> or "
        "<code>\\[</code> and <code>\\]</code>. Write <code>\\lt</code> and <code>\\gt</code> "
        "for &lt; and &gt; if the note must also build with the Hugo theme.",
        (
            Example("$$\n\\int_0^1 x^n \\, dx = \\frac{1}{n+1}\n$$"),
            Example("\\[\n\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}\n\\]"),
        ),
    ),
    Section(
        "amsmath",
        "amsmath environments",
        "<code>align</code>, <code>equation</code>, <code>gather</code>, "
        "<code>multline</code> and their starred forms work without dollar signs; "
        "<code>cases</code>, <code>pmatrix</code> and the other inner environments go inside "
        "math.",
        (
            Example("\\begin{align}\nf(x) &= (x+1)^2 \\\\\n     &= x^2 + 2x + 1\n\\end{align}"),
            Example("$$\n|x| = \\begin{cases} x & x \\ge 0 \\\\ -x & x \\lt 0 \\end{cases}\n$$"),
        ),
    ),
    Section(
        "equation-labels",
        "Numbered equations: \\label, \\ref, \\eqref",
        "A display formula is numbered when it has a <code>\\label</code>; "
        "<code>\\eqref{…}</code> prints the number in parentheses, <code>\\ref{…}</code> "
        "without.",
        (
            Example(
                "$$\ne^{i\\pi} + 1 = 0 \\label{eq:euler}\n$$\n\n"
                "Equation \\eqref{eq:euler} links five constants; \\ref{eq:euler} is its number."
            ),
        ),
    ),
    Section(
        "math-macros",
        "Macros and operators",
        "<code>\\newcommand</code>, <code>\\renewcommand</code>, <code>\\def</code> and "
        "<code>\\DeclareMathOperator</code> (starred: limits underneath) made in a formula "
        "apply to it and to every later formula of the note, as in MathJax; "
        "<code>\\newcommand</code> may replace a command that exists, and "
        "<code>[2][x]</code> gives the first of two arguments a default. Definitions every "
        "formula needs can go in the note's <em>Math macros</em> (in the side panel; front "
        "matter <code>mathMacros</code>) or the site's settings instead. A macro that expands more "
        "than 1,000 times, as a recursive one does, stops with a warning.",
        (
            Example(
                "Let $\\newcommand{\\R}{\\mathbb{R}}\\newcommand{\\norm}[1]{\\lVert #1 "
                "\\rVert}\\DeclareMathOperator*{\\argmin}{arg\\,min} A \\in \\R^{m \\times n}$ "
                "and \\(b \\in \\R^m\\). The least-squares solution is\n\n"
                "$$\n\\hat{x} = \\argmin_{x \\in \\R^n} \\norm{Ax - b}^2\n$$"
            ),
        ),
    ),
    Section(
        "math-links",
        "References and links in math",
        "<code>\\eqref{…}</code> and <code>\\ref{…}</code> work inside a formula as in "
        "prose. <code>\\href{address}{text}</code> and <code>\\url{address}</code> link to "
        "http, https and mailto addresses only: any other address is shown as plain text, "
        "with a warning.",
        (
            Example(
                "$$\na^2 + b^2 = c^2 \\label{eq:pythagoras}\n$$\n\n"
                "$$\nc = \\sqrt{a^2 + b^2} \\quad \\text{by } \\eqref{eq:pythagoras}, "
                "\\text{ see } \\href{https://en.wikipedia.org/wiki/Pythagorean_theorem}"
                "{\\text{a proof}}\n$$"
            ),
        ),
    ),
    Section(
        "math-text-chemistry",
        "Text, side scripts and chemistry in math",
        "<code>\\mbox{…}</code> is text inside math; <code>\\sideset{_a^b}{_c^d}\\sum</code> "
        "puts scripts on both sides of an operator; <code>\\ce{…}</code> (mhchem) writes "
        "chemical formulae and reactions.",
        (
            Example("$$\n\\sideset{}{'}\\sum_{n \\lt N} a_n \\quad \\mbox{for all } N\n$$"),
            Example("Water forms by $\\ce{2H2 + O2 -> 2H2O}$; sulfate is $\\ce{SO4^2-}$."),
        ),
    ),
    Section(
        "environments",
        "Theorem-like environments",
        "A block between <code>:::kind[Title]{#label}</code> and <code>:::</code> is numbered "
        "per the kind's counter and can be referenced by its label. The title and label are "
        "optional; an outer block nests inner ones with more colons. The kinds are the "
        "site's (listed below).",
        (
            Example(
                ":::theorem[Mean value]{#thm-mean}\n"
                "If \\(f\\) is continuous on \\([a,b]\\) and differentiable inside, some "
                "\\(c\\) has \\(f'(c) = \\frac{f(b)-f(a)}{b-a}\\).\n"
                ":::\n\n"
                "::::proof\n"
                "Apply Rolle's theorem to \\(f\\) minus its chord.\n"
                "::::\n\n"
                "By Theorem~\\ref{thm-mean}, a function with zero derivative is constant."
            ),
        ),
    ),
    Section(
        "lead-ins",
        "Bold lead-ins",
        "The theme's own way: a paragraph that starts with the kind in bold. It renders as "
        "bold text, unnumbered, exactly as the Hugo theme shows it.",
        (
            Example(
                "**Lemma (monotonicity).** If \\(f' \\ge 0\\) on an interval, \\(f\\) is "
                "non-decreasing there.\n\n**Proof.** Use the mean value theorem on any two points."
            ),
        ),
    ),
    Section(
        "cross-references",
        "Cross-references",
        "<code>\\ref{label}</code> points at an environment, equation, algorithm, figure or "
        "table of the same note; <code>\\ref{slug:label}</code> at a label of another note "
        "(the editor completes both after <code>\\ref{</code>). As in LaTeX, "
        "<code>\\ref</code> prints the number, <code>\\eqref</code> the number in "
        "parentheses, <code>\\Cref</code> the kind and the number (\u201cTheorem 1\u201d, "
        "\u201cEquation (1)\u201d), "
        "<code>\\cref</code> the same in lower case (\u201ctheorem 1\u201d, "
        "\u201ceq. (1)\u201d) and <code>\\autoref</code> as hyperref does. A "
        "<code>~</code> before any of them is a non-breaking space.",
        (
            Example("As shown in \\Cref{example-note:thm-main}, the bound is tight."),
            Example("Theorem~\\ref{example-note:thm-main} is tight."),
        ),
    ),
    Section(
        "text-commands",
        "LaTeX text commands",
        "In prose, <code>\\textbf</code>, <code>\\textit</code>, <code>\\emph</code> and "
        "<code>\\texttt</code> work with nested braces.",
        (Example("\\textbf{Bold with {braces}}, \\emph{emphasis} and \\texttt{a_literal}."),),
    ),
    Section(
        "citations",
        "Citations and reference lists",
        "<code>\\cite{key}</code> or <code>\\cite{a, b}</code> cites entries of a "
        "bibliography file; a <code>references</code> shortcode lists the entries cited "
        "before it, numbered in citation order. <code>bib=</code> names the file (without "
        "it, the note's default bibliographies), <code>title=</code> a heading, "
        "<code>style=</code> the citation style. A note that cites and has no list gets "
        "one at its end, from its default bibliographies, as <code>\\bibliography</code> "
        "does in LaTeX (a site setting). The editor completes keys after "
        "<code>\\cite{</code>.",
        (
            Example(
                "Random graphs \\cite{okafor2021} and convexity \\cite{moreau2019, tanaka2023}."
                f'\n\n{{{{< references bib="{GUIDE_BIB}" title="References" >}}}}'
            ),
        ),
    ),
    Section(
        "mermaid",
        "Mermaid diagrams",
        "A <code>mermaid</code> fence draws a diagram in the reader's browser (flowcharts, "
        "sequence, state, Gantt, mind maps…); its script loads only on pages with one.",
        (
            Example(
                "```mermaid\nflowchart LR\n  A[Draft] --> B{Review}\n  B -- yes --> C[Publish]\n```"
            ),
        ),
    ),
    Section(
        "algorithms",
        "Pseudo-algorithms",
        "A <code>pseudo-algorithm</code> fence holds LaTeX <code>algorithmic</code> "
        "pseudocode; it is typeset on the server and numbered Algorithm 1, 2…",
        (
            Example(
                "```pseudo-algorithm\n"
                "\\begin{algorithm}\n"
                "\\caption{Binary search}\n"
                "\\begin{algorithmic}\n"
                "\\Require sorted array \\(a\\), value \\(v\\)\n"
                "\\State \\(lo \\gets 0\\), \\(hi \\gets n - 1\\)\n"
                "\\While{\\(lo \\le hi\\)}\n"
                "  \\State \\(m \\gets \\lfloor (lo + hi) / 2 \\rfloor\\)\n"
                "  \\If{\\(a_m = v\\)} \\Return \\(m\\) \\EndIf\n"
                "  \\State move \\(lo\\) or \\(hi\\) past \\(m\\)\n"
                "\\EndWhile\n"
                "\\end{algorithmic}\n"
                "\\end{algorithm}\n"
                "```"
            ),
        ),
    ),
    Section(
        "code",
        "Code",
        "Fences name their language as Hugo does; Hugo's info-string attributes "
        "(<code>{linenos=true}</code>, <code>{.python}</code>) are accepted. Inline code "
        "goes between backticks; a <code>\\cite</code> or shortcode inside code stays "
        "literal.",
        (
            Example("```python {linenos=true}\ndef mean(xs):\n    return sum(xs) / len(xs)\n```"),
            Example("Call `mean(xs)`; write `\\cite{key}` to cite."),
        ),
    ),
    Section(
        "tables",
        "Tables",
        "GitHub tables; <code>{.table-academic}</code> (booktabs rules) or "
        "<code>{.table-striped}</code> on the line after the table chooses a skin. Cells may "
        "hold math and citations.",
        (
            Example(
                "| Method | Error |\n|:--|--:|\n| Euler | \\(O(h)\\) |\n| RK4 | \\(O(h^4)\\) |\n"
                "{.table-academic}"
            ),
            Example("| Year | Notes |\n|---|---|\n| 2024 | 12 |\n| 2025 | 30 |\n{.table-striped}"),
        ),
    ),
    Section(
        "figures-and-tables",
        "Numbered figures and tables",
        "As in Pandoc and Quarto: an image alone in its paragraph with "
        "<code>{#fig:label}</code> right after it is a figure, numbered, with its alt text "
        "as the caption; a paragraph <code>Table: caption {#tbl:label}</code> (or "
        "<code>: caption {#tbl:label}</code>) right before a table, or after it past a blank "
        "line, captions and numbers the table. Figures and tables count apart; "
        "<code>\\Cref{fig:label}</code> prints \u201cFigure 1\u201d, "
        "<code>\\cref</code> \u201cfig. 1\u201d, <code>\\ref</code> the number, and "
        "<code>\\Cref{slug:tbl:label}</code> reaches another note's table. Images and "
        "tables without such a label are shown as before.",
        (
            Example(
                f"![The site's icon, at $2\\times$ size]({GUIDE_IMAGE}){{#fig:icon}}\n\n"
                "Table: Step sizes and errors {#tbl:errors}\n\n"
                "| Step \\(h\\) | Error |\n|--:|--:|\n| 0.1 | 0.05 |\n| 0.01 | 0.005 |\n"
                "{.table-academic}\n\n"
                "\\Cref{fig:icon} shows the icon; by \\cref{tbl:errors} the error is "
                "linear in \\(h\\)."
            ),
        ),
    ),
    Section(
        "footnotes",
        "Footnotes and other Markdown",
        "Footnotes (<code>[^1]</code>), definition lists, <code>~~strikethrough~~</code>, "
        "links (external ones open in a new tab), images, block quotes and heading ids.",
        (
            Example("A claim that needs a source.[^why]\n\n[^why]: Here is the source."),
            Example("Term\n:   Its definition.\n\n~~Old~~ new, see <https://example.org>."),
            Example(f"![The site's icon]({GUIDE_IMAGE})\n\n> A quoted remark."),
        ),
    ),
    Section(
        "preview",
        "Feed-card preview",
        "On a long note, the region between <code>{{&lt; preview &gt;}}</code> and "
        "<code>{{&lt; /preview &gt;}}</code> is what its feed card shows; the note page shows "
        "it as ordinary text.",
        (Example("{{< preview >}}\nThe opening paragraph, shown on the card.\n{{< /preview >}}"),),
    ),
    Section(
        "promotions",
        "Promotions",
        "<code>promotion-textual</code> takes its text from parameters (<code>|</code> splits "
        "the title's lines); <code>promotion-visual</code> shows rows of images from a data "
        "file. <code>sponsored=true</code> adds the badge and sponsored links.",
        (
            Example(
                '{{< promotion-textual title="Join the reading group|Thursdays at four" '
                'subtitle="All welcome." buttonText="Sign up" buttonLink="/help/syntax/" >}}'
            ),
            Example('{{< promotion-visual data="guide-example" sponsored=true >}}'),
        ),
    ),
    Section(
        "galleries",
        "Galleries",
        "A grid of linked images with captions.",
        (
            Example(
                "{{< gallery >}}\n"
                f'{{{{< gallery-item image="{GUIDE_IMAGE}" caption="One" link="/" >}}}}\n'
                f'{{{{< gallery-item image="{GUIDE_IMAGE}" caption="Two" >}}}}\n'
                "{{< /gallery >}}"
            ),
        ),
    ),
    Section(
        "glossary",
        "Glossary",
        "Terms with definitions, collected in a side panel by <code>glossary</code> "
        "(<code>term</code> is the older name of <code>glossary-term</code>).",
        (
            Example(
                "{{< glossary >}}\n\n"
                'A {{< glossary-term id="pde" def="Partial differential equation" >}}PDE'
                "{{< /glossary-term >}} relates partial derivatives."
            ),
        ),
    ),
    Section(
        "entry-indexes",
        "Entry indexes",
        "On a page, <code>entry-a-to-z</code> and <code>entry-categories</code> list the "
        "notes of an entry set, A to Z or by category (<code>set=</code> names the set; "
        "<code>titleField=</code>, <code>categoryField=</code>, <code>tag=</code>, "
        "<code>countLabel=</code>… override its fields). Rendered here with this site's "
        "notes.",
        (Example('{{< entry-a-to-z set="{set}" >}}', live=True),),
    ),
)


def _example_bibliography(name: str):
    if name.strip().lstrip("/") == GUIDE_BIB:
        return ParsedBibliography(GUIDE_BIB, parse_bibtex(GUIDE_BIBTEX).entries)
    return None


def guide_context(base: RenderContext | None = None) -> RenderContext:
    """The site's context, with the guide's own bibliography, data file and example note."""
    base = base or context_for(None)
    return dataclasses.replace(
        base,
        resolve_bibliography=_example_bibliography,
        default_bibliographies=(),
        resolve_data=lambda name: GUIDE_DATA if name == "guide-example" else None,
        resolve_references=lambda pairs: {
            pair: GUIDE_TARGET for pair in pairs if pair == ("example-note", "thm-main")
        },
    )


def _rendered(source: str, context: RenderContext) -> dict:
    result = markup_render(source, context)
    return {
        "html": result.html,
        "warnings": [
            {"line": warning.line, "message": warning.message} for warning in result.warnings
        ],
        "flags": result.flags,
    }


def _cache_key(context: RenderContext) -> str:
    inputs = json.dumps(
        [
            [[example.source for example in section.examples] for section in SECTIONS],
            [dataclasses.astuple(kind) for kind in context.environments],
            context.citation_style,
            GUIDE_BIBTEX,
            [preamble.tex for preamble in context.math_macros],
        ],
        sort_keys=True,
    )
    return f"syntax-guide:{ENGINE_VERSION}:{hashlib.sha256(inputs.encode()).hexdigest()[:24]}"


def guide_sections() -> list[dict]:
    """Each section with its examples: source and the engine's HTML (and warnings, if any)."""
    context = guide_context()
    key = _cache_key(context)
    stored = cache.get(key)
    if stored is None:
        stored = {
            section.slug: [
                None if example.live else _rendered(example.source, context)
                for example in section.examples
            ]
            for section in SECTIONS
        }
        cache.set(key, stored, None)
    entry_set = EntrySet.objects.order_by("key").values_list("key", flat=True).first()
    sections = []
    for section in SECTIONS:
        examples = []
        for example, output in zip(section.examples, stored[section.slug], strict=True):
            source = example.source
            if example.live:
                source = source.replace("{set}", entry_set or "entry")
                output = _rendered(source, context)
            examples.append(
                {
                    "source": source,
                    # Trusted: rendered and sanitised by scidraft.markup.
                    "html": mark_safe(output["html"]),  # noqa: S308
                    "warnings": output["warnings"],
                    "mermaid": output["flags"]["has_mermaid"],
                }
            )
        sections.append(
            {
                "slug": section.slug,
                "title": section.title,
                # Trusted: the guide's own text, in this module.
                "intro": mark_safe(section.intro),  # noqa: S308
                "examples": examples,
            }
        )
    return sections


def syntax_guide(request):
    """/help/syntax/: the guide, public; the editor's help panel loads it too."""
    sections = guide_sections()
    context = guide_context()
    return render(
        request,
        "editor/syntax_guide.html",
        {
            "sections": sections,
            "kinds": context.environments,
            "shortcodes": SHORTCODES,
            "meta": PageMeta(title="Writing notes: the syntax | SciDraft"),
            "assets": {
                "math": True,
                "algorithm": True,
                "code": True,
                "mermaid": any(e["mermaid"] for s in sections for e in s["examples"]),
            },
        },
    )
