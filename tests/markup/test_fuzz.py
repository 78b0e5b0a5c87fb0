"""Property-based tests of the rendering engine.

Random mixes of Markdown, TeX math in every delimiter, environments, shortcodes, citations,
code, diagrams, pseudo-algorithms, raw HTML and XSS payloads. For each: `render` does not
raise, gives the same result twice, and its HTML holds only what the sanitiser allows plus the
markup of the trusted renderers (KaTeX, pseudocode.js) — never a script, a frame, a style
element, an event handler or a javascript: URL. A fixed, derandomised example budget keeps the
file's run time bounded.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from scidraft.markup import ReferenceTarget, RenderContext, render, sanitise

# --- What the output may contain --------------------------------------------------------------

# Elements whose whole subtree is a trusted renderer's output (fill puts it there from the
# stash): KaTeX's HTML+MathML and pseudocode.js's algorithm.
TRUSTED_ROOT_CLASSES = {"katex", "katex-display", "ps-root"}
# KaTeX's MathML vocabulary and the SVG it draws stretchy symbols with, plus the HTML elements
# both renderers build their layout from.
TRUSTED_TAGS = {
    "math", "semantics", "annotation", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace",
    "msup", "msub", "msubsup", "mfrac", "msqrt", "mroot", "mover", "munder", "munderover",
    "mtable", "mtr", "mtd", "mlabeledtr", "mpadded", "mphantom", "mstyle", "menclose",
    "svg", "path", "line", "span", "div", "p", "br",
}  # fmt: skip
TRUSTED_ATTRIBUTES = {
    "class", "style", "aria-hidden", "xmlns", "encoding", "width", "height", "viewbox",
    "preserveaspectratio", "d", "x1", "x2", "y1", "y2", "stroke-width", "mathvariant",
    "stretchy", "fence", "separator", "lspace", "rspace", "minsize", "maxsize", "accent",
    "accentunder", "columnalign", "columnspacing", "columnlines", "rowspacing", "rowlines",
    "display", "displaystyle", "scriptlevel", "notation", "voffset", "linethickness",
    "mathcolor", "mathbackground", "title", "linebreak", "depth", "mathsize", "lquote",
    "rquote", "rowalign", "equalrows", "equalcolumns", "side", "movablelimits",
}  # fmt: skip
FORBIDDEN_TAGS = {
    "script", "iframe", "frame", "frameset", "style", "object", "embed", "applet", "form",
    "input", "button", "textarea", "select", "base", "meta", "link", "template", "noscript",
}  # fmt: skip
URL_ATTRIBUTES = {"href", "src", "xlink:href", "action", "formaction", "background", "poster"}
# A URL's scheme as a browser reads it (after dropping leading controls and inner tabs and
# newlines); a URL without one is relative.
SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*):")
SAFE_SCHEMES = {"http", "https", "mailto"}
VOID = {"area", "br", "col", "embed", "hr", "img", "input", "source", "track", "wbr"}


# The engine's own boxes that scroll sideways take keyboard focus (code.SCROLLS): its output,
# filled in after the sanitiser, never an author's (whose tabindex the sanitiser drops).
FOCUSABLE_BOXES = {
    ("code", ""),
    ("pre", "mermaid"),
    ("pre", "algorithm-src"),
    ("div", "pseudo-algorithm"),
}


def _allowed_outside(tag: str, attribute: str, classes: set[str] = frozenset()) -> bool:
    """The sanitiser's allowlist: FRAGMENT_* is the wider of its two policies (author HTML
    and component fragments), data-* attributes being allowed in fragments."""
    allowed = sanitise.FRAGMENT_ATTRIBUTES
    if attribute == "tabindex" and any(
        tag == box and (not css or css in classes) for box, css in FOCUSABLE_BOXES
    ):
        return True
    return (
        attribute in allowed.get(tag, set())
        or attribute in allowed["*"]
        or attribute.startswith("data-")
    )


class _Audit(HTMLParser):
    """Collects every rule the output breaks."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool]] = []  # (tag, inside a trusted renderer's output)
        self.problems: list[str] = []

    def _trusted(self) -> bool:
        return bool(self.stack) and self.stack[-1][1]

    def _visit(self, tag: str, attrs: list[tuple[str, str | None]]) -> bool:
        trusted = self._trusted()
        classes = set((dict(attrs).get("class") or "").split())
        if tag in FORBIDDEN_TAGS:
            self.problems.append(f"<{tag}> element")
        if trusted:
            if tag not in TRUSTED_TAGS:
                self.problems.append(f"<{tag}> inside renderer output")
        elif tag not in sanitise.FRAGMENT_TAGS:
            self.problems.append(f"<{tag}> outside the allowlist")
        for name, value in attrs:
            value = value or ""
            if name.startswith("on"):
                self.problems.append(f"event handler {name} on <{tag}>")
            if trusted:
                if name not in TRUSTED_ATTRIBUTES:
                    self.problems.append(f"{name} on <{tag}> inside renderer output")
            elif not _allowed_outside(tag, name, classes):
                self.problems.append(f"{name} on <{tag}> outside the allowlist")
            if name in URL_ATTRIBUTES:
                url = re.sub(r"[\t\n\r]", "", re.sub(r"^[\x00-\x20]+", "", value))
                scheme = SCHEME.match(url)
                if scheme and scheme.group(1).lower() not in SAFE_SCHEMES:
                    self.problems.append(f"{name}={value!r} on <{tag}>")
            if name == "style":
                lowered = re.sub(r"\s", "", value).lower()
                if any(bad in lowered for bad in ("url(", "expression(", "javascript", "@import")):
                    self.problems.append(f"style={value!r} on <{tag}>")
                if not trusted and not all(
                    part.split(":")[0].strip() == "text-align"
                    for part in value.split(";")
                    if part.strip()
                ):
                    self.problems.append(f"style={value!r} on <{tag}> outside renderer output")
        return trusted or bool(classes & TRUSTED_ROOT_CLASSES)

    def handle_starttag(self, tag, attrs):
        inside = self._visit(tag, attrs)
        if tag not in VOID:
            self.stack.append((tag, inside))

    def handle_startendtag(self, tag, attrs):
        self._visit(tag, attrs)

    def handle_endtag(self, tag):
        for index in range(len(self.stack) - 1, -1, -1):
            if self.stack[index][0] == tag:
                del self.stack[index:]
                return


