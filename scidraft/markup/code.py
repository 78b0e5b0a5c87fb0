"""Stage 1, protect code: fenced and inline code (found by code_spans) stashed first, with
Pygments highlighting, Mermaid and pseudo-algorithms."""

from __future__ import annotations

import functools
import html
import re

from markdown_it.common.utils import unescapeAll
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from . import attributes, code_spans, jsengine, limits
from .code_spans import INLINE_CODE, find_fences
from .rendered import RenderWarning
from .stash import Stash

# Catppuccin Macchiato, the theme's Chroma palette (docs/theme.md#code-blocks).
PYGMENTS_STYLE = "catppuccin-macchiato"
_FORMATTER = HtmlFormatter(nowrap=True)
# On a block that may scroll sideways: in the tab order, so that a keyboard can scroll it
# (WCAG 2.1.1), as Hugo's own code blocks are.
SCROLLS = ' tabindex="0"'


def highlight_css() -> str:
    """The code colours, generated from the pinned style at set-up (make vendor, Dockerfile),
    and the layout of Chroma's line numbers and highlighted lines in the style's colours."""
    formatter = HtmlFormatter(style=PYGMENTS_STYLE)
    style = formatter.style
    numbers = style.line_number_color if style.line_number_color != "inherit" else "#8087a2"
    chroma = f"""
.chroma .line {{ display: flex; }}
.chroma .hl {{ background-color: {style.highlight_color}; }}
.chroma .lntd {{ vertical-align: top; padding: 0; margin: 0; border: 0; }}
.chroma .lntable {{ border-spacing: 0; padding: 0; margin: 0; border: 0; }}
.chroma .lnt, .chroma .ln {{ white-space: pre; -webkit-user-select: none; user-select: none;
  margin-right: 0.4em; padding: 0 0.4em 0 0.4em; color: {numbers}; }}
"""
    return formatter.get_style_defs(".highlight") + chroma


def fence_info(info: str) -> tuple[str, dict]:
    """A fence's language and its Hugo options: ```` ```go {linenos=true,hl_lines=[2]} ````
    gives ("go", {"linenos": True, "hl_lines": [2.0]}); `{.python}` names the language too."""
    # Backslash escapes and entities count in an info string (CommonMark 4.5).
    info = unescapeAll(info.strip())
    head, options = info, {}
    brace = info.find("{")
    if brace >= 0:
        parsed = attributes.parse(info, brace)
        if parsed is not None:
            head, options = info[:brace], parsed[0]
    words = head.split()
    word = words[0] if words else str(options.get("class", "")).split(" ")[0]
    return word.strip("{}.").lower(), options


def _line_ranges(value, count: int) -> set[int]:
    """Positions (1-based) that hl_lines names: `[2, "4-5"]` or `"2 4-5"`, as Hugo reads it."""
    if isinstance(value, list):
        value = " ".join(attributes.as_html_value(item) for item in value)
    chosen: set[int] = set()
    for field in str(value).split():
        first, _, last = field.partition("-")
        try:
            start = int(first)
            end = int(last) if last else start
        except ValueError:
            return set()  # Hugo refuses the whole option
        chosen.update(range(max(start, 1), min(end, count) + 1))
    return chosen


def _line_numbers(options: dict) -> str:
    """ "table", "inline" or "" (none), from Hugo's linenos option."""
    value = options.get("linenos", False)
    if value is True or value == "table":
        return "table"  # Hugo's lineNumbersInTable default
    return "inline" if value == "inline" else ""


def _chroma_lines(body: str, options: dict) -> tuple[str, str]:
    """Chroma's markup for highlighted lines and line numbers: (code, number column)."""
    lines = body.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    numbers = _line_numbers(options)
    try:
        first = int(float(options.get("linenostart", 1)))
    except (TypeError, ValueError):
        first = 1
    marked = _line_ranges(options.get("hl_lines", ""), len(lines))
    code, column = [], []
    for position, line in enumerate(lines, start=1):
        css = "line hl" if position in marked else "line"
        number = first + position - 1
        inline_number = f'<span class="ln">{number}</span>' if numbers == "inline" else ""
        code.append(f'<span class="{css}">{inline_number}<span class="cl">{line}\n</span></span>')
        if numbers == "table":
            cell = f'<span class="lnt">{number}\n</span>'
            column.append(f'<span class="hl">{cell}</span>' if position in marked else cell)
    return "".join(code), "".join(column)


