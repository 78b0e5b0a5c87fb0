"""How the Markdown stage writes its tokens, where Goldmark's HTML differs from markdown-it's:
the earlier stages' placeholders, code the code stage did not see, strikethrough, footnotes
(Hugo's ids and roles), and the table of contents."""

from __future__ import annotations

import html

from markdown_it import MarkdownIt
from markdown_it.token import Token

from . import code
from .sourcelines import ATTRIBUTE
from .stash import Stash

# Headings the TOC lists (h2–h4, as the theme's TOC does).
TOC_LEVELS = range(2, 5)


def _render_placeholder(self, tokens, index, options, env) -> str:
    token = tokens[index]
    line = token.attrGet(ATTRIBUTE)
    if line is not None:
        # fill unwraps the paragraph and moves its line onto the block (sourcelines.py).
        return f'<p {ATTRIBUTE}="{line}">{token.content}</p>\n'
    return token.content + "\n"


def _render_fence(self, tokens, index, options, env) -> str:
    """A fence the code stage did not see (on a list item's first line, say): highlighted
    here, with what the earlier stages stashed inside it restored to the author's text."""
    token = tokens[index]
    stash: Stash = env["stash"]
    source = stash.restore(token.content).rstrip("\n")
    language, options_ = code.fence_info(stash.restore(token.info))
    rendered = code.code_block(source, language, options=options_)
    return stash.add(rendered, text=source, block=True, kind="code") + "\n"


def _render_code_block(self, tokens, index, options, env) -> str:
    source = env["stash"].restore(tokens[index].content)
    return f"<pre><code>{html.escape(source, quote=False)}</code></pre>\n"


def _render_code_inline(self, tokens, index, options, env) -> str:
    source = env["stash"].restore(tokens[index].content)
    return f"<code>{html.escape(source, quote=False)}</code>"


def _render_del_open(self, tokens, index, options, env) -> str:
    return "<del>"  # Goldmark's strikethrough element (markdown-it writes <s>)


def _render_del_close(self, tokens, index, options, env) -> str:
    return "</del>"


def _footnote_number(token: Token) -> str:
    return str(token.meta["id"] + 1)


def _footnote_ref_id(token: Token) -> str:
    sub = token.meta.get("subId", 0)
    return f"fnref{sub if sub else ''}:{_footnote_number(token)}"


def _render_footnote_ref(self, tokens, index, options, env) -> str:
    token = tokens[index]
    number = _footnote_number(token)
    return (
        f'<sup id="{_footnote_ref_id(token)}"><a href="#fn:{number}" class="footnote-ref" '
        f'role="doc-noteref">{number}</a></sup>'
    )


def _render_footnote_block_open(self, tokens, index, options, env) -> str:
    return '<div class="footnotes" role="doc-endnotes">\n<hr>\n<ol>\n'


def _render_footnote_block_close(self, tokens, index, options, env) -> str:
    return "</ol>\n</div>\n"


def _render_footnote_open(self, tokens, index, options, env) -> str:
    return f'<li id="fn:{_footnote_number(tokens[index])}">\n'


def _render_footnote_close(self, tokens, index, options, env) -> str:
    return "</li>\n"


def _render_footnote_anchor(self, tokens, index, options, env) -> str:
    token = tokens[index]
    return (
        f'&#160;<a href="#{_footnote_ref_id(token)}" class="footnote-backref" '
        'role="doc-backlink">&#x21a9;&#xfe0e;</a>'
    )


def toc(md: MarkdownIt, headings: list, env: dict) -> str:
    """Nested lists of the h2–h4 headings, linked by id; entries keep their math and code,
    not their links or footnote markers."""
    entries = [
        (level, anchor, children)
        for level, anchor, children in headings
        if level in TOC_LEVELS and anchor
    ]
    if not entries:
        return ""
    out = ['<div class="toc">\n<ul>\n']
    depth = [entries[0][0]]
    for position, (level, anchor, children) in enumerate(entries):
        if position:
            if level > depth[-1]:
                out.append("<ul>\n")
                depth.append(level)
            else:
                out.append("</li>\n")
                while len(depth) > 1 and level < depth[-1]:
                    depth.pop()
                    out.append("</ul>\n</li>\n")
        shown = [
            child
            for child in children
            if child.type not in {"link_open", "link_close", "footnote_ref"}
        ]
        text = md.renderer.renderInline(shown, md.options, env)
        out.append(f'<li><a href="#{html.escape(str(anchor))}">{text}</a>')
    out.append("</li>\n")
    for _ in depth[1:]:
        out.append("</ul>\n</li>\n")
    out.append("</ul>\n</div>\n")
    return "".join(out)


# markdown-it's render rules, by token type (convert.new_parser installs them).
RENDER_RULES = {
    "placeholder_block": _render_placeholder,
    "fence": _render_fence,
    "code_block": _render_code_block,
    "code_inline": _render_code_inline,
    "s_open": _render_del_open,
    "s_close": _render_del_close,
    "footnote_ref": _render_footnote_ref,
    "footnote_block_open": _render_footnote_block_open,
    "footnote_block_close": _render_footnote_block_close,
    "footnote_open": _render_footnote_open,
    "footnote_close": _render_footnote_close,
    "footnote_anchor": _render_footnote_anchor,
}