def audit(markup: str) -> list[str]:
    parser = _Audit()
    parser.feed(markup)
    parser.close()
    return parser.problems


# --- A context with hostile data behind it ----------------------------------------------------

XSS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '<a href="javascript:alert(1)">x</a>',
    '<a href="jav&#x09;ascript:alert(1)">x</a>',
    '<a href=" &#14;javascript:alert(1)">x</a>',
    "<iframe src=//evil.example></iframe>",
    "<style>body{display:none}</style>",
    "<svg onload=alert(1)><circle/></svg>",
    "<math><mtext><script>alert(1)</script></mtext></math>",
    '<div style="background:url(javascript:alert(1))">x</div>',
    '<td style="text-align:left;background:url(x)">c</td>',
    "<object data=x></object><embed src=x>",
    '<form action="javascript:alert(1)"><input onfocus=alert(1) autofocus></form>',
    "<details open ontoggle=alert(1)>",
    '<base href="javascript:/">',
    '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    "![x](javascript:alert(1))",
    "<javascript:alert(1)>",
    "[x](<javascript:alert(1)>) [y]: javascript:alert(1)\n\n[y][]",
    "{onclick=alert(1)}",
    '{: onmouseover="alert(1)" }',
    '"><script>alert(1)</script>',
    "<!--<script>alert(1)</script>-->",
    "<scr<script>ipt>alert(1)</script>",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "\ue000",
    "\ue0000\ue001",
    "\ue001",
]


class HostileBibliography:
    """A file whose formatted entries try to run script (they pass through clean_fragment)."""

    def __init__(self, name: str):
        self.url = "/" + name

    def format(self, keys, style, locale=None):
        return {
            key: f'<span onclick="alert(1)">{key}</span><script>x</script>'
            f'<a href="javascript:alert(1)">doi</a>'
            for key in keys
            if key != "missing"
        }


