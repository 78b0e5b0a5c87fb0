"""The XSS checker and payload corpus the sanitiser's tests share: `violations` parses rendered
markup with `html.parser` (never regexes) and lists whatever could run or navigate to script,
`assert_safe` renders a source and checks its `.html`, `.card_html` and `.toc`, and the payload
lists hold what an author might type in HTML, Markdown, TeX, shortcodes and the engine's own
constructs. KaTeX and pseudocode.js legitimately emit `style` attributes and MathML; Mermaid
source is escaped text inside `<pre class="mermaid">`."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from scidraft.markup import RenderContext, render

# --- The checker ----------------------------------------------------------------------------

FORBIDDEN_TAGS = {"script", "iframe", "object", "embed", "form", "style", "meta", "base", "link"}
URL_ATTRIBUTES = {"href", "src", "xlink:href", "action"}
BAD_SCHEMES = ("javascript:", "vbscript:", "data:")
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr", "param", "keygen"}  # fmt: skip
# A well-formed attribute name; anything else (`highlight"`) means a value was broken out of.
_ATTRIBUTE_NAME = re.compile(r"[a-z_:][-a-z0-9_:.]*")
_URL_JUNK = re.compile(r"[\x00-\x20\x7f]+")
_CSS_JUNK = re.compile(r"/\*.*?\*/|[\s\\]+", re.S)


def _url(value: str) -> str:
    """A URL as a browser reads its scheme: no whitespace/controls, lower case.

    html.parser has already HTML-unescaped attribute values once, as a browser does; unescaping
    again would flag `&amp;#106;avascript:`, which a browser reads as a harmless relative URL."""
    return _URL_JUNK.sub("", value).lower()


def _trusted(tag: str, attrs: dict[str, str]) -> bool:
    classes = (attrs.get("class") or "").split()
    return any(c == "katex" or c.startswith("katex-") or c.startswith("ps-") for c in classes) or (
        tag == "div" and "pseudo-algorithm" in classes
    )


class _Checker(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.stack: list[tuple[str, bool, bool]] = []  # (tag, trusted, mermaid)

    @property
    def in_trusted(self) -> bool:
        return any(trusted for _, trusted, _ in self.stack)

    @property
    def in_mermaid(self) -> bool:
        return any(mermaid for _, _, mermaid in self.stack)

    def _check(self, tag: str, attrs: list[tuple[str, str | None]]) -> dict[str, str]:
        values = {name: value or "" for name, value in attrs}
        if tag in FORBIDDEN_TAGS:
            self.problems.append(f"<{tag}> element")
        if self.in_mermaid:
            self.problems.append(f"<{tag}> element inside a Mermaid source block")
        trusted = self.in_trusted or _trusted(tag, values)
        for name, value in values.items():
            if not _ATTRIBUTE_NAME.fullmatch(name):
                self.problems.append(f"<{tag}> malformed attribute {name!r} (attribute breakout)")
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}=…> event handler")
            if name in {"srcdoc", "formaction"}:
                self.problems.append(f"<{tag} {name}=…>")
            if name in URL_ATTRIBUTES and _url(value).startswith(BAD_SCHEMES):
                self.problems.append(f"<{tag} {name}={value!r}> dangerous URL")
            if name == "style" and not trusted:
                css = _CSS_JUNK.sub("", value).lower()
                if "expression(" in css or "url(" in css:
                    self.problems.append(f"<{tag} style={value!r}> script-capable CSS")
        return values

    def handle_starttag(self, tag, attrs):
        values = self._check(tag, attrs)
        if tag not in VOID:
            mermaid = tag == "pre" and "mermaid" in (values.get("class") or "").split()
            self.stack.append((tag, _trusted(tag, values), mermaid))

    def handle_startendtag(self, tag, attrs):
        self._check(tag, attrs)

    def handle_endtag(self, tag):
        for index in range(len(self.stack) - 1, -1, -1):
            if self.stack[index][0] == tag:
                del self.stack[index:]
                break


def violations(markup: str) -> list[str]:
    checker = _Checker()
    checker.feed(markup)
    checker.close()
    return checker.problems


def assert_safe(source: str, context: RenderContext | None = None) -> None:
    rendered = render(source, context)
    problems = {part: violations(getattr(rendered, part)) for part in ("html", "card_html", "toc")}
    problems = {part: found for part, found in problems.items() if found}
    assert not problems, f"unsafe output for {source!r}: {problems}\nhtml: {rendered.html}"


# --- The corpus -----------------------------------------------------------------------------

# (id, payload): raw HTML and Markdown an author might type (OWASP / PortSwigger cheat sheets).
BODY_PAYLOADS = [
    ("script", "<script>alert(1)</script>"),
    ("script-src-upper", "<SCRIPT SRC=//xss.example/x.js></SCRIPT>"),
    ("script-split", "<scr<script>ipt>alert(1)</scr</script>ipt>"),
    ("img-onerror", "<img src=x onerror=alert(1)>"),
    ("img-js-src", "<IMG SRC=\"javascript:alert('XSS');\">"),
    ("img-mixed-case", "<IMG SRC=JaVaScRiPt:alert('XSS')>"),
    (
        "img-decimal-entities",
        "<IMG SRC=&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;&#97;&#108;"
        "&#101;&#114;&#116;&#40;&#39;&#88;&#83;&#83;&#39;&#41;>",
    ),
    (
        "img-hex-entities",
        "<IMG SRC=&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A&#x61&#x6C&#x65&#x72"
        "&#x74&#x28&#x27&#x58&#x53&#x53&#x27&#x29>",
    ),
    ("img-tab-entity", "<IMG SRC=\"jav&#x09;ascript:alert('XSS');\">"),
    ("img-newline-entity", "<IMG SRC=\"jav&#x0A;ascript:alert('XSS');\">"),
    ("img-leading-controls", "<IMG SRC=\" &#14;  javascript:alert('XSS');\">"),
    ("img-no-space-attr", '<img src=x alt="x"onerror=alert(1)>'),
    ("img-quote-breakout", '<img """><script>alert(1)</script>">'),
    ("img-eval-src", "<img src=x:alert(alt) onerror=eval(src) alt=0>"),
    ("svg-onload", "<svg onload=alert(1)>"),
    ("svg-script", "<svg><script>alert(1)</script></svg>"),
    ("svg-xlink", '<svg><a xlink:href="javascript:alert(1)"><text x=20 y=20>x</text></a></svg>'),
    ("svg-animate", "<svg><animate onbegin=alert(1) attributeName=x dur=1s>"),
    ("svg-set-href", "<svg><a><set attributeName=href to=javascript:alert(1) />x</a></svg>"),
    ("body-onload", "<body onload=alert(1)>"),
    ("details-ontoggle", "<details open ontoggle=alert(1)><summary>s</summary>x</details>"),
    ("video-source-onerror", "<video><source onerror=alert(1)></video>"),
    ("video-onerror", "<video src=x onerror=alert(1)></video>"),
    ("input-autofocus", "<input autofocus onfocus=alert(1)>"),
    ("marquee-onstart", "<marquee onstart=alert(1)>x</marquee>"),
    ("unknown-tag-onclick", "<x onclick=alert(1)>click</x>"),
    ("a-js", '<a href="javascript:alert(1)">x</a>'),
    ("a-space-js", '<a href=" javascript:alert(1)">x</a>'),
    ("a-tab-entity-js", '<a href="jav&#x09;ascript:alert(1)">x</a>'),
    ("a-colon-entity", '<a href="JaVaScRiPt&colon;alert(1)">x</a>'),
    ("a-colon-decimal", '<a href="javascript&#58;alert(1)">x</a>'),
    ("a-vbscript", '<a href="vbscript:msgbox(1)">x</a>'),
    ("a-data", '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>'),
    ("a-onmouseover", '<a href="#" title="x" onmouseover="alert(1)">x</a>'),
    ("img-data-svg", '<img src="data:image/svg+xml,<svg onload=alert(1)>">'),
    ("iframe-js", '<iframe src="javascript:alert(1)"></iframe>'),
    ("iframe-srcdoc", '<iframe srcdoc="<script>alert(1)</script>"></iframe>'),
    ("object-data", '<object data="javascript:alert(1)"></object>'),
    ("embed-src", '<embed src="javascript:alert(1)">'),
    ("form-action", '<form action="javascript:alert(1)"><button>go</button></form>'),
    ("button-formaction", '<form><button formaction="javascript:alert(1)">go</button></form>'),
    ("style-element", "<style>body{background:url(javascript:alert(1))}</style>"),
    ("style-url", '<div style="background:url(javascript:alert(1))">x</div>'),
    ("style-expression", '<div style="width:expression(alert(1))">x</div>'),
    (
        "style-td-url",
        '<table><tr><td style="text-align:left;background-image:url(javascript:alert(1))">x'
        "</td></tr></table>",
    ),
    ("style-comment-expression", '<p style="width:exp/**/ression(alert(1))">x</p>'),
    ("meta-refresh", '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">'),
    ("base-href", '<base href="javascript:alert(1)//">'),
    ("link-stylesheet", '<link rel=stylesheet href="javascript:alert(1)">'),
    ("mxss-math-mglyph", "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>"),
    ("mxss-svg-style", "<svg><p><style><img src=x onerror=alert(1)></style></p></svg>"),
    ("math-href", '<math href="javascript:alert(1)">x</math>'),
    ("noscript-title", '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>'),
    ("comment-trick", '<!--<img src="--><img src=x onerror=alert(1)//">'),
    ("cdata-trick", "<![CDATA[<img src=x onerror=alert(1)>]]>"),
    ("textarea-breakout", "<textarea></textarea><img src=x onerror=alert(1)></textarea>"),
    ("md-link-js", "[x](javascript:alert(1))"),
    ("md-link-mixed-case", "[x](JaVaScRiPt:alert(1))"),
    ("md-link-angle-space", "[x](< javascript:alert(1)>)"),
    ("md-link-entity", "[x](&#106;avascript:alert(1))"),
    ("md-link-vbscript", "[x](vbscript:msgbox(1))"),
    ("md-link-data", "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)"),
    ("md-image-js", "![x](javascript:alert(1))"),
    ("md-reference-js", "[x][r]\n\n[r]: javascript:alert(1)"),
    ("md-reference-image-js", '![x][r]\n\n[r]: JAVASCRIPT:alert(1) "t"'),
    ("md-autolink-js", "<javascript:alert(1)>"),
    ("md-title-quotes", '[x](http://a "\\" onmouseover=\\"alert(1)")'),
    ("md-title-single", "[x](http://a 'x\" onmouseover=\"alert(1)')"),
    ("md-attr-list-onclick", '[a](https://ok.example){: onclick="alert(1)" }'),
    ("md-attr-list-href", '[a](https://ok.example){: href="javascript:alert(1)" }'),
    ("md-attr-list-style", 'Para\n{: style="background:url(javascript:alert(1))" }'),
]


