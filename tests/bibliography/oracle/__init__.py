"""The citation-js oracle: the theme's formatting, run in Node (citation_js.js)."""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
from html import unescape
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
BUNDLE = ROOT / "node_modules" / "citation-js" / "build" / "citation.js"
_RIGHT_INLINE = re.compile(r'<div class="csl-right-inline">(.*?)</div>\s*</div>', re.DOTALL)
_ENTRY = re.compile(r'<div[^>]*class="csl-entry"[^>]*>(.*)</div>', re.DOTALL)
_TAG = re.compile(r"<[^>]+>")


def require_node() -> None:
    if shutil.which("node") is None or not BUNDLE.is_file():
        pytest.skip("the oracle needs node and node_modules/citation-js (npm ci)")


@functools.cache
def oracle(path: str, style: str = "vancouver", lang: str = "en-US", style_xml: str = "",
           locale_xml: str = "") -> dict:  # fmt: skip
    """citation-js's HTML of every entry of the file, formatted one by one as the theme does:
    Node runs once per file, style and locale per test session."""
    require_node()
    command = ["node", str(HERE / "citation_js.js"), path, style, lang]
    if style_xml or locale_xml:
        command += [style_xml or "", locale_xml or ""]
    done = subprocess.run(command, capture_output=True, text=True, check=True, timeout=600)
    return json.loads(done.stdout)


def text_of(markup: str) -> str:
    """The entry's text as a reader sees it: the csl-right-inline part when the style has a
    number column (the theme's CSS hides the number), tags dropped, entities decoded."""
    match = _RIGHT_INLINE.search(markup)
    if match is None:
        entry = _ENTRY.search(markup)
        markup = entry.group(1) if entry else markup
    else:
        markup = match.group(1)
    return " ".join(unescape(_TAG.sub("", markup)).split())
