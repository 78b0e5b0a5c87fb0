"""Golden tests for code: Pygments blocks, folder trees, Mermaid and pseudo-algorithms."""

from __future__ import annotations

from scidraft.markup import code, render

from .dom import normalise_space, parse, visible_text

ALGORITHM = r"""```pseudo-algorithm
\begin{algorithm}[H]
\footnotesize
\caption{CAPTION}
\label{LABEL}
\begin{algorithmic}[1]
\Require matrix \(A\), tolerance \(\tau\)
\State \(v \gets v / \lVert v \rVert\) \Comment{any direction}
\While{\(\lVert w \rVert \gt \tau\)}
    \State \(v \gets w\)
\EndWhile
\Return \(v\)
\end{algorithmic}
\end{algorithm}
```"""


def _algorithm(caption: str, label: str) -> str:
    return ALGORITHM.replace("CAPTION", caption).replace("LABEL", label)


def test_python_fence_highlighted_with_classes():
    """A python fence → `.highlight pre.chroma code.language-python` with Pygments token classes."""
    rendered = render('Text.\n\n```python\ndef f(x):\n    return "s"  # note\n```\n')
    doc = parse(rendered.html)
    code = doc.select_one("div.highlight > pre.chroma > code.language-python")
    assert code is not None
    assert code.get("data-lang") == "python"
    classes = {cls for span in code.select("span") for cls in span.classes}
    assert {"k", "nf", "s2", "c1"} <= classes  # keyword, function name, string, comment
    assert code.text == 'def f(x):\n    return "s"  # note'
    assert "style" not in rendered.html.split("highlight", 1)[1].split("</code>")[0]
    assert rendered.has_code


def test_language_label():
    """The block shows its language as `span.code-lang`."""
    rendered = render("```toml\n[a]\nb = 1\n```\n")
    label = parse(rendered.html).select_one("div.highlight > span.code-lang")
    assert label.text == "toml"


def test_fence_without_language():
    """A fence without a language is escaped plain text in `.highlight pre.chroma code`."""
    rendered = render("```\n<b>x</b> & y\n```\n")
    code = parse(rendered.html).select_one("div.highlight pre.chroma code")
    assert code.text == "<b>x</b> & y"
    assert "<b>" not in rendered.html


def test_folder_tree_intact_in_bash_and_text():
    """Box-drawing folder trees keep every character and line in bash and text fences."""
    tree = (
        "project/\n├── src/\n│   ├── main.py      # entry point\n│   └── util/\n"
        "│       └── __init__.py\n└── README.md"
    )
    for language in ("bash", "text"):
        rendered = render(f"```{language}\n{tree}\n```\n")
        code = parse(rendered.html).select_one(f"code.language-{language}")
        assert code.text == tree
    comments = parse(render(f"```bash\n{tree}\n```\n").html).select("code span.c1")
    assert any("# entry point" in span.text for span in comments)


def test_code_inside_list_item():
    """A fence indented in a list item keeps its content and stays in the item."""
    rendered = render("- step:\n\n  ```python\n  x = 1\n  ```\n- next\n")
    doc = parse(rendered.html)
    code = doc.select_one("ul > li code.language-python")
    assert code is not None and code.text == "x = 1"


def test_code_inside_ordered_list_item_four_spaces():
    """A fence indented four spaces under `1.` stays inside the list item."""
    rendered = render("1. step\n\n    ```python\n    y = 2\n    ```\n\n2. next\n")
    doc = parse(rendered.html)
    items = doc.select("ol > li")
    assert len(items) == 2
    code = items[0].select_one("code.language-python")
    assert code is not None and code.text == "y = 2"


def test_markdown_not_applied_inside_code():
    """Emphasis, math and shortcodes inside code stay literal."""
    rendered = render("```text\n*a* $x$ \\(y\\) {{< preview >}} <script>\n```\n\nInline `*b* $z$`.")
    doc = parse(rendered.html)
    assert doc.select_one("pre code").text == "*a* $x$ \\(y\\) {{< preview >}} <script>"
    assert doc.select("p code")[0].text == "*b* $z$"
    assert not rendered.has_math
    assert "<script" not in rendered.html