MATH_PAYLOADS = [
    ("href", r"\href{javascript:alert(1)}{x}"),
    ("href-mixed-case", r"\href{JaVaScRiPt:alert(1)}{x}"),
    ("url", r"\url{javascript:alert(1)}"),
    ("html-class", r'\htmlClass{x" onmouseover="alert(1)}{y}'),
    ("html-style", r"\htmlStyle{background:url(javascript:alert(1))}{y}"),
    ("html-data", r"\htmlData{onclick=alert(1)}{y}"),
    ("html-id", r'\htmlId{x"><img src=x onerror=alert(1)>}{y}'),
    ("includegraphics", r"\includegraphics{javascript:alert(1)}"),
    ("text-img", r"\text{<img src=x onerror=alert(1)>}"),
    ("raw-script", r"x</span><script>alert(1)</script>"),
    ("color-quote", r'\color{red" onmouseover="alert(1)}{x}'),
    ("def-href", r"\def\x{\href{javascript:alert(1)}{x}}\x"),
    ("operatorname-svg", r"\operatorname{<svg onload=alert(1)>}"),
    ("lt-img", r"a<img src=x onerror=alert(1)>b"),
]


MATH_CONTEXTS = {
    "inline-paren": lambda t: f"Text \\({t}\\) end.",
    "inline-dollar": lambda t: f"Text ${t}$ end.",
    "display-dollar": lambda t: f"$$\n{t}\n$$",
    "display-bracket": lambda t: f"\\[{t}\\]",
    "equation-env": lambda t: f"\\begin{{equation}}{t}\\label{{eq:x}}\\end{{equation}}",
    "preview-display": lambda t: f"{{{{< preview >}}}}\n$${t}$$\n{{{{< /preview >}}}}",
    "heading-inline": lambda t: f"## Heading \\({t}\\)",
}