def _context() -> RenderContext:
    return RenderContext(
        resolve_bibliography=lambda name: None if "nofile" in name else HostileBibliography(name),
        default_bibliographies=("bib/default.bib",),
        resolve_references=lambda pairs: {
            (slug, label): ReferenceTarget(text="<b>Lemma 9</b>", url=f"/notes/{slug}/#{label}")
            for slug, label in pairs
        },
        render_entry_index=lambda name, params: (
            '<ul onmouseover="alert(1)"><li><a href="javascript:alert(1)">x</a></li></ul>'
        ),
        resolve_data=lambda name: {
            "rows": [
                {
                    "label": "<script>alert(1)</script>",
                    "images": [{"file": "javascript:alert(1)", "caption": '"><img onerror=x>'}],
                }
            ]
        },
        promotion_link="javascript:alert(1)",
    )


CONTEXT = _context()

# --- Strategies -------------------------------------------------------------------------------

WORDS = st.sampled_from(
    [
        "word", "x", "Lemma", "é", "∑", "<", ">", "&", '"', "'", "_", "*", "**", "__", "`",
        "|", "\\", "{", "}", "[", "]", "(", ")", "#", ":", ":::", "$", "$$", "~", "~~", "^",
        "%", "!", "-", "+", "1.", "\t", "  ", "{{<", ">}}", "{{%", "%}}", "\\\\", "&amp;",
        "&#60;", "&#x3C;", "javascript:", "on", "=", "http://example.org", "www.example.org",
    ]
)  # fmt: skip
TEXT = st.lists(WORDS, max_size=8).map(" ".join)

TEX_TOKENS = st.sampled_from(
    [
        "x", "y_1", "^2", "_", "^", "{", "}", "\\alpha", "\\frac{a}{b}", "\\sqrt{x}", "&", "\\\\",
        "\\label{eq:a}", "\\label{eq:b}", "\\tag{1}", "\\nonumber", "\\text{<b>hi</b>}",
        "\\href{javascript:alert(1)}{x}", "\\url{javascript:alert(1)}", "\\amp", "\\lt",
        "\\def\\a{\\a\\a}\\a", "\\def\\b#1{#1#1}\\b{\\b{\\b{x}}}", "\\color{red}",
        "\\color{red;background:url(javascript:alert(1))}", "\\htmlStyle{color:red}{x}",
        "\\htmlClass{x}{y}", "\\htmlId{x}{y}", "\\includegraphics{x.png}", "\\begin{matrix}",
        "\\end{matrix}", "\\left(", "\\right)", "\\overbrace{x}", "\\widehat{xy}",
        "\\cancel{x}", "\\boxed{x}", "\\mathrm{d}", "<", ">", "'", '"', "\\$", "\\)", "\\]",
        "\\operatorname{f}", "\\unknowncommand", "%", "#", "\\hspace{1em}",
    ]
)  # fmt: skip
TEX = st.lists(TEX_TOKENS, max_size=6).map("".join)
DELIMITERS = st.sampled_from(
    [
        ("$", "$"), ("$$", "$$"), ("\\(", "\\)"), ("\\[", "\\]"), ("\\\\(", "\\\\)"),
        ("\\begin{align}", "\\end{align}"), ("\\begin{equation*}", "\\end{equation*}"),
        ("\\begin{gather}", "\\end{gather}"), ("\\begin{eqnarray}", "\\end{eqnarray}"),
        ("$", ""), ("\\(", ""), ("$$", ""),
    ]
)  # fmt: skip
MATH = st.tuples(DELIMITERS, TEX).map(lambda parts: parts[0][0] + parts[1] + parts[0][1])

KINDS = st.sampled_from(["lemma", "theorem", "proof", "definition", "remark", "bogus"])
ENVIRONMENT = st.builds(
    lambda colons, kind, title, label, body: (
        f"{':' * colons}{kind}[{title}]{{#{label}}}\n{body}\n{':' * colons}"
    ),
    st.integers(3, 5),
    KINDS,
    st.one_of(TEXT, MATH, st.sampled_from(XSS)),
    st.sampled_from(["lem-a", "eq:a", 'x" onclick="y', "<b>", "thm:1"]),
    st.deferred(lambda: st.one_of(TEXT, MATH, COMMAND, FENCE, SHORTCODE, ENVIRONMENT)),
)
LEAD_IN = st.builds(
    lambda label, name, text: f"**{label} 1 ({name}).** {text}",
    st.sampled_from(["Theorem", "Lemma", "Proof", "Definition"]),
    st.one_of(TEXT, MATH),
    TEXT,
)

