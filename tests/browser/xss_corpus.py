"""The hostile strings of tests/browser/test_xss.py: every payload of the rendering engine's
XSS corpus (tests/markup/xss.py) as written and armed (its alert() turned into a
request to the beacon), the URLs the corpus tries to slip into links and images, as written,
decoded and armed, and the ways of fitting them into the fields that take them: cut to a
column's length, packed a few to a field, quoted as a shortcode argument, braced as a BibTeX
value."""

from __future__ import annotations

import html
import re

from tests.markup import xss as engine_corpus


def corpus() -> list[tuple[str, str]]:
    """Every (id, payload) of the rendering engine's XSS corpus."""
    lists = (
        engine_corpus.BODY_PAYLOADS,
        engine_corpus.MATH_PAYLOADS,
        engine_corpus.SHORTCODE_CASES,
        engine_corpus.ENGINE_CASES,
        engine_corpus.PLACEHOLDER_CASES,
        engine_corpus.BLANK_TARGET_CASES,
    )
    return [item for payloads in lists for item in payloads]


def armed(ident: str, payload: str, beacon: str) -> str:
    """The payload with its alert() calls turned into a request to the beacon."""
    call = f"fetch('{beacon}?p={ident}')"
    return payload.replace("alert(1)", call).replace("alert('XSS')", call)


def originals() -> list[str]:
    return [payload for _, payload in corpus()]


def hostile_strings(beacon: str) -> list[str]:
    """Each payload as written, and armed when arming changes it."""
    strings = []
    for ident, payload in corpus():
        strings.append(payload)
        loaded = armed(ident, payload, beacon)
        if loaded != payload:
            strings.append(loaded)
    return strings


# A URL inside a payload: an attribute value, a Markdown link or reference, a TeX link, an
# autolink. The Markdown pattern stops at the first ")", which the caller puts back.
_URL_IN_PAYLOAD = re.compile(
    r"""\b(?:href|src|action|formaction|data|to|buttonLink|link|image)\s*=\s*"""
    r"""(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([^\s>"']+))"""
    r"""|\]\(\s*<?([^)>]*)>?\s*\)|\\(?:href|url|includegraphics)\{([^}]*)\}"""
    r"""|^\[\w+\]:\s*(\S+)|<([a-z]+:[^>\s]*)>""",
    re.I | re.M,
)


def hostile_urls(beacon: str) -> list[str]:
    """The URLs the corpus tries to slip into links and images, for the fields that hold a URL
    (menu entries, bibliography url and doi, shortcode links): as written, with their HTML
    entities decoded (`jav&#x09;ascript:` stored as a real tab), and armed."""
    found = []
    for ident, payload in corpus():
        for match in _URL_IN_PAYLOAD.finditer(payload):
            url = next(group for group in match.groups() if group is not None)
            url += ")" * (url.count("(") - url.count(")"))
            found += [url, html.unescape(url), armed(ident, url, beacon)]
    return list(dict.fromkeys(url for url in found if url.strip()))


def fit(text: str, limit: int) -> str:
    """A payload cut to a column's length (the few longer than a short column lose their end)."""
    return text[:limit]


def packed(texts: list[str], limit: int, separator: str = " ") -> list[list[str]]:
    """The texts in order, grouped so that each group joined by `separator` fits `limit`."""
    groups: list[list[str]] = []
    for text in texts:
        text = fit(text, limit)
        if groups and len(separator.join([*groups[-1], text])) <= limit:
            groups[-1].append(text)
        else:
            groups.append([text])
    return groups


def shortcode_argument(text: str, *, one_line: bool = False) -> str:
    """A quoted shortcode argument holding `text`, quotes and backslashes escaped. Tabs and
    line breaks are kept (a browser drops them from a URL) unless `one_line`: a fence in a
    title would open a code block that swallows the shortcodes after it."""
    if one_line:
        text = text.replace("\r", " ").replace("\n", " ")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def bibtex_value(text: str) -> str:
    """`text` as a braced BibTeX value on one line, its unmatched braces dropped."""
    chars = list(" ".join(text.split()))
    opened: list[int] = []
    for index, char in enumerate(chars):
        if char == "{":
            opened.append(index)
        elif char == "}":
            if opened:
                opened.pop()
            else:
                chars[index] = ""
    for index in opened:
        chars[index] = ""
    return "{" + "".join(chars) + "}"