def test_mermaid_block():
    """A mermaid fence → `pre.mermaid` holding the escaped source; has_mermaid set."""
    source = (
        '```mermaid\nflowchart TD\n    A["Input <b>"] --> B{"More?"}\n    B -- "yes" --> A\n```\n'
    )
    rendered = render(source)
    doc = parse(rendered.html)
    pre = doc.select_one("pre.mermaid")
    assert pre.text == 'flowchart TD\n    A["Input <b>"] --> B{"More?"}\n    B -- "yes" --> A'
    assert "&lt;b&gt;" in rendered.html and "--&gt;" in rendered.html
    assert not pre.elements
    assert rendered.has_mermaid and not rendered.has_code


def test_pseudo_algorithm_rendered_and_numbered_per_page():
    """pseudo-algorithm fences → pseudocode.js `.ps-root`, captions "Algorithm 1", "Algorithm 2"."""
    source = (
        "Intro.\n\n"
        + _algorithm("Power iteration", "alg:power")
        + "\n\nBetween.\n\n"
        + _algorithm("Second one", "alg:second")
        + "\n"
    )
    rendered = render(source)
    doc = parse(rendered.html)
    boxes = doc.select("div.pseudo-algorithm")
    assert len(boxes) == 2
    for box in boxes:
        assert box.select_one(".ps-root .ps-algorithm") is not None
        assert box.select(".ps-line")
    captions = [normalise_space(box.select(".ps-line")[0].text) for box in boxes]
    assert captions == ["Algorithm 1 Power iteration", "Algorithm 2 Second one"]
    assert rendered.has_algorithm
    assert rendered.warnings == []


def test_pseudo_algorithm_cleanup():
    """`[H]`, `[1]`, `\\footnotesize`, `\\label{…}` never reach the output; `\\(…\\)` is math."""
    rendered = render(_algorithm("Clean", "alg:clean"))
    box = parse(rendered.html).select_one("div.pseudo-algorithm")
    text = visible_text(box)
    for leftover in ("[H]", "[1]", "footnotesize", "\\label", "alg:clean", "\\(", "\\gets"):
        assert leftover not in text
    assert box.select(".katex")
    assert box.select_one("span.ps-comment") is not None
    assert not box.select("pre.algorithm-error")


def test_labelled_algorithm_can_be_referenced():
    """`\\label{alg:x}` makes `\\ref{alg:x}` a link reading "Algorithm N" to the algorithm's box."""
    source = (
        _algorithm("First", "alg:first")
        + "\n\n"
        + _algorithm("Second", "alg:x")
        + "\n\nAs \\Cref{alg:x} and \\Cref{alg:first} show."
    )
    rendered = render(source)
    doc = parse(rendered.html)
    links = [(a.get("href"), a.text) for a in doc.select("a.ref")]
    assert links == [("#alg-x", "Algorithm 2"), ("#alg-first", "Algorithm 1")]
    assert [box.id for box in doc.select("div.pseudo-algorithm")] == ["alg-first", "alg-x"]
    assert rendered.warnings == []


def test_pseudo_algorithm_parse_error():
    """A parse error shows the source (`pre.algorithm-src`) and warns `algorithm-error`."""
    bad = "```pseudo-algorithm\n\\begin{algorithm}\n\\begin{algorithmic}\n\\If{x}\n\\State y\n```"
    source = "Intro.\n\nMore.\n\n" + bad + "\n\nAfter $x$."
    rendered = render(source)
    doc = parse(rendered.html)
    pre = doc.select_one("div.pseudo-algorithm > pre.algorithm-src")
    assert pre is not None and "hidden" not in pre.attrs
    assert pre.text == "\\begin{algorithm}\n\\begin{algorithmic}\n\\If{x}\n\\State y"
    assert [(w.code, w.line) for w in rendered.warnings] == [("algorithm-error", 5)]
    assert "After" in doc.text and doc.select(".katex")


def test_numbering_continues_after_failed_algorithm():
    """A failed algorithm still takes its number: the next one is "Algorithm 2"."""
    bad = "```pseudo-algorithm\n\\begin{algorithm}\n\\State\n```"
    rendered = render(bad + "\n\n" + _algorithm("Next", "alg:n"))
    box = parse(rendered.html).select("div.pseudo-algorithm")[1]
    assert normalise_space(box.select(".ps-line")[0].text) == "Algorithm 2 Next"


