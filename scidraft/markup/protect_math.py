"""Stage 3, protect math: math in all four delimiters and the amsmath display environments
is typeset (formulas.py) and stashed before Markdown could corrupt it; Markdown never sees
`\\\\`, `\\|`, `_`, `*`, `&` or `<` inside a formula."""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import limits
from .formulas import BEGIN, MathState, typeset
from .rendered import RenderWarning
from .stash import OPEN, LineIndex, Stash

_CANDIDATE = re.compile(r"[\\$]")
_INDENT = re.compile(r"[ \t]*")


@dataclass
class _Span:
    start: int
    end: int
    tex: str
    display: bool


def _find_close(text: str, start: int, closer: str, *, allow_blank_line: bool) -> int:
    index = text.find(closer, start)
    if index < 0:
        return -1
    if not allow_blank_line and re.search(r"\n[ \t]*\n", text[start:index]):
        return -1
    return index


def _inline_dollar_end(text: str, start: int) -> int:
    """End of `$…$` opened at `start`, or -1. Spaces inside the dollars are allowed, as
    Hugo's passthrough and MathJax allow them (`$ x^2 $` is math); a closing dollar followed
    by a digit is not one (pandoc's rule), so `$5 and $10` stays text where Hugo would typeset
    "5 and ". A formula of spaces alone is no formula."""
    if start + 1 >= len(text) or text[start + 1] in "\n$":
        return -1
    index = start + 1
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "\n" and re.match(r"\n[ \t]*\n", text[index:]):
            return -1
        if char == "$":
            if index + 1 < len(text) and text[index + 1].isdigit():
                return -1
            if not text[start + 1 : index].strip():
                return -1
            return index
        index += 1
    return -1


def find_math(text: str, warnings: list[RenderWarning], lines: LineIndex) -> list[_Span]:
    """Math spans in document order; unclosed delimiters become warnings and stay text."""
    spans: list[_Span] = []
    index, length = 0, len(text)
    while index < length:
        if len(spans) % 1000 == 999 and limits.expired():
            break  # protect_math leaves the rest as written
        # Only a backslash or a dollar can start math: skip straight to the next one.
        candidate = _CANDIDATE.search(text, index)
        if candidate is None:
            break
        index = candidate.start()
        char = text[index]
        if char == "\\":
            if text.startswith("\\\\(", index) or text.startswith("\\\\[", index):
                # Markdown-escaped delimiters: \\( k \\) reads as \( k \) after Markdown.
                display = text[index + 2] == "["
                closer = "\\\\]" if display else "\\\\)"
                end = _find_close(text, index + 3, closer, allow_blank_line=display)
                if end >= 0:
                    spans.append(_Span(index, end + 3, text[index + 3 : end], display))
                    index = end + 3
                    continue
                index += 2
                continue
            if text.startswith("\\(", index) or text.startswith("\\[", index):
                display = text[index + 1] == "["
                closer = "\\]" if display else "\\)"
                end = _find_close(text, index + 2, closer, allow_blank_line=display)
                if end < 0:
                    kind = "display" if display else "inline"
                    warnings.append(
                        RenderWarning(
                            lines.line(index),
                            "math-unclosed",
                            f"unclosed {kind} math: {text[index : index + 2]} has no matching "
                            f"{closer}",
                        )
                    )
                    index += 2
                    continue
                spans.append(_Span(index, end + 2, text[index + 2 : end], display))
                index = end + 2
                continue
            begin = BEGIN.match(text, index)
            if begin:
                name = begin.group(1)
                closer = f"\\end{{{name}}}"
                end = text.find(closer, begin.end())
                if end < 0:
                    warnings.append(
                        RenderWarning(
                            lines.line(index), "math-unclosed", f"\\begin{{{name}}} is never ended"
                        )
                    )
                    index = begin.end()
                    continue
                spans.append(_Span(index, end + len(closer), text[index : end + len(closer)], True))
                index = end + len(closer)
                continue
            index += 2
            continue
        if char == "$":
            if text.startswith("$$", index):
                end = text.find("$$", index + 2)
                if end < 0:
                    warnings.append(
                        RenderWarning(
                            lines.line(index),
                            "math-unclosed",
                            "unclosed display math: $$ has no matching $$",
                        )
                    )
                    index += 2
                    continue
                spans.append(_Span(index, end + 2, text[index + 2 : end], True))
                index = end + 2
                continue
            end = _inline_dollar_end(text, index)
            if end > 0:
                spans.append(_Span(index, end + 1, text[index + 1 : end], False))
                index = end + 1
                continue
        index += 1
    return spans


def _stop(line: int, state: MathState, warnings: list[RenderWarning]) -> None:
    if not state.stopped:
        state.stopped = True
        warnings.append(
            RenderWarning(
                line,
                "render-limit",
                "this note took too long to typeset: formulas from here on are shown as source",
            )
        )


def protect_math(text: str, stash: Stash, state: MathState, warnings: list[RenderWarning]) -> str:
    lines = LineIndex(text)
    spans = find_math(text, warnings, lines)
    if not spans:
        return text
    out, cursor = [], 0
    for span in spans:
        if OPEN in span.tex:
            # Delimiters around a code span (`$ `x` $`): code was stashed first and wins, as
            # in the theme, where MathJax skips <code>; the dollars stay as written.
            continue
        line = lines.line(span.start)
        if limits.expired():
            # The rest of the note stays as written; Markdown's fallback shows it escaped.
            _stop(line, state, warnings)
            break
        out.append(text[cursor : span.start])
        original = text[span.start : span.end]
        rendered, plain, references = typeset(
            span.tex, display=span.display, line=line, state=state, warnings=warnings
        )
        indent = _INDENT.match(text, lines.starts[line - 1]).group(0)
        # A \ref in the formula is resolved in fill like one in prose: an item of its own,
        # never placed in the text (the formula's HTML holds its marker).
        refs = []
        for data in references:
            stash.add(None, text=data["source"], kind="ref", line=line, data=data)
            refs.append(len(stash.items) - 1)
        out.append(
            stash.add(
                rendered,
                text=plain,
                kind="math",
                line=line,
                original=original,
                indent=indent,
                data={"refs": refs} if refs else None,
            )
        )
        cursor = span.end
    out.append(text[cursor:])
    return "".join(out)
