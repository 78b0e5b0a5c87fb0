"""The syntax guide's catalogue: its sections in order, each with its introduction (the guide's
own HTML) and the examples the engine renders. Data only: editor.guide renders it and serves the
page, editor.guide_doc writes docs/authoring.md from it."""

from __future__ import annotations

from dataclasses import dataclass

GUIDE_BIB = "bib/guide-example.bib"
# The image the gallery and promotion examples show: the site's own icon, always there.
GUIDE_IMAGE = "/static/favicon.svg"


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