def test_unclosed_fence_warns():
    """A fence never closed warns `code-unclosed` with its opening line; the rest is code."""
    rendered = render("Intro.\n\n```python\nx = 1\n\nnot *prose*")
    assert [(w.code, w.line) for w in rendered.warnings] == [("code-unclosed", 3)]
    code = parse(rendered.html).select_one("code.language-python")
    assert code.text.endswith("not *prose*")


def test_highlight_css_is_the_catppuccin_macchiato_palette():
    """The served code colours are the theme's palette, for the classes Pygments emits."""
    from scidraft.markup.code import highlight_css

    css = highlight_css()
    assert ".highlight .k " in css and ".highlight .s2 " in css
    assert "#cad3f5" in css  # Macchiato's text colour


# --- Hugo's fence options and where fences stand --------------------------------------------------


def test_linenos_true_is_chromas_line_number_table_with_marked_lines():
    """```` ```go {linenos=true,hl_lines=[2]} ````: a table of numbers beside the code, the
    second line marked in both columns, as Chroma writes it for Hugo."""
    rendered = render("```go {linenos=true,hl_lines=[2]}\npackage main\nfunc main() {}\n```\n")
    block = parse(rendered.html).select_one("div.highlight")
    numbers, code = block.select("table.lntable td.lntd")
    assert [span.text for span in numbers.select("span.lnt")] == ["1\n", "2\n"]
    assert [span.text for span in numbers.select("span.hl span.lnt")] == ["2\n"]
    lines = code.select("code.language-go > span.line")
    assert [line.classes for line in lines] == [["line"], ["line", "hl"]]
    assert [line.select_one("span.cl").text for line in lines] == [
        "package main\n",
        "func main() {}\n",
    ]


def test_linenos_inline_numbers_each_line_from_linenostart():
    """`linenos=inline, linenostart=10`: a number in each line, counting from 10."""
    rendered = render("```python {linenos=inline, linenostart=10}\nx = 1\ny = 2\n```\n")
    doc = parse(rendered.html)
    assert not doc.select("table")
    assert [span.text for span in doc.select("span.line > span.ln")] == ["10", "11"]


def test_hl_lines_as_a_string_of_ranges():
    """`hl_lines="1 3-4"` marks lines 1, 3 and 4 (positions in the block, as Hugo counts)."""
    source = '```python {hl_lines="1 3-4"}\na = 1\nb = 2\nc = 3\nd = 4\n```\n'
    lines = parse(render(source).html).select("span.line")
    assert ["hl" in line.classes for line in lines] == [True, False, True, True]


def test_fence_info_reads_escapes_and_entities():
    """CommonMark's info string: `foo\\+bar` names foo+bar, `f&ouml;` names fö."""
    assert code.fence_info("foo\\+bar")[0] == "foo+bar"
    assert code.fence_info("f&ouml;&ouml; {linenos=false}") == ("föö", {"linenos": False})
    assert code.fence_info("{.python}")[0] == "python"


def test_fence_in_a_quote_stays_in_the_quote():
    """`> ```` … opens a fence inside the quote: highlighted there, with `$x$` in it literal."""
    rendered = render("> Note:\n>\n> ```python\n> x = '$a$'\n> ```\n>\n> After.\n")
    quote = parse(rendered.html).select_one("blockquote")
    assert quote.select_one("div.highlight code.language-python").text == "x = '$a$'"
    assert [p.text for p in quote.select("p")] == ["Note:", "After."]
    assert "katex" not in rendered.html


def test_fence_on_a_list_items_first_line():
    """`- ```python` opens a fence as the item's first block; the next item follows."""
    rendered = render("- ```python\n  x = 1\n  ```\n- next\n")
    items = parse(rendered.html).select("ul > li")
    assert items[0].select_one("code.language-python").text == "x = 1"
    assert items[1].text == "next"