SHORTCODE_CASES = [
    (
        "promotion-title-button",
        '{{< promotion-textual title="<script>alert(1)</script>" buttonLink="javascript:alert(1)" '
        'buttonText="go" >}}',
    ),
    (
        "promotion-subtitle-img",
        '{{< promotion-textual title="a|<img src=x onerror=alert(1)>" '
        'subtitle="<svg onload=alert(1)>"'
        ' buttonLink=" JaVaScRiPt:alert(1)" buttonText="<b onclick=alert(1)>go</b>" >}}',
    ),
    (
        "promotion-rel-target-breakout",
        '{{< promotion-textual buttonText="go" '
        'buttonLink="data:text/html,<script>alert(1)</script>"'
        ' rel="x\\" onclick=\\"alert(1)" target="_blank\\" onclick=\\"alert(1)" >}}',
    ),
    (
        "promotion-align-breakout",
        '{{< promotion-textual align="left\\"><script>alert(1)</script>" title="t" >}}',
    ),
    (
        "promotion-in-preview",
        '{{< preview >}}\n{{< promotion-textual title="<img src=x onerror=alert(1)>" '
        'buttonLink="vbscript:msgbox(1)" buttonText="go" >}}\n{{< /preview >}}',
    ),
    (
        "gallery-item-js",
        '{{< gallery-item image="javascript:alert(1)" caption="\\" onerror=alert(1)" >}}',
    ),
    (
        "gallery-item-link-data",
        '{{< gallery-item image="x.png" link="data:text/html,<script>alert(1)</script>" '
        'caption="<img src=x onerror=alert(1)>" >}}',
    ),
    (
        "gallery-items",
        '{{< gallery >}}\n{{< gallery-item src="javascript:alert(1)" '
        "caption=\"a' onerror='alert(1)\" >}}"
        '\n{{< gallery-item image="&#106;avascript:alert(1)" >}}\n{{< /gallery >}}',
    ),
    (
        "glossary-term-id",
        '{{< glossary-term id="x\\"><img src=x onerror=alert(1)>" '
        'def="<script>alert(1)</script>" >}}'
        "t{{< /glossary-term >}}",
    ),
    (
        "glossary-term-def-breakout",
        '{{< term id="g" def=\'" onmouseover="alert(1)\' >}}t{{< /term >}} {{< glossary >}}',
    ),
    (
        "glossary-term-fenced-code-in-id",
        '{{< glossary-term id="\n```\nq\n```\n" def="<img src=x onerror=alert(1)>" >}}'
        "t{{< /glossary-term >}}",
    ),
    (
        "references-bib-title",
        '\\cite{<b>x</b>}\n\n{{< references bib="<script>" '
        'title="<img src=x onerror=alert(1)>" >}}',
    ),
    (
        "references-bib-breakout",
        '\\cite{k}\n\n{{< references bib="x\\" onmouseover=\\"alert(1)" '
        'title="</h2><script>alert(1)</script>" style="<svg onload=alert(1)>" >}}',
    ),
    (
        "references-in-preview",
        '{{< preview >}}\nSee \\cite{"><img src=x onerror=alert(1)>}.\n{{< /preview >}}\n\n'
        '{{< references bib="javascript:alert(1)" >}}',
    ),
    (
        "unknown-shortcode",
        '{{< evil onload="alert(1)" src="javascript:alert(1)" >}}<script>x</script>',
    ),
]


