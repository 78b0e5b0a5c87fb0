"""Fenced and inline code: Pygments highlighting, Mermaid, pseudo-algorithms."""

from __future__ import annotations

import functools
import html
import re

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from . import jsengine, limits
from .protect import _INLINE_CODE, find_fences
from .rendered import RenderWarning
from .stash import Stash

# Catppuccin Macchiato, the theme's Chroma palette (theme-spec §2.7).
PYGMENTS_STYLE = "catppuccin-macchiato"
_FORMATTER = HtmlFormatter(nowrap=True)


def highlight_css() -> str:
    """The code colours, generated from the pinned style at set-up (make vendor, Dockerfile)."""
    return HtmlFormatter(style=PYGMENTS_STYLE).get_style_defs(".highlight")


def _language(info: str) -> str:
    # "python {linenos=true}" or "{.python}": the first word names the language.
    word = info.strip().split()[0] if info.strip() else ""
    return word.strip("{}.").lower()


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


def code_block(code: str, language: str, *, highlighted: bool = True) -> str:
    label = html.escape(language)
    lexer = _lexer(language)
    if not highlighted:
        lexer = None  # the render's time budget is spent: the code stays uncoloured
    body = _highlighted(code, lexer) if lexer else html.escape(code)
    if not language:
        return (
            f'<div class="highlight"><pre class="chroma"><code>{body.rstrip()}</code></pre></div>'
        )
    return (
        f'<div class="highlight" data-lang="{label}"><span class="code-lang">{label}</span>'
        f'<pre class="chroma"><code class="language-{label}" data-lang="{label}">'
        f"{body.rstrip()}</code></pre></div>"
    )


def mermaid_block(code: str) -> str:
    # Escaped source: Mermaid reads textContent in the browser (securityLevel "strict").
    return f'<pre class="mermaid">{html.escape(code)}</pre>'


_ALGORITHM_OPTION = re.compile(r"(\\begin\{algorithm(?:ic)?\})\s*\[[^\]]*\]")


def clean_pseudocode(source: str) -> tuple[str, list[str]]:
    """The theme's clean-up before pseudocode.js (theme-spec §2.6); returns labels found."""
    labels = re.findall(r"\\label\{([^{}]*)\}", source)
    source = _ALGORITHM_OPTION.sub(r"\1", source)
    source = re.sub(r"\\footnotesize\b|\\label\{[^{}]*\}", "", source)
    source = re.sub(r"\\hspace\{([^{}]*)\}", r"$\\hspace{\1}$", source)
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
            f'<pre class="algorithm-src algorithm-error" title="{html.escape(error.message)}">'
            f"{html.escape(code)}</pre>"
        )
        ok = False
    return f'<div class="pseudo-algorithm"{anchor}>{rendered}</div>', labels, ok


def protect_code(text: str, stash: Stash, warnings: list[RenderWarning], counters: dict) -> str:
    """Fences and inline code spans into the stash; returns the text with placeholders."""
    out, cursor = [], 0
    for start, end, fence in find_fences(text):
        if limits.expired():
            break  # the rest stays as written: Markdown's fallback shows it escaped
        out.append(text[cursor:start])
        language = _language(fence.info)
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
            rendered = code_block(fence.code, language, highlighted=not limits.expired())
            kind = "code"
        # A fence indented under a list item stays in it. Python-Markdown continues a list
        # item at four spaces where CommonMark (the theme's Goldmark) accepts the marker width.
        indent = fence.indent
        if 0 < len(indent.expandtabs(4)) < 4:
            indent = "    "
        out.append(
            indent
            + stash.add(
                rendered,
                text=fence.code,
                block=True,
                kind=kind,
                line=fence.line,
                original=fence.original,
                indent=indent,
                data=data,
            )
        )
        cursor = end
    out.append(text[cursor:])
    text = "".join(out)

    def inline(match: re.Match) -> str:
        content = match.group(2)
        if "\n\n" in content:
            return match.group(0)
        if content.startswith(" ") and content.endswith(" ") and content.strip():
            content = content[1:-1]
        content = content.replace("\n", " ")
        return stash.add(
            f"<code>{html.escape(content)}</code>",
            text=content,
            kind="inline-code",
            original=match.group(0),
        )

    pieces, cursor = [], 0
    for match in _INLINE_CODE.finditer(text):
        if limits.expired():
            break  # the rest stays as written, without a call per span left
        pieces += [text[cursor : match.start()], inline(match)]
        cursor = match.end()
    pieces.append(text[cursor:])
    return "".join(pieces)