ARGUMENT = st.one_of(st.sampled_from(XSS), TEXT, st.sampled_from(["javascript:alert(1)", "x"]))
SHORTCODE = st.one_of(
    st.builds(lambda bib, title: f'{{{{< references bib="{bib}" title="{title}" >}}}}',
              st.sampled_from(["bib/a.bib", "bib/nofile.bib", "bib/a.bib,bib/b.bib", ""]),
              ARGUMENT),
    st.just("{{< references >}}"),
    st.builds(lambda body: f"{{{{< preview >}}}}\n{body}\n{{{{< /preview >}}}}", TEXT),
    st.just("{{< preview >}}"),
    st.builds(lambda image, caption: (
        f'{{{{< gallery >}}}}{{{{< gallery-item image="{image}" caption="{caption}" >}}}}'
        "{{< /gallery >}}"), ARGUMENT, ARGUMENT),
    st.builds(lambda link: f'{{{{< gallery-item image="a.png" link="{link}" >}}}}', ARGUMENT),
    st.just("{{< glossary >}}"),
    st.builds(lambda gid, definition, text: (
        f'{{{{< glossary-term id="{gid}" def="{definition}" >}}}}{text}{{{{< /glossary-term >}}}}'
    ), ARGUMENT, ARGUMENT, TEXT),
    st.builds(lambda title, link, target: (
        f'{{{{< promotion-textual title="{title}" buttonText="Go" buttonLink="{link}" '
        f'target="{target}" sponsored="true" >}}}}'), ARGUMENT, ARGUMENT,
        st.sampled_from(["_blank", "_self", "x"])),
    st.just("{{< promotion-visual >}}"),
    st.builds(lambda name: f'{{{{< {name} set="math" >}}}}',
              st.sampled_from(["entry-a-to-z", "entry-categories", "occupation-map"])),
    st.builds(lambda name: f"{{{{% {name} %}}}}", st.sampled_from(["unknown", "preview"])),
)  # fmt: skip
COMMAND = st.one_of(
    st.builds(lambda keys: f"\\cite{{{keys}}}",
              st.sampled_from(["k1", "k1,k2", "missing", "<script>", 'a"b', "k1, k1"])),
    st.builds(lambda command, key: f"\\{command}{{{key}}}",
              st.sampled_from(["ref", "eqref", "cref", "autoref"]),
              st.sampled_from(["lem-a", "eq:a", "other:lemma", "nowhere", "<b>"])),
    st.builds(lambda command, text: f"\\{command}{{{text}}}",
              st.sampled_from(["textbf", "textit", "emph", "texttt"]), st.one_of(TEXT, MATH)),
)  # fmt: skip
ALGORITHM_LINES = st.sampled_from(
    [
        "\\State $x \\gets 1$", "\\STATE <script>alert(1)</script>", "\\IF{$x<1$}", "\\ENDIF",
        "\\PROCEDURE{F}{$a$}", "\\ENDPROCEDURE", "\\COMMENT{<img src=x onerror=alert(1)>}",
        "\\label{alg:a}", "\\hspace{1em}", "\\textbf{\\href{javascript:alert(1)}{x}}", "\\(y\\)",
    ]
)  # fmt: skip
FENCE = st.one_of(
    st.builds(lambda language, body: f"```{language}\n{body}\n```",
              st.sampled_from(["", "python", "html", "js", "mermaid", "unknown-lang", "{.rust}",
                               'python onclick="x"']),
              st.one_of(TEXT, st.sampled_from(XSS))),
    st.builds(lambda lines: "```pseudo-algorithm\n\\begin{algorithm}\n\\caption{C}\n"
              "\\begin{algorithmic}\n" + "\n".join(lines) + "\n\\end{algorithmic}\n"
              "\\end{algorithm}\n```", st.lists(ALGORITHM_LINES, max_size=5)),
    st.builds(lambda body: f"`{body}`", TEXT),
    st.builds(lambda body: f"~~~\n{body}", TEXT),  # never closed
)  # fmt: skip
MARKDOWN = st.one_of(
    st.builds(lambda level, text: "#" * level + " " + text, st.integers(1, 6),
              st.one_of(TEXT, MATH)),
    st.builds(lambda marker, text: f"{marker} {text}",
              st.sampled_from(["-", "*", "+", "1.", ">", "    -", "> -"]),
              st.one_of(TEXT, MATH, COMMAND)),
    st.builds(lambda a, b: f"| {a} | b |\n|---|:-:|\n| {b} | d |\n{{.table-academic}}", TEXT,
              st.one_of(TEXT, MATH)),
    st.builds(lambda text, url: f"[{text}]({url})", TEXT,
              st.sampled_from(["https://example.org", "/notes/x/", "#sec", "javascript:alert(1)",
                               "mailto:a@b.c", "data:text/html,<script>", "//evil.example"])),
    st.builds(lambda url: f"![alt]({url})",
              st.sampled_from(["a.png", "javascript:alert(1)", "https://example.org/a.png"])),
    st.just("Footnote[^1].\n\n[^1]: The note <b>x</b>."),
    st.builds(lambda text: f"Term\n: {text}", TEXT),
    st.builds(lambda text: f"## Heading {{#custom-id .cls}}\n\n{text} {{: .x }}", TEXT),
    st.just("---"),
    st.just('<div markdown="1">**x**</div>'),
    st.builds(lambda text: f"<details><summary>{text}</summary>{text}</details>", TEXT),
)  # fmt: skip
PIECE = st.one_of(
    TEXT, MATH, ENVIRONMENT, LEAD_IN, SHORTCODE, COMMAND, FENCE, MARKDOWN, st.sampled_from(XSS)
)
SEPARATOR = st.sampled_from([" ", "\n", "\n\n", "\n    ", "\n\n> ", "\t"])
DOCUMENT = st.lists(st.tuples(PIECE, SEPARATOR), max_size=10).map(
    lambda parts: "".join(piece + separator for piece, separator in parts)
)