ENGINE_CASES = [
    (
        "env-title-attrs",
        ':::lemma[<img src=x onerror=alert(1)>]{#"onmouseover=alert(1)}\nBody.\n:::',
    ),
    (
        "env-title-math",
        ":::theorem[$\\href{javascript:alert(1)}{x}$ <script>x</script>]{#thm-a}\n"
        "Body.\n:::\n\nSee \\ref{thm-a}.",
    ),
    ("env-unknown-kind", ":::x-onmouseover[<svg onload=alert(1)>]\nBody\n:::"),
    (
        "env-label-breakout",
        ':::lemma{#a"onclick="alert(1)}\nBody\n:::\n\n\\ref{a"onclick="alert(1)}',
    ),
    ("lead-in", "**Lemma (<img src=x onerror=alert(1)>).** Body."),
    ("mermaid-click-call", "```mermaid\ngraph TD\nA-->B\nclick A call alert(1)\n```"),
    ("mermaid-click-href", '```mermaid\ngraph TD\nA-->B\nclick A href "javascript:alert(1)"\n```'),
    ("mermaid-img-label", '```mermaid\ngraph TD\nA["<img src=x onerror=alert(1)>"]-->B\n```'),
    ("mermaid-close-pre", '```mermaid\ngraph TD\nA["</pre><script>alert(1)</script>"]\n```'),
    (
        "pseudocode-state-script",
        "```pseudocode\n\\begin{algorithm}\n\\caption{<img src=x onerror=alert(1)>}\n"
        "\\begin{algorithmic}\n\\State <script>alert(1)</script>\n"
        "\\State $\\href{javascript:alert(1)}{x}$\n\\State \\textbf{<img src=x onerror=alert(1)>}\n"
        "\\Comment{<iframe src=javascript:alert(1)>}\n\\end{algorithmic}\n\\end{algorithm}\n```",
    ),
    (
        "pseudocode-href-text",
        "```pseudocode\n\\begin{algorithmic}\n\\State \\href{javascript:alert(1)}{x}\n"
        "\\end{algorithmic}\n```",
    ),
    (
        "pseudocode-label-breakout",
        '```algorithm\n\\begin{algorithm}\n\\label{a"onclick="alert(1)}\n\\begin{algorithmic}\n'
        "\\State x\n\\end{algorithmic}\n\\end{algorithm}\n```",
    ),
    ("textbf-img", "\\textbf{<img src=x onerror=alert(1)>}"),
    ("textit-nested", "\\textit{\\emph{<svg onload=alert(1)>} [x](javascript:alert(1))}"),
    ("texttt-script", "\\texttt{<script>alert(1)</script>}"),
    ("ref-img", "\\ref{<img src=x onerror=alert(1)>}"),
    ("eqref-breakout", '\\eqref{x" onmouseover="alert(1)}'),
    ("cite-breakout", '\\cite{"><img src=x onerror=alert(1)>}'),
    ("cite-after-list", '{{< references bib="b" >}}\n\n\\cite{"><svg onload=alert(1)>}'),
    (
        "heading-toc",
        "# <img src=x onerror=alert(1)> \\cite{k}\n\n## <script>alert(1)</script> "
        '$\\href{javascript:alert(1)}{x}$\n\n### [x](javascript:alert(1)) {#"onclick}',
    ),
    ("heading-attr-list", '## Title {: onclick="alert(1)" style="background:url(javascript:x)" }'),
    (
        "footnote-body",
        "x[^a]\n\n[^a]: <img src=x onerror=alert(1)> [y](javascript:alert(1)) "
        "$\\url{javascript:alert(1)}$",
    ),
    (
        "table-math-code",
        "| a | b |\n|---|---|\n| $\\href{javascript:alert(1)}{x}$ | "
        "`<script>` <img src=x onerror=alert(1)> |\n{.table-academic}",
    ),
    ("deflist", "Term <svg onload=alert(1)>\n:   Def [x](javascript:alert(1))"),
]


