"""Stage 5, environments: theorem-like blocks.

The theme writes environments as bold lead-ins (`**Lemma (shift invariance).**`): those render
as the theme renders them, a paragraph in bold, and are recorded. SciDraft adds fenced blocks,

    :::lemma[Shift invariance]{#lem-shift}
    …Markdown and math…
    :::

nestable (an outer fence has more colons), numbered per the kind's counter, with a label that
`\\ref{lem-shift}` points at.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from . import limits
from .context import EnvironmentKind, RenderContext
from .rendered import RenderWarning
from .sourcelines import LineMap
from .stash import Stash

_OPEN = re.compile(
    r"^(?P<indent>[ \t]*)(?P<colons>:{3,})[ \t]*(?P<kind>[A-Za-z][\w-]*)[ \t]*"
    r"(?:\[(?P<title>[^\]\n]*)\])?[ \t]*(?:\{(?P<attrs>[^}\n]*)\})?[ \t]*$"
)
_CLOSE = re.compile(r"^[ \t]*(?P<colons>:{3,})[ \t]*$")
_LABEL = re.compile(r"#([\w:.-]+)")


@dataclass
class EnvironmentState:
    counters: dict[str, int] = field(default_factory=dict)
    labels: dict[str, dict] = field(default_factory=dict)
    found: list[dict] = field(default_factory=list)
    # Each fence becomes three lines (blank, placeholder, blank): lines after it shift.
    lines: LineMap = field(default_factory=LineMap)


def _lead_in_pattern(context: RenderContext) -> re.Pattern:
    labels = sorted((re.escape(kind.label) for kind in context.environments), key=len, reverse=True)
    return re.compile(
        r"^[ \t]*\*\*(?P<label>" + "|".join(labels) + r")(?:[ \t]+(?P<number>\d+))?"
        r"(?:[ \t]*\((?P<name>[^)\n]*)\))?\.?\*\*",
        re.M | re.I,
    )


def record_lead_ins(text: str, context: RenderContext, state: EnvironmentState) -> None:
    """Record `**Kind (name).**` paragraph openers; their HTML stays the theme's."""
    by_label = context.kinds_by_label()
    for match in _lead_in_pattern(context).finditer(text):
        kind = by_label[match.group("label").lower()]
        state.found.append(
            {
                "kind": kind.key,
                "name": (match.group("name") or "").strip(),
                "line": text.count("\n", 0, match.start()) + 1,
                "syntax": "lead-in",
            }
        )


def _heading(kind: EnvironmentKind | None, kind_word: str, number: str, title: str) -> str:
    label = kind.label if kind else kind_word.replace("-", " ").capitalize()
    words = f"{label} {number}" if number else label
    name = f' <span class="env-name">({title})</span>' if title else ""
    return f'<p class="env-head"><strong class="env-title">{html.escape(words)}</strong>{name}.</p>'


def process(
    text: str,
    stash: Stash,
    context: RenderContext,
    warnings: list[RenderWarning],
    state: EnvironmentState,
) -> str:
    """Replace fenced environments with stashed opening and closing HTML."""
    record_lead_ins(text, context, state)
    kinds = context.kinds_by_key()
    lines = text.split("\n")
    out: list[str] = []
    stack: list[dict] = []
    for number, line in enumerate(lines, start=1):
        if number % 256 == 0 and limits.expired():
            out.extend(lines[number - 1 :])  # as written: Markdown's fallback shows it escaped
            break
        opened = _OPEN.match(line)
        if opened:
            kind_word = opened.group("kind").lower()
            kind = kinds.get(kind_word)
            if kind is None:
                warnings.append(
                    RenderWarning(
                        number,
                        "environment-unknown",
                        f"unknown environment :::{kind_word} (known: {', '.join(sorted(kinds))})",
                    )
                )
            attrs = opened.group("attrs") or ""
            label_match = _LABEL.search(attrs)
            label = label_match.group(1) if label_match else ""
            shown_number = ""
            if kind is not None and kind.numbered:
                counter = kind.counter_name
                state.counters[counter] = state.counters.get(counter, 0) + 1
                shown_number = str(state.counters[counter])
            anchor = ""
            if label:
                if label in state.labels:
                    warnings.append(
                        RenderWarning(
                            number, "duplicate-label", f"the label {label} is defined twice"
                        )
                    )
                else:
                    anchor = re.sub(r"[^\w-]+", "-", label).strip("-")
                    word = kind.label if kind else kind_word.capitalize()
                    state.labels[label] = {
                        "kind": kind.key if kind else kind_word,
                        "number": shown_number,
                        "text": f"{word} {shown_number}".strip(),
                        "anchor": anchor,
                    }
            title = (opened.group("title") or "").strip()
            state.found.append(
                {
                    "kind": kind.key if kind else kind_word,
                    "name": title,
                    "number": shown_number,
                    "label": label,
                    "line": number,
                    "syntax": "block",
                }
            )
            style = kind.style if kind else "definition"
            classes = f"env env-{kind.key if kind else 'unknown'} env-style-{style}"
            id_attribute = f' id="{anchor}"' if anchor else ""
            # The title may hold math placeholders: escaping leaves them intact for fill.
            opening = (
                f'<div class="{classes}" data-kind="{html.escape(kind_word)}"{id_attribute}>'
                + _heading(kind, kind_word, shown_number, html.escape(title))
            )
            token = stash.add(opening, block=True, kind="environment-open", line=number)
            state.lines.replaced(len(out) + 1, 3, number)
            out.extend(["", opened.group("indent") + token, ""])
            stack.append(
                {
                    "colons": len(opened.group("colons")),
                    "line": number,
                    "style": style,
                    "indent": opened.group("indent"),
                }
            )
            continue
        closed = _CLOSE.match(line)
        if closed:
            if not stack:
                warnings.append(
                    RenderWarning(number, "environment-unpaired", "::: closes no open environment")
                )
                out.append(line)
                continue
            state.lines.replaced(len(out) + 1, 3, number)
            out.extend(["", _close(stack.pop(), stash, number), ""])
            continue
        out.append(line)
    while stack:
        block = stack.pop()
        warnings.append(
            RenderWarning(
                block["line"],
                "environment-unclosed",
                "environment is never closed with ::: (closed at the end of the note)",
            )
        )
        state.lines.replaced(len(out) + 1, 3, len(lines))
        out.extend(["", _close(block, stash, block["line"]), ""])
    return "\n".join(out)


def _close(block: dict, stash: Stash, line: int) -> str:
    qed = (
        '<span class="env-qed" aria-label="end of proof">∎</span>'
        if block["style"] == "proof"
        else ""
    )
    return block["indent"] + stash.add(
        f"{qed}</div>", block=True, kind="environment-close", line=line
    )