@functools.lru_cache(maxsize=256)
def _lexer(language: str):
    # Looking a lexer up by name scans Pygments' registry: a note with hundreds of fences
    # spent most of its time there. Lexers keep no state between highlight() calls.
    try:
        return get_lexer_by_name(language, stripnl=False, ensurenl=False) if language else None
    except ClassNotFound:
        return None


class _CheckedLexer:
    """A lexer whose tokens are counted against the render's budget: Pygments took 15 s of CPU
    on one fence of 2 MB of Python, in a single call."""

    # Tokens between budget checks: ~0.1 ms of highlighting.
    CHECK_EVERY = 64

    def __init__(self, lexer):
        self.lexer = lexer

    def get_tokens(self, text: str):
        # The only call pygments.highlight makes on its lexer.
        for count, token in enumerate(self.lexer.get_tokens(text)):
            if count % self.CHECK_EVERY == 0:
                limits.check()
            yield token


def _highlighted(code: str, lexer) -> str:
    """Pygments' HTML for `code`, or the escaped code once the render's budget is spent."""
    try:
        return highlight(code, _CheckedLexer(lexer), _FORMATTER)
    except limits.BudgetExceeded:
        return html.escape(code)


def code_block(
    code: str, language: str, *, highlighted: bool = True, options: dict | None = None
) -> str:
    """A highlighted block in Hugo's wrapper; Hugo's `linenos`, `linenostart` and `hl_lines`
    options give Chroma's line spans, numbers (inline or in a table) and marked lines."""
    label = html.escape(language)
    lexer = _lexer(language)
    if not highlighted:
        lexer = None  # the render's time budget is spent: the code stays uncoloured
    body = _highlighted(code, lexer) if lexer else html.escape(code)
    code_attributes = f' class="language-{label}" data-lang="{label}"' if language else ""
    # The <code> is the box that scrolls sideways (overflow-x in the stylesheet): a keyboard
    # reaches and scrolls it only if it takes focus.
    code_attributes += SCROLLS
    head = (
        f'<div class="highlight" data-lang="{label}"><span class="code-lang">{label}</span>'
        if language
        else '<div class="highlight">'
    )
    options = options or {}
    if not (_line_numbers(options) or options.get("hl_lines")):
        return (
            f'{head}<pre class="chroma"><code{code_attributes}>{body.rstrip()}</code></pre></div>'
        )
    lines, column = _chroma_lines(body, options)
    if not column:
        return f'{head}<pre class="chroma"><code{code_attributes}>{lines}</code></pre></div>'
    return (
        f'{head}<div class="chroma"><table class="lntable"><tr><td class="lntd">'
        f'<pre class="chroma"><code>{column}</code></pre></td><td class="lntd">'
        f'<pre class="chroma"><code{code_attributes}>{lines}</code></pre></td></tr></table>'
        "</div></div>"
    )


def mermaid_block(code: str) -> str:
    # Escaped source: Mermaid reads textContent in the browser (securityLevel "strict"). The
    # drawn diagram scrolls sideways inside the <pre> when wider than the column.
    return f'<pre class="mermaid"{SCROLLS}>{html.escape(code)}</pre>'


_ALGORITHM_OPTION = re.compile(r"(\\begin\{algorithm(?:ic)?\})\s*\[[^\]]*\]")
# The theme's loader turns every \hspace{…} into one em of math space, whatever it asked for
# (`.replace(/\\hspace\{[^}]*\}/g, "$\\hspace{1em}$")`, layouts/_partials/extend_head.html):
# algorithms indented with \hspace{0.5cm} read 1em deep there, so they do here.
_HSPACE = re.compile(r"\\hspace\{[^}]*\}")


def clean_pseudocode(source: str) -> tuple[str, list[str]]:
    """The theme's clean-up before pseudocode.js (docs/theme.md#mermaid-and-pseudo-algorithms);
    returns labels found."""
    labels = re.findall(r"\\label\{([^{}]*)\}", source)
    source = _ALGORITHM_OPTION.sub(r"\1", source)
    source = re.sub(r"\\footnotesize\b|\\label\{[^{}]*\}", "", source)
    source = _HSPACE.sub(lambda _: r"$\hspace{1em}$", source)
    source = source.replace("\\(", "$").replace("\\)", "$")
    return source, labels