# Placeholders (private-use characters) stand in for math, code and citations until `fill`,
# after the sanitiser ran: neither a real placeholder nor a forged one may complete a URL.
PLACEHOLDER_CASES = [
    ("empty-math-in-href", '<a href="java\\(\\)script:alert(1)">x</a>'),
    ("empty-math-leading-href", '<a href="\\(\\)javascript:alert(1)">x</a>'),
    ("empty-math-img-src", "![x](\\(\\)javascript:alert(1))"),
    ("cite-in-md-link", "[x](java\\cite{k}script:alert(1))"),
    ("ref-in-md-link", "[x](java\\ref{zz}script:alert(1))"),
    ("math-in-reference-def", "[x][r]\n\n[r]: java\\(\\)script:alert(1)"),
    ("stray-close-char", '<a href="java\ue001script:alert(1)">x</a>'),
    ("stray-fill-char", "[x](java\ue002script:alert(1))"),
    (
        "stray-char-in-button",
        '{{< promotion-textual buttonText="go" buttonLink="java\ue001script:alert(1)" >}}',
    ),
    (
        "forged-token-in-button",
        '{{< promotion-visual >}}\n\n{{< promotion-textual buttonText="go" '
        'buttonLink="java\ue0000\ue001script:alert(1)" >}}',
    ),
    ("stray-char-in-gallery", '{{< gallery-item image="java\ue001script:alert(1)" >}}'),
]


# --- Links that open a new tab --------------------------------------------------------------

BLANK_TARGET_CASES = [
    ("raw-relative", '<a href="/notes/x/" target="_blank">x</a>'),
    ("raw-protocol-relative", '<a href="//evil.example/" target="_blank">x</a>'),
    ("raw-opener", '<a href="/x" target="_blank" rel="opener">x</a>'),
    ("raw-upper-https", '<a href="HTTPS://evil.example/" target="_blank" rel="nofollow">x</a>'),
    ("raw-mailto", '<a href="mailto:a@b.example" target="_blank">x</a>'),
    ("md-attr-list", "[x](/notes/y/){: target=_blank }"),
    ("md-attr-list-opener", '[x](https://e.example){: target="_blank" rel="opener" }'),
    (
        "promotion-rel",
        '{{< promotion-textual buttonText="go" buttonLink="https://evil.example" '
        'rel="nofollow" >}}',
    ),
    (
        "promotion-rel-opener",
        '{{< promotion-textual buttonText="go" buttonLink="/x" rel="opener" >}}',
    ),
    ("gallery", '{{< gallery-item image="https://e.example/a.png" >}}'),
]