def test_fence_indented_under_an_item_keeps_its_indentation():
    """A fence indented two spaces under an item is in the item, without becoming an indented
    code block (Python-Markdown needed four spaces; CommonMark takes the marker's width)."""
    rendered = render("1. Install:\n\n   ```bash\n   pip install x\n   ```\n2. Run.\n")
    doc = parse(rendered.html)
    first = doc.select("ol > li")[0]
    assert first.select_one("div.highlight code.language-bash").text == "pip install x"
    assert not doc.select("pre > code > div") and len(doc.select("pre")) == 1


def test_a_closing_fence_indented_four_more_columns_is_code():
    """A closing fence may be indented at most three columns more than the opening one."""
    rendered = render("```\naaa\n    ```\n")
    assert parse(rendered.html).select_one("code").text == "aaa\n    ```"
    assert [w.code for w in rendered.warnings] == ["code-unclosed"]


def test_a_fence_right_after_a_paragraph_line_ends_the_paragraph():
    """As CommonMark: `Run this:` then a fence on the next line is a paragraph, then code;
    a fence after a quote's line is not in the quote."""
    doc = parse(render("Run this:\n```sh\nmake\n```\n> quoted\n```text\nout\n```\n").html)
    assert doc.select_one("p").text == "Run this:"
    assert doc.select_one("blockquote").text.strip() == "quoted"
    assert [c.text for c in doc.select("div.highlight code")] == ["make", "out"]


HSPACE_ALGORITHM = r"""```pseudo-algorithm
\begin{algorithm}
\caption{Indented}
\begin{algorithmic}
\State \hspace{WIDTH} \(S \leftarrow Q K^{\top}\)
\State \(x \gets y\) and WIDTH
\end{algorithmic}
\end{algorithm}
```"""


def test_every_hspace_in_an_algorithm_becomes_one_em():
    """The theme's loader rewrites each `\\hspace{…}` of an algorithm as `$\\hspace{1em}$`
    whatever its width (extend_head.html), so `\\hspace{0.5cm}` indents 1em, as there."""
    for width in ("0.5cm", "3em", "-2pt", "12mm"):
        source, _ = code.clean_pseudocode(f"\\State \\hspace{{{width}}} x")
        assert source == r"\State $\hspace{1em}$ x"


def test_algorithm_indents_read_the_same_whatever_the_hspace_width():
    """Rendered, an algorithm written with `\\hspace{0.5cm}` (the example site's indent) is the
    one written with `\\hspace{1em}`; other text naming the width is left alone."""

    def rendered(width: str) -> str:
        return render(HSPACE_ALGORITHM.replace("WIDTH", width)).html

    one_em = rendered("1em")
    assert rendered("0.5cm").replace("0.5cm", "1em") == one_em
    assert "0.5cm" in rendered("0.5cm")  # the prose "and 0.5cm" is kept
    assert "algorithm-error" not in one_em


def test_blocks_that_scroll_sideways_take_keyboard_focus():
    """The box that scrolls of a code block (its <code>, with or without a language or line
    numbers), a diagram's <pre>, an algorithm's <div> and a failed algorithm's source <pre> is in
    the tab order (tabindex 0), so a keyboard can scroll it; a line-number column is not."""
    bad = "```pseudo-algorithm\n\\begin{algorithm}\n\\State\n```"
    source = (
        "```python\nx = 1\n```\n\n```\nplain\n```\n\n```go {linenos=true}\nvar x int\n```\n\n"
        "```mermaid\nflowchart LR\n  A --> B\n```\n\n"
        + _algorithm("Fine", "alg:fine")
        + "\n\n"
        + bad
        + "\n"
    )
    doc = parse(render(source).html)
    focusable = [
        doc.select_one("pre.chroma > code.language-python"),
        next(code for code in doc.select("pre.chroma > code") if code.text == "plain"),
        doc.select(".lntable pre.chroma > code")[1],
        doc.select_one("pre.mermaid"),
        doc.select("div.pseudo-algorithm")[0],
        doc.select_one("div.pseudo-algorithm > pre.algorithm-src"),
    ]
    assert [element.get("tabindex") for element in focusable] == ["0"] * 6
    assert doc.select(".lntable pre.chroma > code")[0].get("tabindex") is None
    assert doc.select("div.pseudo-algorithm")[1].get("tabindex") is None
