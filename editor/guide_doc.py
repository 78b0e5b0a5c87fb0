"""docs/authoring.md, written from the syntax guide: the sections and examples of
`editor.guide_catalogue.SECTIONS`, the shortcodes of `SHORTCODES` and the keys of the guide's
template, so that /help/syntax/ and the document have one source. `manage.py authoring_doc`
writes it."""

from __future__ import annotations

import html
import re
from pathlib import Path

from django.conf import settings

from scidraft.markup.shortcodes import SHORTCODES

from .guide_catalogue import SECTIONS

DOCUMENT = Path(settings.BASE_DIR) / "docs" / "authoring.md"
TEMPLATE = Path(settings.BASE_DIR) / "templates" / "editor" / "syntax_guide.html"

_CODE = re.compile(r"<code>(.*?)</code>", re.DOTALL)
_EM = re.compile(r"</?em>")
_KBD = re.compile(r"</?kbd>")
_ROW = re.compile(r"<tr><td>(.*?)</td><td>(.*?)</td></tr>", re.DOTALL)
_TICKS = re.compile(r"`+")

HEADER = """\
# Writing notes: the syntax

<!-- Written by `manage.py authoring_doc` from editor/guide.py, the syntax guide that
/help/syntax/ shows; change the guide and run the command, not this file. -->

Everything the editor understands. On a running site, `/help/syntax/` (and the editor's help
panel) shows each example below rendered by the engine that renders the published notes, with
the site's own environment kinds.
"""


def _code_span(text: str) -> str:
    """A Markdown code span holding `text`, fenced by more backticks than it contains."""
    longest = max((len(run) for run in _TICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _markdown(fragment: str) -> str:
    """The guide's HTML (code, em, kbd and entities only) as Markdown text."""
    text = _CODE.sub(lambda m: "\0" + m.group(1) + "\1", fragment)
    text = _KBD.sub("", _EM.sub("*", text))
    text = html.unescape(text)
    return re.sub("\0(.*?)\1", lambda m: _code_span(m.group(1)), text, flags=re.DOTALL)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _example(source: str) -> str:
    longest = max((len(run) for run in _TICKS.findall(source)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}markdown\n{source}\n{fence}"


def _keys() -> list[tuple[str, str]]:
    template = TEMPLATE.read_text()
    section = template[template.index('id="keyboard"') :]
    return [(_markdown(keys), _markdown(meaning)) for keys, meaning in _ROW.findall(section)]


def authoring_markdown() -> str:
    """The whole document, as the guide describes it now."""
    parts = [HEADER, "## Contents\n"]
    parts.append(
        "\n".join(f"- [{_markdown(section.title)}](#{section.slug})" for section in SECTIONS)
        + "\n- [Shortcodes and their parameters](#shortcodes)\n- [The editor's keys](#keyboard)\n"
    )
    for section in SECTIONS:
        parts.append(f'<a id="{section.slug}"></a>\n\n## {_markdown(section.title)}\n')
        parts.append(_markdown(section.intro) + "\n")
        for example in section.examples:
            parts.append(_example(example.source.replace("{set}", "entry")) + "\n")
    parts.append('<a id="shortcodes"></a>\n\n## Shortcodes and their parameters\n')
    parts.append(
        'Written as the Hugo theme writes them: `{{< name key="value" >}}`; paired ones close '
        "with `{{< /name >}}`.\n"
    )
    rows = ["| Shortcode | What it is | Parameters |", "| --- | --- | --- |"]
    for name, signature in SHORTCODES.items():
        shown = f"`{name}` … `/{name}`" if signature.paired else f"`{name}`"
        params = ", ".join(f"`{param}`" for param in signature.params) or "none"
        rows.append(f"| {shown} | {_cell(signature.summary)} | {params} |")
    parts.append("\n".join(rows) + "\n")
    parts.append('<a id="keyboard"></a>\n\n## The editor\'s keys\n')
    rows = ["| Keys | What they do |", "| --- | --- |"]
    rows += [f"| {_cell(keys)} | {_cell(meaning)} |" for keys, meaning in _keys()]
    parts.append("\n".join(rows) + "\n")
    return "\n".join(parts)