def algorithm_anchor(label: str) -> str:
    return re.sub(r"[^\w-]+", "-", label).strip("-") or "algorithm"


def algorithm_block(
    code: str, *, number: int, line: int, warnings: list[RenderWarning]
) -> tuple[str, list[str], bool]:
    """pseudocode.js HTML numbered `number`; on a parse error, the source and a warning."""
    source, labels = clean_pseudocode(code)
    anchor = f' id="{algorithm_anchor(labels[0])}"' if labels else ""
    try:
        lines = code.count("\n") + 1
        if lines > limits.MAX_ALGORITHM_LINES:
            raise jsengine.JSError(
                f"{lines} lines is over the limit of {limits.MAX_ALGORITHM_LINES}, shown as source"
            )
        if limits.expired():
            raise jsengine.JSError("the note took too long to render, shown as source")
        rendered = jsengine.render_pseudocode(source, caption_count=number - 1)
        ok = True
    except jsengine.JSError as error:
        warnings.append(
            RenderWarning(line, "algorithm-error", f"pseudo-algorithm: {error.message}")
        )
        rendered = (
            f'<pre class="algorithm-src algorithm-error" title="{html.escape(error.message)}"'
            f"{SCROLLS}>"
            f"{html.escape(code)}</pre>"
        )
        ok = False
    # The box that scrolls: the algorithm's <div>, or the <pre> of the source shown instead.
    focus = SCROLLS if ok else ""
    return f'<div class="pseudo-algorithm"{anchor}{focus}>{rendered}</div>', labels, ok


def protect_code(text: str, stash: Stash, warnings: list[RenderWarning], counters: dict) -> str:
    """Fences and inline code spans into the stash; returns the text with placeholders."""
    out, cursor = [], 0
    for start, end, fence in find_fences(text):
        if limits.expired():
            break  # the rest stays as written: Markdown's fallback shows it escaped
        out.append(text[cursor:start])
        language, options = fence_info(fence.info)
        if not fence.closed:
            warnings.append(
                RenderWarning(
                    fence.line,
                    "code-unclosed",
                    "code fence is never closed: the rest of the note is shown as code",
                )
            )
        data: dict = {"language": language}
        if language == "mermaid":
            rendered, kind = mermaid_block(fence.code), "mermaid"
        elif language in {"pseudo-algorithm", "pseudocode", "algorithm"}:
            counters["algorithm"] = counters.get("algorithm", 0) + 1
            number = counters["algorithm"]
            rendered, labels, _ = algorithm_block(
                fence.code, number=number, line=fence.line, warnings=warnings
            )
            kind = "algorithm"
            data = {"labels": labels, "number": number}
        else:
            rendered = code_block(
                fence.code, language, highlighted=not limits.expired(), options=options
            )
            kind = "code"
        # The placeholder keeps the fence's container: its indentation under a list item, the
        # `>` of a quote on every line (Markdown then ends paragraphs around it as CommonMark
        # ends them around the fence).
        out.append(
            fence.prefix
            + stash.add(
                rendered,
                text=fence.code,
                block=True,
                kind=kind,
                line=fence.line,
                original=fence.original,
                indent=fence.continuation,
                data=data,
            )
        )
        cursor = end
    out.append(text[cursor:])
    text = "".join(out)

    def inline(match: re.Match) -> str:
        content = match.group(2)
        if "\n\n" in content or not code_spans.plain_code_span(text, match):
            return match.group(0)
        # CommonMark 6.1: line endings become spaces, then one space is stripped from each end
        # of a span that has both (and is not all spaces).
        content = content.replace("\n", " ")
        if content.startswith(" ") and content.endswith(" ") and content.strip():
            content = content[1:-1]
        return stash.add(
            f"<code>{html.escape(content)}</code>",
            text=content,
            kind="inline-code",
            original=match.group(0),
        )

    pieces, cursor = [], 0
    for match in INLINE_CODE.finditer(text):
        if limits.expired():
            break  # the rest stays as written, without a call per span left
        pieces += [text[cursor : match.start()], inline(match)]
        cursor = match.end()
    pieces.append(text[cursor:])
    return "".join(pieces)