FUZZ = settings(
    max_examples=500,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _check(source: str) -> None:
    first = render(source, CONTEXT)
    second = render(source, CONTEXT)
    assert first.as_dict() == second.as_dict(), "the same source rendered differently"
    for part in (first.html, first.card_html, first.toc):
        assert audit(part) == []


# --- Properties ---------------------------------------------------------------------------


@pytest.mark.slow
@FUZZ
@given(DOCUMENT)
# Found by this test: a code span between $$ delimiters was typeset inside the formula and its
# <code> filled into KaTeX's MathML annotation.
@example("<details><summary>$$ %}} ` $$</summary>$$ %}} ` $$</details> ")
def test_random_documents_render_sanitised_and_deterministic(source):
    """Any mix renders without raising, twice the same, with only allowed markup."""
    _check(source)


@pytest.mark.slow
@FUZZ
@given(st.lists(st.tuples(st.sampled_from(XSS), PIECE, SEPARATOR), min_size=1, max_size=6))
def test_xss_payloads_inside_every_construct_stay_inert(parts):
    """Payloads next to and inside math, environments, shortcodes and code run nothing."""
    _check("".join(payload + piece + separator for payload, piece, separator in parts))


@pytest.mark.slow
@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(max_size=200))
def test_arbitrary_text_renders(source):
    """Unstructured Unicode (controls, surrogates' neighbours, placeholders) renders."""
    _check(source)


def test_code_between_math_delimiters_stays_code():
    """Regression (fuzzing): `$ `x` $` is code between two literal dollars, not a formula
    holding a code placeholder."""
    rendered = render("$$ a `$$b$$` c $$ and $y$\n")
    assert "<code>$$b$$</code>" in rendered.html
    assert rendered.html.count('class="katex"') == 1 and "<annotation" in rendered.html
    assert "<code>" not in rendered.html.split("<annotation", 1)[1].split("</annotation>")[0]


def test_the_audit_catches_what_it_must():
    """The checker itself: each forbidden construct is reported."""
    assert audit('<p class="x">ok <a href="/a">a</a></p>') == []
    assert audit("<script>x</script>")
    assert audit('<a href="javascript:alert(1)">x</a>')
    assert audit('<a href=" java\tscript:x">x</a>')
    assert audit('<span onclick="x">x</span>')
    assert audit('<div style="color:red">x</div>')
    assert audit("<iframe></iframe>")
    assert audit('<span class="katex"><script></script></span>')
    assert audit('<span class="katex"><span style="x">ok</span></span>') == []
